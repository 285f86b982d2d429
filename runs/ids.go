package runs

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"unicode/utf8"
)

// Identifiers (runs-api §12, §9; controls.md §6.7, §8.1). Every id is a pure
// function of its inputs: two fresh emulators fed the same requests answer with
// the same ids. The hashes read strings as UTF-16 code units, as the seed
// package (JavaScript) did.

// DefaultProfile is the scope profile of a namespace without a custom scope (runs-api §9).
const DefaultProfile = "default"

// DefaultIdentity is the scope identity when no --api-key is configured (runs-api §9).
const DefaultIdentity = "unauthenticated-test-listener"

// tokenAlphabet is the 62-character alphabet of token (runs-api §12.1).
const tokenAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

const (
	fnvOffset = 0x811C9DC5 // 2166136261
	fnvPrime  = 0x01000193 // 16777619
)

// forEachUnit calls f with each UTF-16 code unit of the WTF-8 string s: a code
// point above U+FFFF yields its surrogate pair, a 3-byte surrogate sequence
// (WTF-8) yields that surrogate, and an invalid byte yields U+FFFD, as a
// replacement decoder would.
func forEachUnit(s string, f func(c uint32)) {
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			f(uint32(b))
			i++
			continue
		}
		if c, ok := wtf8SurrogateAt(s, i); ok {
			f(c)
			i += 3
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if r > 0xFFFF {
			r -= 0x10000
			f(0xD800 + uint32(r>>10))
			f(0xDC00 + uint32(r&0x3FF))
		} else {
			f(uint32(r))
		}
		i += w
	}
}

// wtf8SurrogateAt reports whether s[i:] starts with the WTF-8 encoding of a
// surrogate code point (ED A0–BF 80–BF) and returns it.
func wtf8SurrogateAt(s string, i int) (uint32, bool) {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return 0xD000 | uint32(s[i+1]&0x3F)<<6 | uint32(s[i+2]&0x3F), true
	}
	return 0, false
}

// fnvUnits continues a 32-bit FNV-1a hash h over the UTF-16 code units of s.
func fnvUnits(h uint32, s string) uint32 {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			forEachUnit(s[i:], func(c uint32) { h = (h ^ c) * fnvPrime })
			return h
		}
		h = (h ^ uint32(s[i])) * fnvPrime
	}
	return h
}

// FNV1a32 is 32-bit FNV-1a over the UTF-16 code units of s
// (h = 2166136261; for c: h = (h XOR c) * 16777619 mod 2^32), controls.md §6.7.
func FNV1a32(s string) uint32 { return fnvUnits(fnvOffset, s) }

// mixFinal is the avalanche step of mix (runs-api §12.1).
func mixFinal(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85EBCA6B
	h ^= h >> 13
	return h
}

// Mix is mix(s) of runs-api §12.1: FNV-1a over the UTF-16 code units of s
// followed by a murmur-style finalizer, all modulo 2^32.
func Mix(s string) uint32 { return mixFinal(FNV1a32(s)) }

// Token is token(input, length) of runs-api §12.1: characters of the 62-letter
// alphabet drawn five per round from mix(input + ":" + round), round = 0, 1, ….
// A length ≤ 0 gives "".
func Token(input string, length int) string {
	if length <= 0 {
		return ""
	}
	var small [32]byte
	out := small[:0]
	if length > len(small) {
		out = make([]byte, 0, length)
	}
	out = appendToken(out, fnvUnits(fnvOffset, input), length)
	return string(out)
}

// fnvASCII continues a 32-bit FNV-1a hash h over the ASCII bytes b.
func fnvASCII(h uint32, b []byte) uint32 {
	for _, c := range b {
		h = (h ^ uint32(c)) * fnvPrime
	}
	return h
}

// appendToken appends token(input, length) to dst, given the FNV-1a state after
// the code units of input: mix(input + ":" + round) only extends that state.
func appendToken(dst []byte, inputFNV uint32, length int) []byte {
	base := (inputFNV ^ ':') * fnvPrime
	var num [20]byte
	for round, n := 0, 0; n < length; round++ {
		h := mixFinal(fnvASCII(base, strconv.AppendInt(num[:0], int64(round), 10)))
		for k := 0; k < 5 && n < length; k++ {
			dst = append(dst, tokenAlphabet[h%62])
			h /= 62
			n++
		}
	}
	return dst
}

// appendHexASCII appends each byte of the ASCII text t as two lowercase hex
// digits (hex_ascii of runs-api §12.1).
func appendHexASCII(dst, t []byte) []byte {
	const digits = "0123456789abcdef"
	for _, c := range t {
		dst = append(dst, digits[c>>4], digits[c&15])
	}
	return dst
}

// hexToken is hex_ascii(token(prefix + storageNS + mid + decimal(n), 16)) after
// the literal head: 32 lowercase hex digits.
func hexToken(head, prefix, storageNS, mid string, n int64) string {
	h := fnvUnits(fnvUnits(fnvUnits(fnvOffset, prefix), storageNS), mid)
	var num [20]byte
	h = fnvASCII(h, strconv.AppendInt(num[:0], n, 10))
	var tok [16]byte
	t := appendToken(tok[:0], h, 16)
	var out [4 + 32]byte
	o := append(out[:0], head...)
	return string(appendHexASCII(o, t))
}

// StorageNS is the storage name of a namespace's main branch (runs-api §12.1):
// "hermes" for namespace "default", else "hermes:" + namespace.
func StorageNS(namespace string) string {
	if namespace == "default" {
		return "hermes"
	}
	return "hermes:" + namespace
}

// BranchStorageNS is the storage name of a branch of a namespace (runs-api
// §12.1): StorageNS(namespace) for branch "main", otherwise
// "hermes:branch_" + base36(FNV1a32("hermes\x00" + namespace + "\x00" + branch)).
// Example: branch "feature" of "default" → "hermes:branch_gej81s".
func BranchStorageNS(namespace, branch string) string {
	if branch == "main" {
		return StorageNS(namespace)
	}
	h := fnvUnits(fnvOffset, "hermes\x00")
	h = fnvUnits(h, namespace)
	h = (h ^ 0) * fnvPrime
	h = fnvUnits(h, branch)
	var b [14 + 7]byte
	return string(strconv.AppendUint(append(b[:0], "hermes:branch_"...), uint64(h), 36))
}

// RunID is the id of the n-th run created in a storage namespace (runs-api §12.1):
// "run_" + hex_ascii(token("hermes-runs:" + storageNS + ":run_:" + n, 16)).
// Example: RunID("hermes", 1) = "run_4e685a726271445348426a4a70783364".
func RunID(storageNS string, n int64) string {
	return hexToken("run_", "hermes-runs:", storageNS, ":run_:", n)
}

// ApprovalID is the k-th generated approval request_id of a storage namespace
// (runs-api §12.2): hex_ascii(token("hermes-approvals:" + storageNS + ":apr_:" + k, 16)).
func ApprovalID(storageNS string, k int64) string {
	return hexToken("", "hermes-approvals:", storageNS, ":apr_:", k)
}

// CounterBlock is how many ids one durable counter write reserves (CounterMark).
const CounterBlock = 1024

// CounterMark is the high-water mark to store for an id counter now at n
// when the store holds mark (runs-api §10.4: ids never repeat after a
// restart, which continues after the mark): mark while it covers n, else n
// plus CounterBlock, so that admissions write the mark once per block of
// ids, not once per run.
func CounterMark(n, mark int64) int64 {
	if n > mark {
		return n + CounterBlock
	}
	return mark
}

// CheckpointID is the id of the seq-th checkpoint of a timeline (controls.md §8.1):
// "cp_" + base36(seq), left-padded with '0' to 8 digits (longer when needed).
// Example: 10 → "cp_0000000a".
func CheckpointID(seq int64) string {
	var num [16]byte
	d := strconv.AppendInt(num[:0], seq, 36)
	var b [3 + 8 + 16]byte
	out := append(b[:0], "cp_"...)
	for i := len(d); i < 8; i++ {
		out = append(out, '0')
	}
	return string(append(out, d...))
}

// ScopeHash is the scope of a profile and identity (runs-api §9):
// lowercase hex SHA-256 of UTF-8(profile + "\x00" + identity).
// ScopeHash(DefaultProfile, DefaultIdentity) =
// "845264e061c6175ac63594c814e4c557f82d402d80b8e6a01e1568a41c9e6cf0".
func ScopeHash(profile, identity string) string {
	h := sha256.New()
	h.Write([]byte(profile))
	h.Write([]byte{0})
	h.Write([]byte(identity))
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}

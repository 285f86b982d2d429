package runs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// ErrLoneSurrogate is returned by Canonical and Fingerprint when a string or key
// of the body holds a lone surrogate, which CPython cannot encode as UTF-8; a
// keyed RunCreate answers it with 501 (runs-api §6.1 step 10).
var ErrLoneSurrogate = errors.New("runs: body holds a lone surrogate, which cannot be UTF-8 encoded")

// Canonical returns the text CPython produces for
//
//	json.dumps({"body": body, "gateway_session_key": memoryKey},
//	           sort_keys=True, separators=(",", ":"), ensure_ascii=False)
//
// (runs-api §8). memoryKey is the stripped header value as raw bytes, each byte
// one code point U+0000–U+00FF (Latin-1, wire.md §5); it is written as UTF-8.
// Keys are sorted by code point; strings escape \" \\ \b \f \n \r \t and other
// U+0000–U+001F as \u00xx, everything else is raw UTF-8; numbers follow wire.md
// §3.1. A lone surrogate anywhere in body gives ErrLoneSurrogate.
func Canonical(body Value, memoryKey string) ([]byte, error) {
	return appendCanonical(nil, body, memoryKey)
}

// Fingerprint is the lowercase hex SHA-256 of Canonical(body, memoryKey) (runs-api §8).
func Fingerprint(body Value, memoryKey string) (string, error) {
	bp := canonBufs.Get().(*[]byte)
	defer canonBufs.Put(bp)
	b, err := appendCanonical((*bp)[:0], body, memoryKey)
	if b != nil && cap(b) <= 64<<10 {
		*bp = b
	}
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], sum[:])
	return string(out[:]), nil
}

// canonBufs recycles the canonical-text buffers of Fingerprint.
var canonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func appendCanonical(dst []byte, body Value, memoryKey string) ([]byte, error) {
	dst = append(dst, `{"body":`...)
	dst, err := appendCanonValue(dst, body)
	if err != nil {
		return nil, err
	}
	dst = append(dst, `,"gateway_session_key":"`...)
	for i := 0; i < len(memoryKey); i++ {
		switch c := memoryKey[i]; {
		case c >= utf8.RuneSelf:
			dst = append(dst, 0xC0|c>>6, 0x80|c&0x3F)
		case c < 0x20 || c == '"' || c == '\\':
			dst = appendCtl(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, `"}`...), nil
}

func appendCanonValue(dst []byte, v Value) ([]byte, error) {
	var err error
	switch v.Kind {
	case String:
		return appendCanonString(dst, v.Str)
	case Array:
		dst = append(dst, '[')
		for i, e := range v.Arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendCanonValue(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case Object:
		dst = append(dst, '{')
		if v.Obj == nil {
			return append(dst, '}'), nil
		}
		keys, vals := v.Obj.Keys, v.Obj.Vals
		var scratch [16]int
		order := sortedKeys(keys, scratch[:0])
		for n := range len(keys) {
			i := n
			if order != nil {
				if n >= len(order) {
					break
				}
				i = order[n]
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendCanonString(dst, keys[i]); err != nil {
				return nil, err
			}
			dst = append(dst, ':')
			if dst, err = appendCanonValue(dst, vals[i]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	return AppendJSON(dst, v), nil
}

// sortedKeys returns the positions of keys in code-point order (byte order of
// UTF-8 and WTF-8 is code-point order), or nil when keys are already strictly
// ascending; order is scratch space to append to. Keys of a parsed object are
// unique; if a hand-built object repeats one, its last occurrence wins, as in a
// Python dict.
func sortedKeys(keys []string, order []int) []int {
	sorted := true
	for i := 1; i < len(keys); i++ {
		if keys[i-1] >= keys[i] {
			sorted = false
			break
		}
	}
	if sorted {
		return nil
	}
	for i := range keys {
		order = append(order, i)
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	out := order[:0]
	for n, i := range order {
		if n+1 < len(order) && keys[order[n+1]] == keys[i] {
			continue
		}
		out = append(out, i)
	}
	return out
}

// appendCanonString appends s quoted as CPython's ensure_ascii=False encoder
// does; this is the vendor escaping of wire.md §4.1 except that a lone
// surrogate is ErrLoneSurrogate.
func appendCanonString(dst []byte, s string) ([]byte, error) {
	if strings.Contains(s, "\xED") {
		for i := 0; i+1 < len(s); i++ {
			if s[i] == 0xED && s[i+1] >= 0xA0 {
				if _, _, lone := decodeWTF8(s[i:]); lone {
					return nil, ErrLoneSurrogate
				}
			}
		}
	}
	return appendJSONString(dst, s), nil
}

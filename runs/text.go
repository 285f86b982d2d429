package runs

import "unicode/utf8"

// Text rules of the Python value model (runs-api §1, wire.md §5). Strings are
// WTF-8 (see Value): a 3-byte surrogate sequence is one code point.

// isPySpace reports whether r is in the Python-strip set of runs-api §1
// (Python str.strip() whitespace).
func isPySpace(r rune) bool {
	switch {
	case r <= 0x20:
		return r >= 0x09 && r <= 0x0D || r >= 0x1C
	case r < 0x85:
		return false
	case r == 0x85, r == 0xA0, r == 0x1680,
		r >= 0x2000 && r <= 0x200A,
		r == 0x2028, r == 0x2029, r == 0x202F, r == 0x205F, r == 0x3000:
		return true
	}
	return false
}

// PyStrip is Python-strip (runs-api §1): s without its leading and trailing code
// points from U+0009–U+000D, U+001C–U+0020, U+0085, U+00A0, U+1680,
// U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000. Invalid bytes and
// surrogates are never stripped. The result is a substring of s.
func PyStrip(s string) string {
	i := 0
	for i < len(s) {
		r, w := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRuneInString(s[i:])
		}
		if !isPySpace(r) {
			break
		}
		i += w
	}
	j := len(s)
	for j > i {
		r, w := rune(s[j-1]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeLastRuneInString(s[i:j])
		}
		if !isPySpace(r) {
			break
		}
		j -= w
	}
	return s[i:j]
}

// isLatin1Space reports whether byte b, read as a Latin-1 code point, is in the
// Python-strip set.
func isLatin1Space(b byte) bool {
	return b >= 0x09 && b <= 0x0D || b >= 0x1C && b <= 0x20 || b == 0x85 || b == 0xA0
}

// PyStripLatin1 is Python-strip over a raw header value read as Latin-1, one byte
// per code point (runs-api §1, wire.md §5): it removes the bytes 0x09–0x0D,
// 0x1C–0x20, 0x85 and 0xA0 at both ends and returns the remaining bytes
// unchanged (a substring of raw). acceptance 48: "\x85delivery\x85" → "delivery".
func PyStripLatin1(raw string) string {
	i, j := 0, len(raw)
	for i < j && isLatin1Space(raw[i]) {
		i++
	}
	for j > i && isLatin1Space(raw[j-1]) {
		j--
	}
	return raw[i:j]
}

// cpWidth is the byte length of the code point starting at s[i] (i < len(s)):
// a valid UTF-8 sequence, a WTF-8 surrogate sequence (3), or one invalid byte (1).
func cpWidth(s string, i int) int {
	if s[i] < utf8.RuneSelf {
		return 1
	}
	if _, ok := wtf8SurrogateAt(s, i); ok {
		return 3
	}
	_, w := utf8.DecodeRuneInString(s[i:])
	return w
}

// CodePoints is the number of code points of the WTF-8 string s (Python len()):
// a 3-byte surrogate sequence counts 1 and an invalid byte counts 1.
func CodePoints(s string) int {
	n := 0
	for i := 0; i < len(s); n++ {
		i += cpWidth(s, i)
	}
	return n
}

// TruncateCodePoints returns the first n code points of s (Python s[:n] for
// n ≥ 0), counted as CodePoints counts them; s itself when it is not longer.
// A negative n gives "".
func TruncateCodePoints(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		i += cpWidth(s, i)
	}
	return s[:i]
}

// Seconds is now_s of runs-api §1 and §13: ms / 1000 as an IEEE-754 binary64
// division (1700000000125 → 1700000000.125).
func Seconds(ms float64) float64 { return ms / 1000 }

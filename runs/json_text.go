package runs

import "unicode/utf8"

// This file holds the byte-level text rules shared by the parser and the
// renderers: WHATWG UTF-8 decoding of request bodies (wire.md §2.1) and the
// WTF-8 reading of Value strings (value.go), where a lone surrogate code point
// is kept as its 3-byte generalized UTF-8 sequence.

// utf8BOM is the byte order mark removed once from the front of a body.
const utf8BOM = "\xEF\xBB\xBF"

// decodeBody turns request bytes into text as the WHATWG "UTF-8 decode"
// algorithm does (wire.md §2.1): one leading BOM is removed and every maximal
// invalid subpart becomes one U+FFFD. The result is always valid UTF-8. A body
// that is already valid is returned as it is (no copy).
func decodeBody(body []byte) []byte {
	if len(body) >= 3 && body[0] == 0xEF && body[1] == 0xBB && body[2] == 0xBF {
		body = body[3:]
	}
	if utf8.Valid(body) {
		return body
	}
	out := make([]byte, 0, len(body)+len(body)/2)
	for i := 0; i < len(body); {
		b := body[i]
		if b < utf8.RuneSelf {
			out = append(out, b)
			i++
			continue
		}
		if r, n := utf8.DecodeRune(body[i:]); r != utf8.RuneError || n > 1 {
			out = append(out, body[i:i+n]...)
			i += n
			continue
		}
		out = append(out, "\uFFFD"...)
		i += invalidLen(body[i:])
	}
	return out
}

// invalidLen is the length of the maximal invalid subpart at the front of p,
// which must not start with a valid UTF-8 sequence: a lead byte followed by the
// continuation bytes that still fit its WHATWG bounds, or a single byte.
func invalidLen(p []byte) int {
	need := 0
	lo, hi := byte(0x80), byte(0xBF)
	switch b := p[0]; {
	case b >= 0xC2 && b <= 0xDF:
		need = 1
	case b >= 0xE0 && b <= 0xEF:
		need = 2
		if b == 0xE0 {
			lo = 0xA0
		} else if b == 0xED {
			hi = 0x9F
		}
	case b >= 0xF0 && b <= 0xF4:
		need = 3
		if b == 0xF0 {
			lo = 0x90
		} else if b == 0xF4 {
			hi = 0x8F
		}
	default:
		return 1
	}
	n := 1
	for n <= need && n < len(p) && p[n] >= lo && p[n] <= hi {
		lo, hi = 0x80, 0xBF
		n++
	}
	return n
}

// appendWTF8 appends code point r (which may be a surrogate) in generalized UTF-8.
func appendWTF8(dst []byte, r rune) []byte {
	if r >= 0xD800 && r <= 0xDFFF {
		return append(dst, byte(0xE0|r>>12), byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
	}
	return utf8.AppendRune(dst, r)
}

// decodeWTF8 reads the code point at the front of s (non-empty, s[0] >= 0x80).
// lone is true when it is a WTF-8 lone surrogate (ED A0–BF 80–BF). Bytes that
// are neither UTF-8 nor a surrogate, which Parse never produces but a
// hand-built Value might hold, read as U+FFFD one byte at a time.
func decodeWTF8(s string) (r rune, size int, lone bool) {
	if len(s) >= 3 && s[0] == 0xED && s[1] >= 0xA0 && s[1] <= 0xBF && s[2] >= 0x80 && s[2] <= 0xBF {
		return 0xD000 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F), 3, true
	}
	r, size = utf8.DecodeRuneInString(s)
	return r, size, false
}

const hexDigits = "0123456789abcdef"

// appendU4 appends the escape \uXXXX of a BMP code unit with lowercase hex.
func appendU4(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}

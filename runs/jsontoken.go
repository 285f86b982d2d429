package runs

import (
	"bytes"
	"strconv"
)

// The tokens of Parse: strings (with their escapes) and numbers.

// readString reads a string body after its opening quote. Without escapes the
// result is a copy of its span of the text; with escapes it is built in p.buf.
func (p *jsonParser) readString() (string, error) {
	start := p.pos
	for i := p.pos; i < len(p.s); i++ {
		switch c := p.s[i]; {
		case c == '"':
			p.pos = i + 1
			return string(p.s[start:i]), nil
		case c == '\\':
			p.pos = i
			return p.readEscaped(start)
		case c < 0x20:
			p.pos = i
			return "", p.fail("control character in string")
		}
	}
	p.pos = len(p.s)
	return "", p.fail("unterminated string")
}

// readEscaped finishes a string that has an escape at p.pos; s[start:p.pos] is
// its plain prefix.
func (p *jsonParser) readEscaped(start int) (string, error) {
	b := append(p.buf[:0], p.s[start:p.pos]...)
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			p.buf = b
			return string(b), nil
		case c < 0x20:
			return "", p.fail("control character in string")
		case c != '\\':
			b = append(b, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.s) {
			p.pos = len(p.s)
			return "", p.fail("unterminated string")
		}
		e := p.s[p.pos+1]
		p.pos += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(p.s, p.pos)
			if !ok {
				return "", p.fail("invalid \\u escape")
			}
			p.pos += 4
			// A high surrogate followed by an escaped low surrogate is one
			// astral character; otherwise the next escape is read on its own
			// (Python's json.scanstring).
			if r >= 0xD800 && r <= 0xDBFF && p.pos+1 < len(p.s) && p.s[p.pos] == '\\' && p.s[p.pos+1] == 'u' {
				if r2, ok := hex4(p.s, p.pos+2); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
					r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
					p.pos += 6
				}
			}
			b = appendWTF8(b, r)
		default:
			p.pos -= 2
			return "", p.fail("invalid escape")
		}
	}
	return "", p.fail("unterminated string")
}

// hex4 reads four hex digits (either case) at s[i:].
func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// readNumber reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? (and, for
// ParseStored, Infinity / -Infinity).
func (p *jsonParser) readNumber() (Value, error) {
	s, start := p.s, p.pos
	i := start
	if i < len(s) && s[i] == '-' {
		i++
	}
	if p.stored && bytes.HasPrefix(s[i:], []byte("Infinity")) {
		p.pos = i + len("Infinity")
		if i > start {
			return FloatValue(negInf), nil
		}
		return FloatValue(posInf), nil
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = skipDigits(s, i+1)
	default:
		p.pos = i
		return Value{}, p.fail("invalid value")
	}
	isInt := true
	if i < len(s) && s[i] == '.' {
		j := skipDigits(s, i+1)
		if j == i+1 {
			p.pos = j
			return Value{}, p.fail("digit expected after '.'")
		}
		i, isInt = j, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := skipDigits(s, i)
		if j == i {
			p.pos = j
			return Value{}, p.fail("digit expected in exponent")
		}
		i, isInt = j, false
	}
	p.pos = i
	lex := string(s[start:i])
	if isInt {
		if lex == "-0" {
			lex = "0"
		}
		return Value{Kind: Int, Int: lex}, nil
	}
	// The lexeme is valid Go float syntax; a range error still yields the
	// correctly signed ±Inf (overflow) and underflow yields a signed zero.
	f, _ := strconv.ParseFloat(lex, 64)
	return Value{Kind: Float, Float: f}, nil
}

// skipDigits returns the index of the first non-digit at or after i.
func skipDigits(s []byte, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

package runs

import (
	"bytes"
	"sync"
	"unicode/utf8"
)

// AppendJSON appends the vendor rendering of v (wire.md §4.1): compact, object
// keys in Obj order, numbers per §3.1 (an Int as its decimal, a Float as
// FormatPyFloat, so ±Inf appear as the bare tokens Infinity / -Infinity), and
// strings with \" \\ \b \f \n \r \t, other U+0000–U+001F as \u00xx, lone
// surrogates as \udxxx (lowercase hex) and everything else as raw UTF-8.
func AppendJSON(dst []byte, v Value) []byte { return appendJSON(dst, v, false) }

// AppendSortedJSON is AppendJSON with the keys of every object, at every
// nesting level (inside arrays too), in ascending code point order (the byte
// order of UTF-8): the durable copy and hydration order of runs-api §4.2
// rule 3. v is not modified.
func AppendSortedJSON(dst []byte, v Value) []byte { return appendJSON(dst, v, true) }

func appendJSON(dst []byte, v Value, sorted bool) []byte {
	switch v.Kind {
	case Null:
		return append(dst, "null"...)
	case Bool:
		if v.Bool {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Int:
		return appendInt(dst, v.Int)
	case Float:
		return appendPyFloat(dst, v.Float)
	case String:
		return appendJSONString(dst, v.Str)
	case Array:
		dst = append(dst, '[')
		for i, e := range v.Arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, e, sorted)
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		if v.Obj == nil {
			return append(dst, '}')
		}
		var order []int // nil: in Obj order
		if sorted {
			order = sortedKeys(v.Obj.Keys, nil) // nil when already sorted
		}
		if order == nil {
			for i, k := range v.Obj.Keys {
				dst = appendEntry(dst, i, k, v.Obj.Vals[i], sorted)
			}
		}
		for i, j := range order {
			dst = appendEntry(dst, i, v.Obj.Keys[j], v.Obj.Vals[j], true)
		}
		return append(dst, '}')
	}
	return append(dst, "null"...)
}

// appendEntry appends the i-th entry of an object, k:v.
func appendEntry(dst []byte, i int, k string, v Value, sorted bool) []byte {
	if i > 0 {
		dst = append(dst, ',')
	}
	dst = appendJSONString(dst, k)
	dst = append(dst, ':')
	return appendJSON(dst, v, sorted)
}

// Rendered is the vendor rendering of o (AppendJSON) in a copy of its size:
// for a record kept for its run's life (a rendering appended from nil has up
// to twice the room).
func Rendered(o *Obj) []byte { return rendered(o, AppendJSON) }

// RenderedSorted is Rendered with the keys sorted at every level
// (AppendSortedJSON): a record's durable copy.
func RenderedSorted(o *Obj) []byte { return rendered(o, AppendSortedJSON) }

// scratch holds rendering buffers for reuse.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

func rendered(o *Obj, render func([]byte, Value) []byte) []byte {
	buf := scratch.Get().(*[]byte)
	b := render((*buf)[:0], ObjectValue(o))
	out := bytes.Clone(b)
	if cap(b) <= 64<<10 { // a huge record's buffer is not kept
		*buf = b
		scratch.Put(buf)
	}
	return out
}

// MarshalValue is AppendJSON(nil, v).
func MarshalValue(v Value) []byte { return AppendJSON(nil, v) }

// QuoteString returns s as a vendor JSON string with its quotes (wire.md §4.1),
// as used in error envelopes.
func QuoteString(s string) string { return string(appendJSONString(nil, s)) }

// appendInt appends an Int's canonical decimal ("0" for a malformed empty one).
func appendInt(dst []byte, n string) []byte {
	if n == "" {
		return append(dst, '0')
	}
	return append(dst, n...)
}

// shortEscape maps the characters with a two-character escape to its letter.
var shortEscape = [128]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// appendJSONString appends s quoted per wire.md §4.1. The same escaping is
// the fingerprint's (runs-api §8), except that there a lone surrogate is an error.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	done := 0 // s[:done] is written
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[done:i]...)
			dst = appendCtl(dst, c)
			i++
			done = i
			continue
		}
		r, n, lone := decodeWTF8(s[i:])
		if !lone && (r != utf8.RuneError || n > 1) {
			i += n
			continue
		}
		dst = append(dst, s[done:i]...)
		if lone {
			dst = appendU4(dst, r)
		} else {
			dst = append(dst, "\uFFFD"...)
		}
		i += n
		done = i
	}
	dst = append(dst, s[done:]...)
	return append(dst, '"')
}

// appendCtl appends the escape of an ASCII quote, backslash or C0 control.
func appendCtl(dst []byte, c byte) []byte {
	if e := shortEscape[c]; e != 0 {
		return append(dst, '\\', e)
	}
	return appendU4(dst, rune(c))
}

// AppendPython appends what CPython's json.dumps(v) prints with default options
// (wire.md §7): separators ", " and ": ", numbers per §3.1, and ensure_ascii
// strings — every character outside U+0020–U+007E escaped (\" \\ \n \r \t \b \f
// as two characters, others as \u00xx / \uxxxx lowercase, astral characters as
// a surrogate pair, a lone surrogate as \udxxx); "/" is not escaped.
func AppendPython(dst []byte, v Value) []byte {
	switch v.Kind {
	case String:
		return appendPyString(dst, v.Str)
	case Array:
		dst = append(dst, '[')
		for i, e := range v.Arr {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = AppendPython(dst, e)
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		if v.Obj != nil {
			for i, k := range v.Obj.Keys {
				if i > 0 {
					dst = append(dst, ", "...)
				}
				dst = appendPyString(dst, k)
				dst = append(dst, ": "...)
				dst = AppendPython(dst, v.Obj.Vals[i])
			}
		}
		return append(dst, '}')
	}
	return AppendJSON(dst, v)
}

// appendPyString appends s quoted with CPython's ensure_ascii escaping.
func appendPyString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	done := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c < 0x7F && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[done:i]...)
			dst = appendCtl(dst, c)
			i++
			done = i
			continue
		}
		dst = append(dst, s[done:i]...)
		r, n, _ := decodeWTF8(s[i:])
		if r >= 0x10000 {
			r -= 0x10000
			dst = appendU4(dst, 0xD800+r>>10)
			dst = appendU4(dst, 0xDC00+r&0x3FF)
		} else {
			dst = appendU4(dst, r)
		}
		i += n
		done = i
	}
	dst = append(dst, s[done:]...)
	return append(dst, '"')
}

package runs

import (
	"bytes"
	"strconv"
	"sync"
)

// MaxDepth is the deepest nesting of arrays and objects a body may have (wire.md §2.1, D1 (3)).
// A YAML scenario file has the same bound (package scenarios).
const MaxDepth = 1000

// bigObject is the key count from which an object being parsed indexes its keys
// in a map, so duplicate detection stays linear for objects with many keys.
const bigObject = 16

// syntaxError is the error of Parse and ParseStored. Callers map every parse
// failure to their operation's "invalid JSON" answer (wire.md §2.1), so the
// text is only a diagnostic; Offset counts bytes of the decoded text.
type syntaxError struct {
	Offset int
	Msg    string
}

func (e *syntaxError) Error() string {
	return "invalid JSON at offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Parse decodes a request body (wire.md §2.1) into the Python value model (wire.md §2.2).
//
// The bytes are decoded as UTF-8 with WHATWG replacement (one U+FFFD per
// maximal invalid subpart) after removing one leading BOM, then parsed as strict
// RFC 8259 JSON: whitespace is only space, tab, CR and LF; NaN, Infinity,
// comments, trailing commas, leading zeros and leading '+' are rejected, as are
// raw U+0000–U+001F in strings and an empty or whitespace-only text. Any value
// may be the root. Nesting deeper than 1000 arrays/objects is an error.
//
// Objects keep the order of first appearance; a duplicate key keeps its first
// position and its last value. A number lexeme without '.', 'e' or 'E' is an
// Int of any length in canonical decimal ("-0" → "0"); any other is the nearest
// binary64 (ties to even), ±Inf on overflow and a signed zero on underflow. A
// valid surrogate-pair escape is one astral character; an unpaired surrogate
// escape is kept as that code point in WTF-8 (see Value).
//
// Parse never panics and uses an explicit stack, so its Go stack use does not
// depend on the input. Every string and integer is copied out of body: no
// value refers to it.
func Parse(body []byte) (Value, error) {
	return parseText(decodeBody(body), false)
}

// ParseStored is Parse that also accepts the bare tokens Infinity and -Infinity
// as ±Inf floats, to read back records the emulator rendered itself (a record
// may echo a non-finite number, wire.md §3.1). NaN stays an error.
func ParseStored(text []byte) (Value, error) {
	return parseText(decodeBody(text), true)
}

// StoredRecord reads back a record the emulator rendered and stored itself
// (ParseStored). The stores hold only what this process wrote, so text that
// is not a JSON object is a bug: it panics (answered 500 by the gateway's lock
// wrapper).
func StoredRecord(text []byte) *Obj {
	v, err := ParseStored(text)
	if err != nil || v.Kind != Object {
		panic("runs: stored record does not parse: " + string(text))
	}
	return v.Obj
}

// parsers recycles the scratch stacks of finished parses.
var parsers = sync.Pool{New: func() any { return new(jsonParser) }}

// maxPooled and maxPooledDepth bound the scratch a parser keeps for reuse.
const (
	maxPooled      = 4096
	maxPooledDepth = 64
)

func parseText(s []byte, stored bool) (Value, error) {
	p := parsers.Get().(*jsonParser)
	p.s, p.pos, p.stored = s, 0, stored
	v, err := p.parse()
	// Drop references into the text and the values before pooling (closed
	// containers already cleared their part of keys and vals).
	if cap(p.stack) > maxPooledDepth || cap(p.keys) > maxPooled || cap(p.vals) > maxPooled || cap(p.buf) > 64*maxPooled {
		return v, err
	}
	clear(p.stack[:cap(p.stack)])
	clear(p.keys)
	clear(p.vals)
	p.s, p.stack, p.keys, p.vals = nil, p.stack[:0], p.keys[:0], p.vals[:0]
	parsers.Put(p)
	return v, err
}

// jsonFrame is one open array or object on the parser's stack. Its elements are
// kept on the parser's shared scratch stacks from index start on, and copied
// into an exactly sized slice when the container closes.
type jsonFrame struct {
	object bool
	start  int            // first index in jsonParser.vals
	kstart int            // first index in jsonParser.keys (object)
	key    string         // the key whose value is being parsed (object)
	index  map[string]int // key → position relative to start, once the object is big
}

type jsonParser struct {
	s      []byte // the text; strings are copied out of it, so no value refers to it
	pos    int
	stored bool
	stack  []jsonFrame
	keys   []string // keys of the open objects
	vals   []Value  // elements of the open containers
	buf    []byte   // scratch for strings with escapes
}

func (p *jsonParser) fail(msg string) error {
	return &syntaxError{Offset: p.pos, Msg: msg}
}

// literal reports whether the text at p.pos starts with lit.
func (p *jsonParser) literal(lit string) bool {
	return bytes.HasPrefix(p.s[p.pos:], []byte(lit))
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// parse runs the state machine: read a value; then, while containers are open,
// add it to the innermost one and read a separator or a closing bracket.
func (p *jsonParser) parse() (Value, error) {
	var v Value
	var err error
value:
	p.skipSpace()
	if p.pos >= len(p.s) {
		return Value{}, p.fail("unexpected end of input")
	}
	switch c := p.s[p.pos]; c {
	case '{', '[':
		if len(p.stack) >= MaxDepth {
			return Value{}, p.fail("nesting deeper than 1000")
		}
		p.pos++
		p.stack = append(p.stack, jsonFrame{object: c == '{', start: len(p.vals), kstart: len(p.keys)})
		p.skipSpace()
		if c == '[' {
			if p.pos < len(p.s) && p.s[p.pos] == ']' {
				p.pos++
				p.stack = p.stack[:len(p.stack)-1]
				v = Value{Kind: Array, Arr: []Value{}}
				break
			}
			goto value
		}
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			p.stack = p.stack[:len(p.stack)-1]
			v = Value{Kind: Object, Obj: &Obj{}}
			break
		}
		if err = p.readKey(); err != nil {
			return Value{}, err
		}
		goto value
	case '"':
		p.pos++
		var s string
		if s, err = p.readString(); err != nil {
			return Value{}, err
		}
		v = Value{Kind: String, Str: s}
	case 't':
		if !p.literal("true") {
			return Value{}, p.fail("invalid literal")
		}
		p.pos += 4
		v = Value{Kind: Bool, Bool: true}
	case 'f':
		if !p.literal("false") {
			return Value{}, p.fail("invalid literal")
		}
		p.pos += 5
		v = Value{Kind: Bool}
	case 'n':
		if !p.literal("null") {
			return Value{}, p.fail("invalid literal")
		}
		p.pos += 4
		v = Value{Kind: Null}
	default:
		if v, err = p.readNumber(); err != nil {
			return Value{}, err
		}
	}

	// v is complete: hand it to the innermost open container.
	for len(p.stack) > 0 {
		f := &p.stack[len(p.stack)-1]
		if f.object {
			p.setKey(f, v)
		} else {
			p.vals = append(p.vals, v)
		}
		p.skipSpace()
		if p.pos >= len(p.s) {
			return Value{}, p.fail("unexpected end of input")
		}
		c := p.s[p.pos]
		p.pos++
		switch {
		case c == ',':
			if f.object {
				p.skipSpace()
				if err = p.readKey(); err != nil {
					return Value{}, err
				}
			}
			goto value
		case c == ']' && !f.object:
			v = Value{Kind: Array, Arr: append([]Value(nil), p.vals[f.start:]...)}
			clear(p.vals[f.start:])
			p.vals = p.vals[:f.start]
		case c == '}' && f.object:
			n := len(p.vals) - f.start
			o := &Obj{Keys: make([]string, n), Vals: make([]Value, n)}
			copy(o.Keys, p.keys[f.kstart:])
			copy(o.Vals, p.vals[f.start:])
			clear(p.vals[f.start:])
			clear(p.keys[f.kstart:])
			p.vals = p.vals[:f.start]
			p.keys = p.keys[:f.kstart]
			v = Value{Kind: Object, Obj: o}
		default:
			p.pos--
			return Value{}, p.fail("expected ',' or a closing bracket")
		}
		p.stack = p.stack[:len(p.stack)-1]
	}
	p.skipSpace()
	if p.pos != len(p.s) {
		return Value{}, p.fail("extra data after the value")
	}
	return v, nil
}

// readKey reads `"key" :` at the current position into the innermost jsonFrame.
func (p *jsonParser) readKey() error {
	if p.pos >= len(p.s) || p.s[p.pos] != '"' {
		return p.fail("expected a string key")
	}
	p.pos++
	k, err := p.readString()
	if err != nil {
		return err
	}
	p.skipSpace()
	if p.pos >= len(p.s) || p.s[p.pos] != ':' {
		return p.fail("expected ':'")
	}
	p.pos++
	p.stack[len(p.stack)-1].key = k
	return nil
}

// setKey stores v under the jsonFrame's current key with Python dict semantics:
// a new key is appended, a repeated key keeps its position and takes v.
func (p *jsonParser) setKey(f *jsonFrame, v Value) {
	n := len(p.keys) - f.kstart
	if f.index != nil {
		if i, ok := f.index[f.key]; ok {
			p.vals[f.start+i] = v
			return
		}
		f.index[f.key] = n
	} else {
		for i, k := range p.keys[f.kstart:] {
			if k == f.key {
				p.vals[f.start+i] = v
				return
			}
		}
		if n+1 >= bigObject {
			f.index = make(map[string]int, 2*bigObject)
			for i, k := range p.keys[f.kstart:] {
				f.index[k] = i
			}
			f.index[f.key] = n
		}
	}
	p.keys = append(p.keys, f.key)
	p.vals = append(p.vals, v)
}

package admin

import "github.com/hermes-emulator/hermes-emulator/runs"

// obj builds a compact JSON object in key order (controls §1 "Responses"):
// computed numbers JavaScript-style, strings as the vendor renders them.
type obj struct{ b []byte }

func newObj() *obj { return &obj{b: []byte{'{'}} }

func (o *obj) key(k string) *obj {
	if len(o.b) > 1 {
		o.b = append(o.b, ',')
	}
	o.b = append(o.b, runs.QuoteString(k)...)
	o.b = append(o.b, ':')
	return o
}

func (o *obj) str(k, v string) *obj {
	o.key(k)
	o.b = append(o.b, runs.QuoteString(v)...)
	return o
}

func (o *obj) strOrNull(k, v string) *obj {
	if v == "" {
		return o.raw(k, "null")
	}
	return o.str(k, v)
}

func (o *obj) num(k string, v float64) *obj {
	o.key(k)
	o.b = append(o.b, runs.FormatJSNumber(v)...)
	return o
}

func (o *obj) boolean(k string, v bool) *obj {
	if v {
		return o.raw(k, "true")
	}
	return o.raw(k, "false")
}

func (o *obj) raw(k string, v string) *obj {
	o.key(k)
	o.b = append(o.b, v...)
	return o
}

func (o *obj) rawBytes(k string, v []byte) *obj {
	o.key(k)
	o.b = append(o.b, v...)
	return o
}

func (o *obj) bytes() []byte { return append(o.b, '}') }

func strArray(ss []string) []byte {
	b := []byte{'['}
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, runs.QuoteString(s)...)
	}
	return append(b, ']')
}

package runs

// Kind is the type of a JSON value in the Python value model (wire.md §2.2).
type Kind uint8

// The kinds of Value. Int and Float are distinct, as in Python: a number lexeme
// without '.', 'e' or 'E' is an arbitrary-precision integer, any other is a binary64.
const (
	Null Kind = iota
	Bool
	Int
	Float
	String
	Array
	Object
)

// Value is one parsed JSON value. Values are treated as immutable once built:
// code that changes a record builds a new Object (see Obj.With).
//
// Strings are held as WTF-8: valid UTF-8, except that a lone surrogate code point
// (U+D800–U+DFFF), which JSON escapes can produce, is encoded as its 3-byte
// generalized UTF-8 sequence. Renderers escape it; the fingerprint rejects it.
type Value struct {
	Kind  Kind
	Bool  bool
	Int   string  // canonical decimal ("0", "-12", "12345678901234567890") when Kind == Int
	Float float64 // when Kind == Float; may be ±Inf or -0
	Str   string  // WTF-8, when Kind == String
	Arr   []Value // when Kind == Array
	Obj   *Obj    // when Kind == Object; never nil for an Object
}

// Obj is an ordered JSON object: keys in order of first appearance, as a Python
// dict built by json.loads (a duplicate key keeps its first position and its last value).
type Obj struct {
	Keys []string
	Vals []Value
}

// Constructors for the common kinds.

// NullValue returns JSON null.
func NullValue() Value { return Value{Kind: Null} }

// BoolValue returns true or false.
func BoolValue(b bool) Value { return Value{Kind: Bool, Bool: b} }

// IntValue returns an integer from an int64.
func IntValue(n int64) Value { return Value{Kind: Int, Int: itoa(n)} }

// FloatValue returns a binary64 number.
func FloatValue(f float64) Value { return Value{Kind: Float, Float: f} }

// StringValue returns a string (UTF-8 or WTF-8).
func StringValue(s string) Value { return Value{Kind: String, Str: s} }

// ArrayValue returns an array of the given elements.
func ArrayValue(vs ...Value) Value {
	if vs == nil {
		vs = []Value{}
	}
	return Value{Kind: Array, Arr: vs}
}

// ObjectValue wraps o (a nil o becomes an empty object).
func ObjectValue(o *Obj) Value {
	if o == nil {
		o = &Obj{}
	}
	return Value{Kind: Object, Obj: o}
}

// Len is the number of keys.
func (o *Obj) Len() int { return len(o.Keys) }

// Index returns the position of key k, or -1.
func (o *Obj) Index(k string) int {
	for i, key := range o.Keys {
		if key == k {
			return i
		}
	}
	return -1
}

// Get returns the value of key k and whether it is present.
func (o *Obj) Get(k string) (Value, bool) {
	if i := o.Index(k); i >= 0 {
		return o.Vals[i], true
	}
	return Value{}, false
}

// Has reports whether key k is present.
func (o *Obj) Has(k string) bool { return o.Index(k) >= 0 }

// Clone returns a shallow copy that can be changed without touching o.
func (o *Obj) Clone() *Obj {
	return &Obj{Keys: append([]string(nil), o.Keys...), Vals: append([]Value(nil), o.Vals...)}
}

// Set writes k in place when it exists, else appends it (Python dict assignment).
// It changes o; call it on a clone.
func (o *Obj) Set(k string, v Value) {
	if i := o.Index(k); i >= 0 {
		o.Vals[i] = v
		return
	}
	o.Keys = append(o.Keys, k)
	o.Vals = append(o.Vals, v)
}

// Delete removes k when present (Python dict del). It changes o; call it on a clone.
func (o *Obj) Delete(k string) {
	if i := o.Index(k); i >= 0 {
		o.Keys = append(o.Keys[:i:i], o.Keys[i+1:]...)
		o.Vals = append(o.Vals[:i:i], o.Vals[i+1:]...)
	}
}

// Truthy reports Python truthiness (runs-api §1): null, false, integer 0, a float
// equal to zero, "", [] and {} are falsy; everything else is truthy.
func (v Value) Truthy() bool {
	switch v.Kind {
	case Null:
		return false
	case Bool:
		return v.Bool
	case Int:
		return v.Int != "0"
	case Float:
		return v.Float != 0
	case String:
		return v.Str != ""
	case Array:
		return len(v.Arr) > 0
	case Object:
		return v.Obj.Len() > 0
	}
	return false
}

// IsObject reports whether v is a plain object.
func (v Value) IsObject() bool { return v.Kind == Object }

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	var b [24]byte
	i := len(b)
	u := uint64(n)
	if neg {
		u = uint64(-n)
	}
	for u > 0 {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

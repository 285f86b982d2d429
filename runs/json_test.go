package runs

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Parse results are compared through MarshalValue: it keeps key order, tells
// an Int from a Float (1 vs 1.0) and shows lone surrogates as \udxxx.
func TestParseValid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"object", `{"input":"hi","n":1}`, `{"input":"hi","n":1}`},
		{"whitespace", " \t\r\n{ \"a\" :\n[ 1 , 2 ] }\r\n", `{"a":[1,2]}`},
		{"root string", `"x"`, `"x"`},
		{"root number", `12`, `12`},
		{"root literals", `[true,false,null]`, `[true,false,null]`},
		{"empty containers", `[{},[],{"a":{}}]`, `[{},[],{"a":{}}]`},
		{"nested in array", `[1,{"a":2,"b":[3,{"c":4}]},5]`, `[1,{"a":2,"b":[3,{"c":4}]},5]`},
		// wire.md §2.2: duplicate key keeps first position, last value.
		{"duplicate key", `{"a":1,"b":2,"a":3}`, `{"a":3,"b":2}`},
		{"duplicate nested", `{"x":{"k":1,"k":{"z":1}},"y":[{"k":1,"k":2}]}`, `{"x":{"k":{"z":1}},"y":[{"k":2}]}`},
		// Integers: arbitrary precision, canonical decimal.
		{"big int", `123456789012345678901234567890123456789`, `123456789012345678901234567890123456789`},
		{"big negative int", `-98765432109876543210`, `-98765432109876543210`},
		{"minus zero int", `-0`, `0`},
		{"int 2^53+1", `9007199254740993`, `9007199254740993`},
		// Floats.
		{"float 1.0", `1.0`, `1.0`},
		{"float 1e0", `1e0`, `1.0`},
		{"float 1E+2", `1E+2`, `100.0`},
		{"float minus zero", `-0.0`, `-0.0`},
		{"float minus zero exp", `-0e3`, `-0.0`},
		{"overflow", `1e999`, `Infinity`},
		{"negative overflow", `-1e999`, `-Infinity`},
		{"underflow", `1e-999`, `0.0`},
		{"negative underflow keeps sign", `-1e-999`, `-0.0`},
		{"2^53+1 as float", `9007199254740993.0`, `9007199254740992.0`},
		{"1e20", `1e20`, `1e+20`},
		// Strings.
		{"escapes", `"\"\\\/\b\f\n\r\t"`, `"\"\\/\b\f\n\r\t"`},
		{"unicode escapes either case", `"\u00E9\u00e9\u4E2D"`, `"éé中"`},
		{"escape of control", `"\u0000\u001f"`, `"\u0000\u001f"`},
		{"surrogate pair", `"\ud83d\ude00"`, `"😀"`},
		{"surrogate pair upper", `"\uD83D\uDE00"`, `"😀"`},
		{"lone high", `"a\ud800b"`, `"a\ud800b"`},
		{"lone low", `"\udc00"`, `"\udc00"`},
		{"low then high", `"\udc00\ud800"`, `"\udc00\ud800"`},
		{"high then non-low escape", `"\ud800\u0041"`, `"\ud800A"`},
		{"high high low", `"\ud83d\ud83d\ude00"`, `"\ud83d😀"`},
		{"high at end", `"\ud83d"`, `"\ud83d"`},
		{"high before escaped backslash", `"\ud83d\\ude00"`, `"\ud83d\\ude00"`},
		{"raw non-ascii", `"café 😀"`, `"café 😀"`},
		{"DEL raw", "\"\x7f\"", "\"\x7f\""},
		{"lone surrogate key", `{"\udfff":1}`, `{"\udfff":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got := string(MarshalValue(v)); got != tt.want {
				t.Errorf("Parse(%q) renders %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ``},
		{"whitespace only", " \t\r\n"},
		{"BOM only", "\xEF\xBB\xBF"},
		{"two BOMs", "\xEF\xBB\xBF\xEF\xBB\xBF{}"},
		// acceptance 190: NaN is Invalid JSON.
		{"NaN", `{"input":"x","n":NaN}`},
		{"Infinity", `Infinity`},
		{"minus Infinity", `[-Infinity]`},
		{"comment", `{"a":1 /* c */}`},
		{"line comment", "// c\n{}"},
		{"trailing comma array", `[1,]`},
		{"trailing comma object", `{"a":1,}`},
		{"single quotes", `{'a':1}`},
		{"leading zero", `01`},
		{"leading zero in array", `[00]`},
		{"negative leading zero", `-01`},
		{"leading plus", `+1`},
		{"bare minus", `-`},
		{"dot without digits", `1.`},
		{"dot first", `.5`},
		{"exponent without digits", `1e`},
		{"exponent sign only", `1e+`},
		{"hex", `0x10`},
		{"raw newline in string", "\"a\nb\""},
		{"raw NUL in string", "\"a\x00\""},
		{"raw tab in string", "\"a\tb\""},
		{"raw control after escape", "\"\\n\x1f\""},
		{"unterminated string", `"abc`},
		{"unterminated after escape", `"abc\`},
		{"bad escape", `"\x41"`},
		{"short unicode escape", `"\u12"`},
		{"bad hex", `"\u12g4"`},
		{"unquoted key", `{a:1}`},
		{"missing colon", `{"a" 1}`},
		{"missing value", `{"a":}`},
		{"missing comma", `[1 2]`},
		{"mismatched bracket", `[1}`},
		{"mismatched brace", `{"a":1]`},
		{"unclosed array", `[1,2`},
		{"unclosed object", `{"a":1`},
		{"extra data", `{} {}`},
		{"extra token", `1 2`},
		{"truncated literal", `tru`},
		{"capital literal", `True`},
		{"literal prefix", `nulls`},
		{"form feed whitespace", "\f1"},
		{"NBSP whitespace", "\u00a01"},
		{"vertical tab", "\v1"},
		{"invalid byte outside string", "\xFF{}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v, err := Parse([]byte(tt.in)); err == nil {
				t.Fatalf("Parse(%q) = %s, want an error", tt.in, MarshalValue(v))
			}
		})
	}
}

func TestParseErrorText(t *testing.T) {
	_, err := Parse([]byte(`[1,]`))
	if err == nil || err.Error() != "invalid JSON at offset 3: invalid value" {
		t.Fatalf("err = %v", err)
	}
}

// wire.md §2.1 step 1: WHATWG UTF-8 decoding with one U+FFFD per maximal invalid subpart.
func TestParseUTF8Replacement(t *testing.T) {
	tests := []struct {
		name string
		in   string // string body, between quotes
		want string
	}{
		{"61 FF 62", "a\xFFb", "a\uFFFDb"},
		{"truncated E2 82", "\xE2\x82", "\uFFFD"},
		{"truncated E2 82 then ascii", "\xE2\x82x", "\uFFFDx"},
		{"truncated 4-byte", "\xF0\x9F\x98", "\uFFFD"},
		{"lone continuation bytes", "\x80\x80", "\uFFFD\uFFFD"},
		{"encoded surrogate ED A0 80", "\xED\xA0\x80", "\uFFFD\uFFFD\uFFFD"},
		{"overlong C0 80", "\xC0\x80", "\uFFFD\uFFFD"},
		{"overlong E0 80 80", "\xE0\x80\x80", "\uFFFD\uFFFD\uFFFD"},
		{"above U+10FFFF", "\xF4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"F5", "\xF5", "\uFFFD"},
		{"E2 then valid", "\xE2\xC3\xA9", "\uFFFDé"},
		{"real U+FFFD kept", "\xEF\xBF\xBD", "\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Parse([]byte(`"` + tt.in + `"`))
			if err != nil {
				t.Fatal(err)
			}
			if v.Kind != String || v.Str != tt.want {
				t.Errorf("got %q, want %q", v.Str, tt.want)
			}
		})
	}
}

// acceptance 190: a BOM-prefixed body and a body with 0xFF inside a string both parse.
func TestParseBOMAndFF(t *testing.T) {
	v, err := Parse([]byte("\xEF\xBB\xBF{\"input\":\"x\"}"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(MarshalValue(v)); got != `{"input":"x"}` {
		t.Errorf("BOM body = %s", got)
	}
	v, err = Parse([]byte("{\"input\":\"a\xFFb\"}"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(MarshalValue(v)); got != "{\"input\":\"a\uFFFDb\"}" {
		t.Errorf("0xFF body = %s", got)
	}
}

func TestParseDepth(t *testing.T) {
	nest := func(n int, open, close, inner string) []byte {
		return []byte(strings.Repeat(open, n) + inner + strings.Repeat(close, n))
	}
	tests := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"1000 arrays", nest(1000, "[", "]", ""), true},
		{"1001 arrays", nest(1001, "[", "]", ""), false},
		{"1000 objects", nest(1000, `{"a":`, "}", "1"), true},
		{"1001 objects", nest(1001, `{"a":`, "}", "1"), false},
		{"999 arrays and an empty object", nest(999, "[", "]", "{}"), true},
		{"1000 arrays and an empty object", nest(1000, "[", "]", "{}"), false},
		{"100000 unclosed", nest(100000, "[", "", ""), false},
		{"100000 closed", nest(100000, "[", "]", ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestParseValueModel(t *testing.T) {
	v, err := Parse([]byte(`{"i":7,"f":7.5,"s":"x","t":true,"z":null,"a":[1]}`))
	if err != nil {
		t.Fatal(err)
	}
	o := v.Obj
	if v.Kind != Object || strings.Join(o.Keys, ",") != "i,f,s,t,z,a" {
		t.Fatalf("keys = %v", o.Keys)
	}
	want := []Value{IntValue(7), FloatValue(7.5), StringValue("x"), BoolValue(true), NullValue()}
	for i, w := range want {
		if o.Vals[i].Kind != w.Kind || o.Vals[i].Int != w.Int || o.Vals[i].Float != w.Float ||
			o.Vals[i].Str != w.Str || o.Vals[i].Bool != w.Bool {
			t.Errorf("value %q = %+v, want %+v", o.Keys[i], o.Vals[i], w)
		}
	}
	if a := o.Vals[5]; a.Kind != Array || len(a.Arr) != 1 || a.Arr[0].Int != "1" {
		t.Errorf("array = %+v", a)
	}
	v, _ = Parse([]byte(`-1e-999`))
	if v.Kind != Float || v.Float != 0 || !math.Signbit(v.Float) {
		t.Errorf("-1e-999 = %+v, want -0 float", v)
	}
	v, _ = Parse([]byte(`1e999`))
	if v.Kind != Float || !math.IsInf(v.Float, 1) {
		t.Errorf("1e999 = %+v, want +Inf", v)
	}
	v, _ = Parse([]byte(`"\ud800"`))
	if v.Str != "\xED\xA0\x80" {
		t.Errorf("lone surrogate stored as %q, want WTF-8 ED A0 80", v.Str)
	}
	v, _ = Parse([]byte(`"\udfff"`))
	if v.Str != "\xED\xBF\xBF" {
		t.Errorf("lone surrogate stored as %q, want WTF-8 ED BF BF", v.Str)
	}
}

// Objects with many keys, including duplicates after the map index starts.
func TestParseManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 5000; i++ {
		b.WriteString(`"k` + itoa(int64(i)) + `":` + itoa(int64(i)) + `,`)
	}
	b.WriteString(`"k0":"a","k20":"b","k4999":"c"}`)
	v, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	o := v.Obj
	if o.Len() != 5000 {
		t.Fatalf("len = %d", o.Len())
	}
	for _, c := range []struct {
		i    int
		key  string
		want string
	}{{0, "k0", `"a"`}, {1, "k1", `1`}, {20, "k20", `"b"`}, {4999, "k4999", `"c"`}, {15, "k15", "15"}} {
		if o.Keys[c.i] != c.key || string(MarshalValue(o.Vals[c.i])) != c.want {
			t.Errorf("entry %d = %s:%s, want %s:%s", c.i, o.Keys[c.i], MarshalValue(o.Vals[c.i]), c.key, c.want)
		}
	}
}

func TestParseStored(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{`{"session_id":Infinity,"x":-Infinity}`, `{"session_id":Infinity,"x":-Infinity}`, true},
		{`[Infinity]`, `[Infinity]`, true},
		{`NaN`, ``, false},
		{`-NaN`, ``, false},
		{`Infinit`, ``, false},
		{`+Infinity`, ``, false},
		{`-Infinityx`, ``, false},
		{`{"a":1}`, `{"a":1}`, true},
	}
	for _, tt := range tests {
		v, err := ParseStored([]byte(tt.in))
		if (err == nil) != tt.ok {
			t.Errorf("ParseStored(%q) err = %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if tt.ok && string(MarshalValue(v)) != tt.want {
			t.Errorf("ParseStored(%q) = %s, want %s", tt.in, MarshalValue(v), tt.want)
		}
	}
}

// wire.md §4.1 string escaping.
func TestAppendJSON(t *testing.T) {
	obj := &Obj{}
	obj.Set("b", IntValue(1))
	obj.Set("a", ArrayValue(FloatValue(1), FloatValue(math.Copysign(0, -1)), FloatValue(math.Inf(-1))))
	tests := []struct {
		name string
		v    Value
		want string
	}{
		{"object keeps order", ObjectValue(obj), `{"b":1,"a":[1.0,-0.0,-Infinity]}`},
		{"empty", ArrayValue(ObjectValue(nil), ArrayValue()), `[{},[]]`},
		{"escapes", StringValue("\"\\\b\f\n\r\t\x00\x01\x1f"), `"\"\\\b\f\n\r\t\u0000\u0001\u001f"`},
		{"raw", StringValue("/<>&\x7f\u2028\u2029é😀"), "\"/<>&\x7f\u2028\u2029é😀\""},
		{"lone surrogates", StringValue("a\xED\xA0\x80b\xED\xBF\xBF"), `"a\ud800b\udfff"`},
		{"invalid byte", StringValue("a\xFFb"), "\"a\uFFFDb\""},
		{"big int", Value{Kind: Int, Int: "12345678901234567890"}, `12345678901234567890`},
		{"float", FloatValue(1700000000), `1700000000.0`},
		{"null bool", ArrayValue(NullValue(), BoolValue(false)), `[null,false]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(AppendJSON([]byte("x"), tt.v)); got != "x"+tt.want {
				t.Errorf("got %s, want x%s", got, tt.want)
			}
		})
	}
	if got := QuoteString("Run not found: \"a\"\n"); got != `"Run not found: \"a\"\n"` {
		t.Errorf("QuoteString = %s", got)
	}
}

// wire.md §7: CPython json.dumps default output.
func TestAppendPython(t *testing.T) {
	ev := &Obj{}
	ev.Set("event", StringValue("message.delta"))
	ev.Set("timestamp", FloatValue(1700000000))
	ev.Set("delta", StringValue("café 😀"))
	usage := &Obj{}
	usage.Set("input_tokens", IntValue(812))
	usage.Set("output_tokens", IntValue(21))
	ev2 := &Obj{}
	ev2.Set("usage", ObjectValue(usage))
	ev2.Set("choices", ArrayValue(StringValue("once"), StringValue("deny")))
	ev2.Set("error", BoolValue(false))
	ev2.Set("x", NullValue())
	tests := []struct {
		name string
		v    Value
		want string
	}{
		{"delta frame", ObjectValue(ev), `{"event": "message.delta", "timestamp": 1700000000.0, "delta": "caf\u00e9 \ud83d\ude00"}`},
		{"nested", ObjectValue(ev2), `{"usage": {"input_tokens": 812, "output_tokens": 21}, "choices": ["once", "deny"], "error": false, "x": null}`},
		{"escapes", StringValue("\"\\\n\r\t\b\f\x00\x1f\x7f/"), `"\"\\\n\r\t\b\f\u0000\u001f\u007f/"`},
		{"non-ascii", StringValue("\u0080\u00ff\u2028\uffff\U0010FFFF"), `"\u0080\u00ff\u2028\uffff\udbff\udfff"`},
		{"lone surrogate", StringValue("\xED\xA0\x80"), `"\ud800"`},
		{"invalid byte", StringValue("\xFF"), `"\ufffd"`},
		{"numbers", ArrayValue(IntValue(-5), FloatValue(1e16), FloatValue(math.Inf(1))), `[-5, 1e+16, Infinity]`},
		{"empty", ArrayValue(ObjectValue(nil), ArrayValue()), `[{}, []]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(AppendPython(nil, tt.v)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// benchBody is a typical small RunCreate submission.
var benchBody = []byte(`{"input":"List the files in the project and summarise them.","session_id":"sess_01","model":"hermes-agent","instructions":"Be brief.","metadata":{"user":"u-42","trace":true,"priority":3,"ratio":0.75},"tools":["terminal","browser"]}`)

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		if _, err := Parse(benchBody); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	v, _ := Parse(benchBody)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendJSON(buf[:0], v)
	}
}

// The pooled parser state left by a failed parse does not leak into the next one.
func TestParseAfterError(t *testing.T) {
	bad := `[1,{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":[2,`
	for i := 0; i < 3; i++ {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Fatal("want an error")
		}
		v, err := Parse([]byte(`[3,{"k0":"x"}]`))
		if err != nil || string(MarshalValue(v)) != `[3,{"k0":"x"}]` {
			t.Fatalf("after error: %s, %v", MarshalValue(v), err)
		}
	}
}

// Concurrent parses share only the parser pool (run with -race).
func TestParseConcurrent(t *testing.T) {
	done := make(chan string, 8)
	for g := 0; g < 8; g++ {
		go func() {
			out := ""
			for i := 0; i < 200; i++ {
				v, err := Parse(benchBody)
				if err != nil {
					out = err.Error()
					break
				}
				if got := string(MarshalValue(v)); got != string(benchBody) {
					out = got
					break
				}
			}
			done <- out
		}()
	}
	for g := 0; g < 8; g++ {
		if out := <-done; out != "" {
			t.Errorf("concurrent parse: %s", out)
		}
	}
}

// StoredRecord reads back a stored object and panics on anything else (a bug).
func TestStoredRecord(t *testing.T) {
	if o := StoredRecord([]byte(`{"a":Infinity}`)); o.Len() != 1 {
		t.Fatalf("got %+v", o)
	}
	for _, text := range []string{`[1]`, `{"a":`, ``} {
		func() {
			defer func() {
				if p := recover(); p != "runs: stored record does not parse: "+text {
					t.Errorf("StoredRecord(%q) panicked with %v", text, p)
				}
			}()
			StoredRecord([]byte(text))
		}()
	}
	if e := Storage(errors.New("storage: apply: disk I/O error")); e.Status != 500 || e.Message != "storage: apply: disk I/O error" || e.Envelope != EnvInternal {
		t.Fatalf("Storage = %+v", e)
	}
}

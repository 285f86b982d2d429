package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	`{"input":"synthetic","n":1}`,
	`{"input":"x","dup":1,"dup":{"a":[1,2.5,-0,-0.0,1e999,-1e-999]}}`,
	`["\ud83d\ude00","\ud800","\udc00\ud800","\u00e9\/\b"]`,
	"\xEF\xBB\xBF{\"a\":\"\xFF\xE2\x82\"}",
	`[[[[[[[[[[{"a":[]}]]]]]]]]]]`,
	`123456789012345678901234567890`,
	`{"a":NaN}`,
	`[1,]`,
	` "\u0000" `,
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k3":"x"}`,
}

// FuzzParse checks that Parse never panics and is deterministic, that a parsed
// value survives a render/re-parse round trip unchanged, that Fingerprint is
// deterministic, and that on short valid UTF-8 (where the depth limit cannot
// apply) Parse accepts exactly what encoding/json accepts as RFC 8259 JSON.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := Parse(in)
		v2, err2 := Parse(in)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("Parse not deterministic: %v vs %v", err, err2)
		}
		if len(in) <= MaxDepth && utf8.Valid(in) && !bytes.HasPrefix(in, []byte(utf8BOM)) {
			if want := json.Valid(in); (err == nil) != want {
				t.Fatalf("Parse(%q) err = %v, encoding/json valid = %v", in, err, want)
			}
		}
		if err != nil {
			return
		}
		out := MarshalValue(v)
		if out2 := MarshalValue(v2); !bytes.Equal(out, out2) {
			t.Fatalf("Parse not deterministic: %s vs %s", out, out2)
		}
		back, err := ParseStored(out)
		if err != nil {
			t.Fatalf("rendering %q of %q does not re-parse: %v", out, in, err)
		}
		if again := MarshalValue(back); !bytes.Equal(out, again) {
			t.Fatalf("round trip of %q: %s became %s", in, out, again)
		}
		py := AppendPython(nil, v)
		for _, c := range py {
			if c >= 0x7F {
				t.Fatalf("AppendPython output is not ASCII: %q", py)
			}
		}
		if backPy, err := ParseStored(py); err != nil || !bytes.Equal(MarshalValue(backPy), out) {
			t.Fatalf("AppendPython %s re-parses to %s (%v), want %s", py, MarshalValue(backPy), err, out)
		}
		fp, err := Fingerprint(v, "memory")
		fp2, err2 := Fingerprint(v, "memory")
		if fp != fp2 || !errors.Is(err, err2) {
			t.Fatalf("Fingerprint not deterministic: %s %v / %s %v", fp, err, fp2, err2)
		}
	})
}

// FuzzFingerprint checks that Canonical is deterministic, is valid (stored)
// JSON and UTF-8, and is a fixed point: canonicalising the body read back from
// a canonical text gives the same text; and that the memory key is echoed as its
// Latin-1 code points.
func FuzzFingerprint(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), "memory")
	}
	f.Add([]byte(`{"input":"x"}`), "caf\xE9\x00\"\\")
	f.Fuzz(func(t *testing.T, in []byte, key string) {
		v, err := Parse(in)
		if err != nil {
			return
		}
		c1, err1 := Canonical(v, key)
		c2, err2 := Canonical(v, key)
		if !bytes.Equal(c1, c2) || !errors.Is(err1, err2) {
			t.Fatalf("Canonical not deterministic")
		}
		fp, errFP := Fingerprint(v, key)
		if errors.Is(err1, ErrLoneSurrogate) {
			if !errors.Is(errFP, ErrLoneSurrogate) || fp != "" {
				t.Fatalf("Fingerprint = %q, %v with a lone surrogate", fp, errFP)
			}
			return
		}
		if err1 != nil || errFP != nil {
			t.Fatalf("Canonical: %v, Fingerprint: %v", err1, errFP)
		}
		if len(fp) != 64 {
			t.Fatalf("Fingerprint = %q", fp)
		}
		if !utf8.Valid(c1) {
			t.Fatalf("canonical text is not UTF-8: %q", c1)
		}
		w, err := ParseStored(c1)
		if err != nil {
			t.Fatalf("canonical %q does not re-parse: %v", c1, err)
		}
		if w.Kind != Object || w.Obj.Len() != 2 || w.Obj.Keys[0] != "body" || w.Obj.Keys[1] != "gateway_session_key" {
			t.Fatalf("canonical %q has the wrong shape", c1)
		}
		var latin []rune
		for i := 0; i < len(key); i++ {
			latin = append(latin, rune(key[i]))
		}
		if got := w.Obj.Vals[1].Str; got != string(latin) {
			t.Fatalf("memory key %q echoed as %q", key, got)
		}
		c3, err := Canonical(w.Obj.Vals[0], key)
		if err != nil || !bytes.Equal(c1, c3) {
			t.Fatalf("canonical is not a fixed point:\n %s\n %s (%v)", c1, c3, err)
		}
	})
}

package runs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

type fingerprintVector struct {
	Raw       string `json:"raw"`
	MemoryKey string `json:"memoryKey"`
	Canonical string `json:"canonical"`
	SHA256    string `json:"sha256"`
	Note      string `json:"note"`
}

// latin1 turns a string of code points U+0000–U+00FF into the header bytes they
// stand for (wire.md §5).
func latin1(t *testing.T, s string) string {
	t.Helper()
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF {
			t.Fatalf("memory key %q has a code point above U+00FF", s)
		}
		b = append(b, byte(r))
	}
	return string(b)
}

// acceptance 55: every CPython vector matches byte for byte.
func TestFingerprintVectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "fingerprint.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []fingerprintVector `json:"vectors"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Vectors) != 86 {
		t.Fatalf("%d vectors, want 86", len(file.Vectors))
	}
	for i, vec := range file.Vectors {
		body, err := Parse([]byte(vec.Raw))
		if err != nil {
			t.Errorf("vector %d (%s): Parse(%q): %v", i, vec.Note, vec.Raw, err)
			continue
		}
		key := latin1(t, vec.MemoryKey)
		canon, err := Canonical(body, key)
		if err != nil {
			t.Errorf("vector %d (%s): Canonical: %v", i, vec.Note, err)
			continue
		}
		if string(canon) != vec.Canonical {
			t.Errorf("vector %d (%s) raw %q:\n got  %s\n want %s", i, vec.Note, vec.Raw, canon, vec.Canonical)
		}
		fp, err := Fingerprint(body, key)
		if err != nil || fp != vec.SHA256 {
			t.Errorf("vector %d (%s): Fingerprint = %s, %v; want %s", i, vec.Note, fp, err, vec.SHA256)
		}
	}
}

// acceptance 58: the extra example of runs-api §8.
func TestFingerprintExample(t *testing.T) {
	body, err := Parse([]byte(`{"input":"synthetic"}`))
	if err != nil {
		t.Fatal(err)
	}
	canon, err := Canonical(body, "")
	if err != nil || string(canon) != `{"body":{"input":"synthetic"},"gateway_session_key":""}` {
		t.Errorf("Canonical = %s, %v", canon, err)
	}
	fp, err := Fingerprint(body, "")
	if err != nil || fp != "30a49be905b3604101f917e0ddc2a7d92b1d530b26868d28c62c72d9814723d6" {
		t.Errorf("Fingerprint = %s, %v", fp, err)
	}
}

// acceptance 40 and the consequences listed in runs-api §8: which pairs of
// bodies replay (same fingerprint) and which conflict.
func TestFingerprintPairs(t *testing.T) {
	tests := []struct {
		name     string
		a, b     string
		keyA     string
		keyB     string
		sameHash bool
	}{
		{"1 vs 1.0", `{"input":"x","n":1}`, `{"input":"x","n":1.0}`, "", "", false},
		{"1.0 vs 1e0", `{"input":"x","n":1.0}`, `{"input":"x","n":1e0}`, "", "", true},
		{"-0 vs 0", `{"input":"x","n":-0}`, `{"input":"x","n":0}`, "", "", true},
		{"-0.0 vs 0.0", `{"input":"x","n":-0.0}`, `{"input":"x","n":0.0}`, "", "", false},
		{"2^53 vs 2^53+1", `{"input":"x","n":9007199254740992}`, `{"input":"x","n":9007199254740993}`, "", "", false},
		{"1e20 vs 100000000000000000000.0", `{"input":"x","n":1e20}`, `{"input":"x","n":100000000000000000000.0}`, "", "", true},
		{"key order", `{"input":"x","a":1,"b":{"c":1,"d":2}}`, `{"b":{"d":2,"c":1},"a":1,"input":"x"}`, "", "", true},
		{"whitespace", `{"input":"x"}`, " { \"input\" : \"x\" } ", "", "", true},
		{"escape vs raw", `{"input":"\u00e9\/"}`, `{"input":"é/"}`, "", "", true},
		{"duplicate key last wins", `{"input":"x","n":1,"n":2}`, `{"input":"x","n":2}`, "", "", true},
		{"array order", `{"input":"x","a":[1,2]}`, `{"input":"x","a":[2,1]}`, "", "", false},
		{"session_id changed", `{"input":"x","session_id":"a"}`, `{"input":"x","session_id":"b"}`, "", "", false},
		{"unknown field added", `{"input":"x"}`, `{"input":"x","extra":null}`, "", "", false},
		{"memory key changed", `{"input":"x"}`, `{"input":"x"}`, "memory", "other memory", false},
		{"memory key absent vs set", `{"input":"x"}`, `{"input":"x"}`, "", "m", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Parse([]byte(tt.a))
			if err != nil {
				t.Fatal(err)
			}
			b, err := Parse([]byte(tt.b))
			if err != nil {
				t.Fatal(err)
			}
			fa, errA := Fingerprint(a, tt.keyA)
			fb, errB := Fingerprint(b, tt.keyB)
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			if (fa == fb) != tt.sameHash {
				ca, _ := Canonical(a, tt.keyA)
				cb, _ := Canonical(b, tt.keyB)
				t.Errorf("same=%v, want %v\n a %s\n b %s", fa == fb, tt.sameHash, ca, cb)
			}
		})
	}
}

func TestCanonicalMemoryKeyLatin1(t *testing.T) {
	tests := []struct {
		key  string // raw header bytes
		want string
	}{
		{"memory", `"memory"`},
		{"caf\xE9", "\"caf\u00e9\""},
		{"\xFF\x80", "\"\u00ff\u0080\""},
		{"a\"b\\c", `"a\"b\\c"`},
		{"\x01\t\x7F", "\"\\u0001\\t\x7f\""},
	}
	body := StringValue("x")
	for _, tt := range tests {
		canon, err := Canonical(body, tt.key)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"body":"x","gateway_session_key":` + tt.want + `}`; string(canon) != want {
			t.Errorf("key %q: got %s, want %s", tt.key, canon, want)
		}
	}
}

func TestCanonicalEscapesAndSort(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"b":1,"a":2,"":3}`, `{"":3,"a":2,"b":1}`},
		// Code point order: U+E000 before U+10000 (UTF-16 order would differ).
		{`{"\ud800\udc00":1,"\ue000":2,"z":3,"é":4}`, "{\"z\":3,\"é\":4,\"\ue000\":2,\"\U00010000\":1}"},
		{`["\u0000\u001f\u007f\u2028\"\\\/\b\f\n\r\t"]`, "[\"\\u0000\\u001f\x7f\u2028\\\"\\\\/\\b\\f\\n\\r\\t\"]"},
		{`[1e999,-1e999,-0.0,1e16,0.0001,1e-5,-0,123456789012345678901234567890]`, `[Infinity,-Infinity,-0.0,1e+16,0.0001,1e-05,0,123456789012345678901234567890]`},
		{`[true,false,null,{},[]]`, `[true,false,null,{},[]]`},
	}
	for _, tt := range tests {
		v, err := Parse([]byte(tt.raw))
		if err != nil {
			t.Fatal(err)
		}
		canon, err := Canonical(v, "")
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"body":` + tt.want + `,"gateway_session_key":""}`; string(canon) != want {
			t.Errorf("%s:\n got  %s\n want %s", tt.raw, canon, want)
		}
	}
}

// A hand-built object with a repeated key canonicalises as a Python dict would.
func TestCanonicalRepeatedKeyLastWins(t *testing.T) {
	v := ObjectValue(&Obj{Keys: []string{"b", "a", "b"}, Vals: []Value{IntValue(1), IntValue(2), IntValue(3)}})
	canon, err := Canonical(v, "")
	if err != nil || string(canon) != `{"body":{"a":2,"b":3},"gateway_session_key":""}` {
		t.Errorf("Canonical = %s, %v", canon, err)
	}
}

func TestFingerprintLoneSurrogate(t *testing.T) {
	for _, raw := range []string{
		`{"input":"\ud800"}`,
		`{"input":"x","\udc00":1}`,
		`{"input":"x","a":[{"b":["ok","a\udfffb"]}]}`,
		`"\ud83d\u0041"`,
	} {
		v, err := Parse([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Canonical(v, "m"); !errors.Is(err, ErrLoneSurrogate) {
			t.Errorf("Canonical(%s) err = %v, want ErrLoneSurrogate", raw, err)
		}
		if fp, err := Fingerprint(v, "m"); !errors.Is(err, ErrLoneSurrogate) || fp != "" {
			t.Errorf("Fingerprint(%s) = %q, %v, want ErrLoneSurrogate", raw, fp, err)
		}
	}
	// A valid pair and a real U+D7FF / U+E000 are not lone surrogates.
	v, _ := Parse([]byte(`["\ud83d\ude00","\ud7ff\ue000"]`))
	if _, err := Canonical(v, ""); err != nil {
		t.Errorf("valid text: %v", err)
	}
}

func BenchmarkFingerprint(b *testing.B) {
	v, err := Parse(benchBody)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Fingerprint(v, "memory"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseFingerprint is the per-request cost of a keyed RunCreate body.
func BenchmarkParseFingerprint(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		v, err := Parse(benchBody)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Fingerprint(v, "memory"); err != nil {
			b.Fatal(err)
		}
	}
}

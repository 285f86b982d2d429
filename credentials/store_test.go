package credentials

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

func TestPut(t *testing.T) {
	const (
		entry    = "each entry is a credential string or {credential, namespace}"
		expected = `expected {"credentials": {"<credential>": "<namespace>"}}`
	)
	tests := []struct {
		name, body string
		want       string // 200 body, or the error message (400)
		err        bool
		list       string // GET afterwards
	}{
		// acceptance 207
		{name: "map", body: `{"credentials":{"sk-test-123456":"a"}}`, want: `{"mapped":1}`,
			list: `{"credentials":[{"credential":"sk-tes…56","namespace":"a"}]}`},
		{name: "array of strings", body: `["k2","k1"]`, want: `{"mapped":2}`,
			list: `{"credentials":[{"credential":"k1…","namespace":"adm"},{"credential":"k2…","namespace":"adm"}]}`},
		{name: "credentials array of mixed entries", body: `{"credentials":["abcdefghi",{"credential":"c1","namespace":"n1"},{"credential":"c2"},{"credential":"c3","namespace":null}]}`,
			want: `{"mapped":4}`,
			list: `{"credentials":[{"credential":"abcdef…hi","namespace":"adm"},{"credential":"c1…","namespace":"n1"},{"credential":"c2…","namespace":"adm"},{"credential":"c3…","namespace":"adm"}]}`},
		{name: "single object", body: `{"credential":"abcdefgh","namespace":"x.y-z_1"}`, want: `{"mapped":1}`,
			list: `{"credentials":[{"credential":"ab…","namespace":"x.y-z_1"}]}`},
		{name: "empty map", body: `{"credentials":{}}`, want: `{"mapped":0}`, list: `{"credentials":[]}`},
		{name: "later pair wins", body: `[{"credential":"k","namespace":"a"},{"credential":"k","namespace":"b"}]`, want: `{"mapped":2}`,
			list: `{"credentials":[{"credential":"k…","namespace":"b"}]}`},
		{name: "no body", body: ``, err: true, want: expected, list: `{"credentials":[]}`},
		{name: "string body", body: `"k"`, err: true, want: expected, list: `{"credentials":[]}`},
		{name: "object without credentials", body: `{"x":1}`, err: true, want: expected, list: `{"credentials":[]}`},
		{name: "credentials string", body: `{"credentials":"k"}`, err: true, want: expected, list: `{"credentials":[]}`},
		{name: "map value not a string", body: `{"credentials":{"k1":"a","k2":5}}`, err: true, want: "namespace for k2 must be a string",
			list: `{"credentials":[{"credential":"k1…","namespace":"a"}]}`},
		{name: "entry namespace not a string", body: `[{"credential":"k","namespace":1}]`, err: true, want: "namespace for k must be a string", list: `{"credentials":[]}`},
		{name: "entry number", body: `["k1",5]`, err: true, want: entry, list: `{"credentials":[{"credential":"k1…","namespace":"adm"}]}`},
		{name: "entry without credential", body: `[{"namespace":"a"}]`, err: true, want: entry, list: `{"credentials":[]}`},
		{name: "single object credential not a string", body: `{"credential":5}`, err: true, want: entry, list: `{"credentials":[]}`},
		{name: "bad namespace keeps earlier pairs", body: `{"credentials":{"k1":"a","k2":"b c","k3":"d"}}`, err: true, want: `bad namespace "b c"`,
			list: `{"credentials":[{"credential":"k1…","namespace":"a"}]}`},
		{name: "empty namespace", body: `[{"credential":"k","namespace":""}]`, err: true, want: `bad namespace ""`, list: `{"credentials":[]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore()
			var v runs.Value
			has := tc.body != ""
			if has {
				var err error
				if v, err = runs.Parse([]byte(tc.body)); err != nil {
					t.Fatal(err)
				}
			}
			out, err := s.Put("adm", v, has)
			switch {
			case tc.err && err == nil:
				t.Fatalf("got 200 %s, want 400 %q", out, tc.want)
			case tc.err && (err.Status != 400 || err.Message != tc.want || err.Envelope != runs.EnvAdmin):
				t.Fatalf("got %d %q, want 400 %q", err.Status, err.Message, tc.want)
			case !tc.err && err != nil:
				t.Fatalf("got %d %q", err.Status, err.Message)
			case !tc.err && string(out) != tc.want:
				t.Fatalf("got %s, want %s", out, tc.want)
			}
			if got := string(s.List()); got != tc.list {
				t.Fatalf("list %s\nwant %s", got, tc.list)
			}
		})
	}
}

// The mapping is bounded (hardening H3) and errors quote at most
// runs.EchoLimit bytes of what the client sent (H9).
func TestPutBounds(t *testing.T) {
	s := NewStore()
	put := func(body string) *runs.Error {
		t.Helper()
		v, err := runs.Parse([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		_, perr := s.Put("adm", v, true)
		return perr
	}
	long := strings.Repeat("c", MaxCredentialBytes+1)
	want := func(err *runs.Error, status int, msg string) {
		t.Helper()
		if err == nil || err.Status != status || err.Message != msg {
			t.Fatalf("got %+v, want %d %q", err, status, msg)
		}
	}
	want(put(`["`+long+`"]`), 400, "credential longer than 4096 bytes")
	want(put(`[{"credential":"`+long+`","namespace":1}]`), 400, "namespace for "+long[:runs.EchoLimit]+" must be a string")
	want(put(`[{"credential":"k","namespace":"`+long+`"}]`), 400, `bad namespace "`+long[:runs.EchoLimit]+`"`)
	var b strings.Builder
	b.WriteString("[")
	for i := range MaxCredentials {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d"`, i)
	}
	b.WriteString("]")
	if err := put(b.String()); err != nil {
		t.Fatal(err)
	}
	want(put(`["one-more"]`), 409, "too many credentials (max 10000)")
	if err := put(`[{"credential":"k0","namespace":"b"}]`); err != nil { // a mapped credential may move
		t.Fatal(err)
	}
}

func TestPutBadAdminNamespace(t *testing.T) {
	s := NewStore()
	v, _ := runs.Parse([]byte(`["k"]`))
	if _, err := s.Put("bad ns", v, true); err == nil || err.Message != `bad namespace "bad ns"` {
		t.Fatalf("got %+v", err)
	}
}

func TestMask(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "…"}, {"a", "a…"}, {"ab", "ab…"}, {"abcdefgh", "ab…"}, {"abcdefghi", "abcdef…hi"},
		{"sk-test-123456", "sk-tes…56"}, {"éèêëàâäôö", "éèêëàâ…ôö"},
	}
	for _, tc := range tests {
		if got := Mask(tc.in); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDelete(t *testing.T) {
	s := NewStore()
	v, _ := runs.Parse([]byte(`{"credentials":{"k1":"a","k2":"b"}}`))
	if _, err := s.Put("default", v, true); err != nil {
		t.Fatal(err)
	}
	s.Delete("k1", true)
	s.Delete("missing", true)
	if got, want := string(s.List()), `{"credentials":[{"credential":"k2…","namespace":"b"}]}`; got != want {
		t.Fatalf("after delete one: %s", got)
	}
	s.Delete("", false)
	if got := string(s.List()); got != `{"credentials":[]}` {
		t.Fatalf("after delete all: %s", got)
	}
}

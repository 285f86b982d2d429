package scenarios

import (
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

func TestSelect(t *testing.T) {
	set, err := Parse([]byte(`
scenarios:
  - name: deploy
    match: {input: "(?i)deploy", model: hermes-agent}
    steps: [{after: 0, deliver_steers: true}]
  - name: ci
    match: {session_id: "^ci-"}
    steps: [{after: 0, deliver_steers: true}]
  - name: rest
    steps: [{after: 0, deliver_steers: true}]
`))
	if err != nil {
		t.Fatal(err)
	}
	s := runs.StringValue
	for _, c := range []struct {
		text           string
		model, session runs.Value
		want           string
	}{
		{"Please DEPLOY it", s("hermes-agent"), s("run_1"), "deploy"},
		{"Please deploy it", s("other"), s("ci-7"), "ci"},
		{"Please deploy it", runs.NullValue(), s("run_1"), "rest"},
		{"hello", s("hermes-agent"), runs.IntValue(3), "rest"},
	} {
		if got := set.Select(c.text, c.model, c.session); got == nil || got.Name != c.want {
			t.Errorf("%q %v %v: got %v, want %s", c.text, c.model, c.session, got, c.want)
		}
	}
	var none *Set
	if none.Select("x", s(""), s("")) != nil || none.Len() != 0 || string(none.JSON()) != `{"scenarios":[]}` {
		t.Fatal("nil set")
	}
}

// submission is body (JSON) as a validated submission.
func submission(t *testing.T, body string) *runs.Submission {
	t.Helper()
	v, err := runs.Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	sub, serr := runs.ValidateSubmission(v)
	if serr != nil {
		t.Fatal(serr)
	}
	return sub
}

func TestMessageText(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"input":"deploy now"}`, "deploy now"},
		{`{"input":[{"role":"user","content":"first"},{"role":"user","content":"last"}]}`, "last"},
		{`{"input":[{"role":"user","content":["a",{"type":"input_text","text":"b"},{"type":"image","text":"c"},{"type":" TEXT ","text":"d"},""]}]}`, "a\nb\nd"},
		{`{"input":[{"role":"user","content":7}]}`, ""},
	} {
		if got := MessageText(submission(t, c.body).Message); got != c.want {
			t.Errorf("%s: %q, want %q", c.body, got, c.want)
		}
	}
}

// ForRun matches on what the run is admitted with: its message text, its
// model (hermes-agent when none is given) and its session_id (the run id when
// none is given).
func TestForRun(t *testing.T) {
	set, err := Parse([]byte(`
scenarios:
  - name: own-session
    match: {session_id: "^run_7$"}
    steps: [{after: 0, deliver_steers: true}]
  - name: default-model
    match: {input: "^go", model: hermes-agent}
    steps: [{after: 0, deliver_steers: true}]
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id, body, want string
	}{
		{"run_7", `{"input":"hello"}`, "own-session"},
		{"run_7", `{"input":"hello","session_id":"s"}`, ""},
		{"run_8", `{"input":"go now"}`, "default-model"},
		{"run_8", `{"input":"go now","model":"other"}`, ""},
	} {
		got := ""
		if sc := set.ForRun(c.id, submission(t, c.body)); sc != nil {
			got = sc.Name
		}
		if got != c.want {
			t.Errorf("%s %s: %q, want %q", c.id, c.body, got, c.want)
		}
	}
	var none *Set
	if none.ForRun("run_7", &runs.Submission{}) != nil {
		t.Fatal("a nil set matched")
	}
}

// Sets: a namespace's own set, else the default; a deletion hides the default
// too; at most max namespaces hold a set of their own (or its deletion).
func TestSets(t *testing.T) {
	def, own := &Set{}, &Set{}
	s := Sets{Default: def}
	if s.Of("a") != def {
		t.Fatal("no default")
	}
	for _, c := range []struct {
		ns  string
		set *Set
		err string
	}{
		{"a", own, ""},
		{"b", nil, ""},
		{"a", nil, ""}, // replacing one held: within the bound
		{"c", own, "too many namespaces with scenarios (max 2)"},
	} {
		err := s.Put(c.ns, c.set, 2)
		if got := ""; err != nil {
			got = err.Message
			if err.Status != 429 || got != c.err {
				t.Fatalf("Put(%s) = %+v, want %q", c.ns, err, c.err)
			}
		} else if c.err != "" {
			t.Fatalf("Put(%s) = nil, want %q", c.ns, c.err)
		}
	}
	for ns, want := range map[string]*Set{"a": nil, "b": nil, "c": def} {
		if got := s.Of(ns); got != want {
			t.Errorf("Of(%s) = %p, want %p", ns, got, want)
		}
	}
}

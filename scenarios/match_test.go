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

func TestMessageText(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"input":"deploy now"}`, "deploy now"},
		{`{"input":[{"role":"user","content":"first"},{"role":"user","content":"last"}]}`, "last"},
		{`{"input":[{"role":"user","content":["a",{"type":"input_text","text":"b"},{"type":"image","text":"c"},{"type":" TEXT ","text":"d"},""]}]}`, "a\nb\nd"},
		{`{"input":[{"role":"user","content":7}]}`, ""},
	} {
		v, err := runs.Parse([]byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		sub, serr := runs.ValidateSubmission(v)
		if serr != nil {
			t.Fatal(serr)
		}
		if got := MessageText(sub.Message); got != c.want {
			t.Errorf("%s: %q, want %q", c.body, got, c.want)
		}
	}
}

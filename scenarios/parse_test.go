package scenarios

import (
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// step wraps one step's JSON in a file with one scenario.
func step(s string) string {
	return `{"scenarios":[{"name":"a","steps":[{"after":0,"observe":{"status":"running"}},` + s + `]}]}`
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, msg string }{
		{`[]`, `expected {"scenarios":[...]}`},
		{`{"scenario":[]}`, `scenario: unsupported field`},
		{`{}`, `scenarios: expected a list of scenarios`},
		{`{"scenarios":{}}`, `scenarios: expected a list of scenarios`},
		{`{"scenarios":[1]}`, `scenarios[0]: expected an object`},
		{`{"scenarios":[{"name":"a","steps":[],"x":1}]}`, `scenarios[0].x: unsupported field`},
		{`{"scenarios":[{"steps":[]}]}`, `scenarios[0].name: must match /^[A-Za-z0-9_.-]{1,64}$/`},
		{`{"scenarios":[{"name":"a b","steps":[]}]}`, `scenarios[0].name: must match /^[A-Za-z0-9_.-]{1,64}$/`},
		// A name YAML reads as something else than a string says so.
		{"scenarios:\n  - name: 1\n    steps: []\n", `scenarios[0].name: expected a string (in YAML, quote a name such as 1, 1.0, true or null)`},
		{"scenarios:\n  - name: true\n    steps: []\n", `scenarios[0].name: expected a string (in YAML, quote a name such as 1, 1.0, true or null)`},
		{"scenarios:\n  - name:\n    steps: []\n", `scenarios[0].name: expected a string (in YAML, quote a name such as 1, 1.0, true or null)`},
		{"scenarios:\n  - name: \"1\"\n    steps: []\n", `scenarios[0].steps: expected a non-empty list of steps`},
		{`{"scenarios":[{"name":"` + strings.Repeat("a", 65) + `","steps":[]}]}`, `scenarios[0].name: must match /^[A-Za-z0-9_.-]{1,64}$/`},
		{`{"scenarios":[{"name":"a","steps":[{"after":0,"deliver_steers":true}]},{"name":"a","steps":[{"after":0,"deliver_steers":true}]}]}`, `scenarios[1].name: duplicate name "a"`},
		{`{"scenarios":[{"name":"a","match":[],"steps":[]}]}`, `scenarios[0].match: expected an object`},
		{`{"scenarios":[{"name":"a","match":{"path":"x"},"steps":[]}]}`, `scenarios[0].match.path: unsupported field`},
		{`{"scenarios":[{"name":"a","match":{"input":"("},"steps":[]}]}`, "scenarios[0].match.input: error parsing regexp: missing closing ): `(`"},
		{`{"scenarios":[{"name":"a","match":{"input":1},"steps":[]}]}`, `scenarios[0].match.input: expected a string`},
		{`{"scenarios":[{"name":"a","match":{"model":null},"steps":[]}]}`, `scenarios[0].match.model: expected a string`},
		{`{"scenarios":[{"name":"a","match":{"session_id":"[z-a]"},"steps":[]}]}`, "scenarios[0].match.session_id: error parsing regexp: invalid character class range: `z-a`"},
		{`{"scenarios":[{"name":"a"}]}`, `scenarios[0].steps: expected a non-empty list of steps`},
		{`{"scenarios":[{"name":"a","steps":[]}]}`, `scenarios[0].steps: expected a non-empty list of steps`},
		{step(`3`), `scenarios[0].steps[1]: expected an object`},
		{step(`{"after":0,"observe":{"status":"running"},"wait":1}`), `scenarios[0].steps[1].wait: unsupported field`},
		{step(`{"observe":{"status":"running"}}`), `scenarios[0].steps[1].after: ` + msgAfter},
		{step(`{"after":-1,"observe":{"status":"running"}}`), `scenarios[0].steps[1].after: ` + msgAfter},
		{step(`{"after":"-1s","observe":{"status":"running"}}`), `scenarios[0].steps[1].after: ` + msgAfter},
		{step(`{"after":"soon","observe":{"status":"running"}}`), `scenarios[0].steps[1].after: ` + msgAfter},
		{step(`{"after":1e400,"observe":{"status":"running"}}`), `scenarios[0].steps[1].after: ` + msgAfter},
		{step(`{"after":true,"observe":{"status":"running"}}`), `scenarios[0].steps[1].after: ` + msgAfter},
		// Finite and not negative, but past the bounds: the message names them.
		{step(`{"after":1e16,"observe":{"status":"running"}}`), `scenarios[0].steps[1].after: expected a duration such as "250ms" (at most 2562047h) or a number of milliseconds (at most 8.64e15), at least 0`},
		{step(`{"after":"9999999h","observe":{"status":"running"}}`), `scenarios[0].steps[1].after: expected a duration such as "250ms" (at most 2562047h) or a number of milliseconds (at most 8.64e15), at least 0`},
		{step(`{"after":0}`), `scenarios[0].steps[1]: ` + msgOneAction},
		{step(`{"after":0,"observe":{"status":"running"},"deliver_steers":true}`), `scenarios[0].steps[1]: ` + msgOneAction},
		// The observe control's own messages (controls §11.1).
		{step(`{"after":0,"observe":{"status":"done"}}`), `scenarios[0].steps[1].observe: expected a supported status`},
		{step(`{"after":0,"observe":{"status":"running","run_id":"x"}}`), `scenarios[0].steps[1].observe: unsupported field`},
		{step(`{"after":0,"observe":{"status":"running","output":"x"}}`), `scenarios[0].steps[1].observe: result fields require completed status`},
		{step(`{"after":0,"observe":{"status":"completed","usage":{"input_tokens":1}}}`), `scenarios[0].steps[1].observe: usage requires three nonnegative token counts`},
		{step(`{"after":0,"observe":{"status":"failed","error":1}}`), `scenarios[0].steps[1].observe: error must be a string`},
		// The events control's own messages (controls §11.2).
		{step(`{"after":0,"events":[]}`), `scenarios[0].steps[1].events: expected {"events":[...]} with at least one event`},
		{step(`{"after":0,"events":[{"event":"message.delta","delta":"a"},{"event":"run.completed"}]}`), `scenarios[0].steps[1].events[1]: unsupported event`},
		{step(`{"after":0,"events":[{"event":"tool.started"}]}`), `scenarios[0].steps[1].events[0]: tool must be a string`},
		{step(`{"after":0,"events":[{"event":"tool.completed","tool":"t","duration":"1s"}]}`), `scenarios[0].steps[1].events[0]: duration must be a number`},
		// Approval: an observation to waiting_for_approval.
		{step(`{"after":0,"approval":"yes"}`), `scenarios[0].steps[1].approval: expected an object`},
		{step(`{"after":0,"approval":{"request_id":" x"}}`), `scenarios[0].steps[1].approval: request_id must be a nonempty trimmed string of at most 256 characters`},
		{step(`{"after":0,"deliver_steers":false}`), `scenarios[0].steps[1].deliver_steers: expected true`},
		{`{"scenarios":[{"name":"a","steps":[{"after":0,"deliver_steers":true}],"if_denied":{}}]}`, `scenarios[0].if_denied: expected a list of steps`},
		{`{"scenarios":[{"name":"a","steps":[{"after":0,"deliver_steers":true}],"on_stop":[{"after":0,"observe":{"status":"cancelled","usage":{}}}]}]}`, `scenarios[0].on_stop[0].observe: result fields require completed status`},
		{`{"scenarios":[{"name":"a","steps":[{"after":0,"deliver_steers":true}],"steers":"drop"}]}`, `scenarios[0].steers: expected deliver or keep`},
		// A key or an expression from the file is echoed on one short line:
		// quoted when it is not a plain name, cut after 64 bytes.
		{`{"scenarios":[{"name":"a","steps":[],"x\ny":1}]}`, `scenarios[0]["x\ny"]: unsupported field`},
		{`{"scenarios":[{"name":"a","steps":[],"a.b":1}]}`, `scenarios[0]["a.b"]: unsupported field`},
		{`{"scenarios":[{"name":"a","steps":[],"":1}]}`, `scenarios[0][""]: unsupported field`},
		{`{"scenarios":[],"é":1}`, `["é"]: unsupported field`},
		{`{"scenarios":[{"name":"a","steps":[],"` + strings.Repeat("k", 100) + `":1}]}`, `scenarios[0]["` + strings.Repeat("k", 64) + `"…]: unsupported field`},
		{`{"scenarios":[{"name":"a","steps":[],"` + strings.Repeat("k", 63) + `é":1}]}`, `scenarios[0]["` + strings.Repeat("k", 63) + `"…]: unsupported field`},
		{`{"scenarios":[{"name":"a","match":{"input":"(deploy\n"},"steps":[]}]}`, `scenarios[0].match.input: error parsing regexp: missing closing ): "(deploy\n"`},
		{`{"scenarios":[{"name":"a","match":{"input":"(` + strings.Repeat("x", 100) + `"},"steps":[]}]}`, `scenarios[0].match.input: error parsing regexp: missing closing ): "(` + strings.Repeat("x", 63) + `"…`},
		{`{"scenarios":[`, `invalid JSON at offset 14: unexpected end of input`},
		{"scenarios:\n  - name: a\n   steps: []\n", `invalid YAML: line 1: did not find expected '-' indicator`},
		{"- a\n- b\n", `expected {"scenarios":[...]}`},
		// One file is one document: a second is refused, not left unread (an empty one holds nothing).
		{"scenarios: []\n---\nscenarios:\n  - {name: b, steps: [{after: 0, observe: {status: bogus}}]}\n", `invalid YAML: line 2: a second document (a scenario file is one)`},
		{"scenarios: []\n---\n- x\n", `invalid YAML: line 2: a second document (a scenario file is one)`},
		{"scenarios: []\n---\n[\n", `invalid YAML: line 3: did not find expected node content`},
		{"---\nscenarios: [1]\n---\n", `scenarios[0]: expected an object`},
		{"scenarios: [1]\n...\n", `scenarios[0]: expected an object`},
		{"", `expected {"scenarios":[...]}`},
		{"# nothing\n", `expected {"scenarios":[...]}`},
		// JSON has no NaN or infinity: a YAML float must be finite.
		{"scenarios:\n  - name: a\n    steps:\n      - after: 0\n        events: [{event: subagent.start, cost_usd: .nan}]\n", `invalid YAML: line 5: .nan is not a finite number`},
		{"scenarios:\n  - name: a\n    steps:\n      - after: -.Inf\n        observe: {status: running}\n", `invalid YAML: line 4: -.Inf is not a finite number`},
		{"scenarios:\n  - name: a\n    steps:\n      - after: 0\n        events: [{event: tool.completed, tool: t, duration: .inf}]\n", `invalid YAML: line 5: .inf is not a finite number`},
		// YAML keys are unique: a repeated one is refused, not read as a JSON
		// object's last value (the first steps list would go unread).
		{"scenarios:\n  - name: a\n    steps: [{after: 0, observe: {status: running}}]\n    match: {input: x}\n    steps: [{after: 0, observe: {status: failed}}]\n", `invalid YAML: line 5: mapping key "steps" already defined at line 3`},
		{"scenarios:\n  - name: a\n    steps: [{after: 0, observe: {status: completed, output: x, output: y}}]\n", `invalid YAML: line 3: mapping key "output" already defined at line 3`},
		{"scenarios:\n  - {name: a, steps: [{after: 0, deliver_steers: true}], 1: x, \"1\": y}\n", `invalid YAML: line 2: mapping key "1" already defined at line 2`},
		// An alias repeats a body; a merge key is not a merge (docs/scenarios.md).
		{"scenarios:\n  - name: a\n    steps:\n      - &s {after: 0, observe: {status: running}}\n      - {<<: *s, after: 1s}\n", `scenarios[0].steps[1]["<<"]: unsupported field`},
		{"scenarios:\n  - name: a\n    steps:\n      - {after: 0, observe: &o {status: running, output: x}}\n      - {after: 0, observe: *o}\n", `scenarios[0].steps[0].observe: result fields require completed status`},
	} {
		_, err := Parse([]byte(c.in))
		if err == nil {
			t.Errorf("%s: no error, want %q", c.in, c.msg)
			continue
		}
		if err.Message != c.msg || err.Status != 400 || err.Envelope != runs.EnvHermes || err.Code != "" {
			t.Errorf("%s:\n got %d %q %q\nwant 400 %q", c.in, err.Status, err.Code, err.Message, c.msg)
		}
	}
}

func TestParseBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"scenarios":[`)
	for i := 0; i <= MaxScenarios; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"name":"s` + itoa(i) + `","steps":[{"after":0,"deliver_steers":true}]}`)
	}
	b.WriteString(`]}`)
	if _, err := Parse([]byte(b.String())); err == nil || err.Message != "scenarios: at most 1000 scenarios" {
		t.Fatalf("got %v", err)
	}
	steps := strings.Repeat(`{"after":0,"deliver_steers":true},`, MaxSteps) + `{"after":0,"deliver_steers":true}`
	if _, err := Parse([]byte(`{"scenarios":[{"name":"a","steps":[` + steps + `]}]}`)); err == nil || err.Message != "scenarios[0].steps: at most 1000 steps" {
		t.Fatalf("got %v", err)
	}
	// A YAML alias bomb is refused, not expanded.
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
		"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
	if _, err := Parse([]byte(bomb)); err == nil || err.Message != errTooLarge.Error() {
		t.Fatalf("got %v", err)
	}
	// A JSON file or PUT body holds at most as many values as a YAML file
	// may expand to: a 4 MB body of a million numbers in an approval object
	// was kept (~80 MB a namespace), 2.4 million in 4.8 MB took ~300 MB.
	values := func(n int) string { // a set of n values in all
		return `{"scenarios":[{"name":"a","steps":[{"after":0,"approval":{"x":[` + strings.Repeat("0,", n-10) + `0]}}]}]}`
	}
	if _, err := Parse([]byte(values(maxValues))); err != nil {
		t.Fatalf("%d values: %v", maxValues, err)
	}
	if _, err := Parse([]byte(values(maxValues + 1))); err == nil || err.Message != "the set holds more than 1,000,000 values" {
		t.Fatalf("%d values: %v", maxValues+1, err)
	}
}

func itoa(i int) string { return runs.IntValue(int64(i)).Int }

const specExample = `
scenarios:
  - name: tool-approval-complete
    match:
      input: "(?i)deploy"
      model: hermes-agent
      session_id: "^ci-"
    steps:
      - after: 200ms
        observe: {status: running}
      - after: 100ms
        events:
          - {event: tool.started, tool: terminal, preview: "make deploy"}
      - after: 0s
        approval: {command: "make deploy", description: "deploy to staging"}
      - after: 1.5s
        events:
          - {event: tool.completed, tool: terminal, duration: 1.5}
          - {event: message.delta, delta: "Deployed."}
      - after: 500ms
        observe: {status: completed, output: "Deployed.", usage: {input_tokens: 12, output_tokens: 3, total_tokens: 15}}
    if_denied:
      - after: 0s
        observe: {status: failed, error: "approval denied"}
    on_stop:
      - after: 250ms
        observe: {status: cancelled}
    steers: deliver
  - name: fallback
    steps:
      - {after: 1000, deliver_steers: true}
`

func TestParseSpecExample(t *testing.T) {
	set, err := Parse([]byte(specExample))
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != 2 {
		t.Fatalf("len %d", set.Len())
	}
	sc := set.Scenarios[0]
	if sc.Name != "tool-approval-complete" || !sc.DeliverSteers || *sc.Match.Model != "hermes-agent" {
		t.Fatalf("%+v", sc)
	}
	var got []string
	for _, s := range sc.Steps {
		got = append(got, s.Action.String()+"@"+runs.FormatPyFloat(s.AfterMs)+" "+string(runs.MarshalValue(s.Body)))
	}
	want := []string{
		`observe@200.0 {"status":"running"}`,
		`events@100.0 {"events":[{"event":"tool.started","tool":"terminal","preview":"make deploy"}]}`,
		`approval@0.0 {"status":"waiting_for_approval","approval":{"command":"make deploy","description":"deploy to staging"}}`,
		`events@1500.0 {"events":[{"event":"tool.completed","tool":"terminal","duration":1.5},{"event":"message.delta","delta":"Deployed."}]}`,
		`observe@500.0 {"status":"completed","output":"Deployed.","usage":{"input_tokens":12,"output_tokens":3,"total_tokens":15}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(sc.OnStop) != 1 || sc.OnStop[0].AfterMs != 250 {
		t.Fatalf("on_stop %+v", sc.OnStop)
	}
	// Defaults of the second scenario (scenarios §3).
	fb := set.Scenarios[1]
	if fb.DeliverSteers || fb.Steps[0].AfterMs != 1000 || fb.Steps[0].Action != DeliverSteers {
		t.Fatalf("%+v", fb)
	}
	if b := string(runs.MarshalValue(fb.IfDenied[0].Body)); b != `{"status":"failed","error":"approval denied"}` || fb.IfDenied[0].AfterMs != 0 {
		t.Fatalf("if_denied default %s", b)
	}
	if b := string(runs.MarshalValue(fb.OnStop[0].Body)); b != `{"status":"cancelled"}` {
		t.Fatalf("on_stop default %s", b)
	}
	// The JSON form is the file's, and parses back to the same set.
	again, err := Parse(set.JSON())
	if err != nil || string(again.JSON()) != string(set.JSON()) {
		t.Fatalf("round trip: %v\n%s\n%s", err, set.JSON(), again.JSON())
	}
	if !strings.HasPrefix(string(set.JSON()), `{"scenarios":[{"name":"tool-approval-complete","match":{"input":"(?i)deploy",`) {
		t.Fatalf("json %s", set.JSON())
	}
}

func TestAfter(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
	}{
		{`"0s"`, 0}, {`"250ms"`, 250}, {`"1.5s"`, 1500}, {`"2m"`, 120000}, {`"1h30m"`, 5400000},
		{`"1us"`, 0.001}, {`0`, 0}, {`250`, 250}, {`2.5`, 2.5}, {`-0.0`, 0}, {`8.64e15`, 8.64e15},
	} {
		set, err := Parse([]byte(`{"scenarios":[{"name":"a","steps":[{"after":` + c.in + `,"deliver_steers":true}]}]}`))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got := set.Scenarios[0].Steps[0].AfterMs; got != c.want {
			t.Errorf("%s: %v, want %v", c.in, got, c.want)
		}
	}
}

func TestYAMLValues(t *testing.T) {
	// YAML scalars take the JSON value model: ints stay ints (beyond int64 too),
	// floats stay floats, and everything else is a string.
	in := "a: 1\nb: 1.0\nc: 0x10\nd: 12345678901234567890\ne: null\nf: true\ng: 2001-12-14\nh: ~\ni: \"2\"\nj: [1, {k: v}]\n"
	v, err := decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":1,"b":1.0,"c":16,"d":12345678901234567890,"e":null,"f":true,"g":"2001-12-14","h":null,"i":"2","j":[1,{"k":"v"}]}`
	if got := string(runs.AppendPython(nil, v)); got != strings.NewReplacer(",", ", ", ":", ": ").Replace(want) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// A YAML file nests at most as deep as a JSON body may (runs.MaxDepth), so
// its JSON form (GET /__admin/hermes/scenarios) is one PUT takes: yaml.v3
// alone allowed 10,000, and a set nested 5,000 deep was loaded whose GET the
// PUT refused. Nesting through an alias counts where the alias stands.
func TestYAMLDepthIsJSONs(t *testing.T) {
	nested := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct {
		name, in, msg string
	}{
		{"JSON, 1000 deep", `{"scenarios":` + nested(999) + `}`, `scenarios[0]: expected an object`},
		{"YAML, 1000 deep", "scenarios: " + nested(999) + "\n", `scenarios[0]: expected an object`},
		{"JSON, 1001 deep", `{"scenarios":` + nested(1000) + `}`, `invalid JSON at offset 1012: nesting deeper than 1000`},
		{"YAML, 1001 deep", "scenarios: " + nested(1000) + "\n", `invalid YAML: line 1: nesting deeper than 1000`},
		{"YAML, 1001 deep through an alias", "a: &a " + nested(999) + "\nscenarios: [*a]\n", `invalid YAML: line 1: nesting deeper than 1000`},
	} {
		_, err := Parse([]byte(c.in))
		if err == nil || err.Message != c.msg {
			t.Errorf("%s: %v, want %q", c.name, err, c.msg)
		}
	}
}

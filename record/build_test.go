package record

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

// o parses a JSON object for a synthetic observation.
func o(t *testing.T, s string) *runs.Obj {
	t.Helper()
	v, err := runs.Parse([]byte(s))
	if err != nil || v.Kind != runs.Object {
		t.Fatalf("bad object %s: %v", s, err)
	}
	return v.Obj
}

// rec is a polled record of status at upstream time at (seconds after 100).
func rec(t *testing.T, status string, at float64, extra string) *runs.Obj {
	t.Helper()
	return o(t, `{"object":"hermes.run","run_id":"run_1","status":"`+status+`","updated_at":`+
		runs.FormatPyFloat(100+at)+`,"created_at":100.0`+extra+`}`)
}

// render builds the scenario of one synthetic run and returns its YAML
// without the file header.
func render(t *testing.T, l *runLog, opts buildOptions) string {
	t.Helper()
	if opts.speed == 0 {
		opts.speed = 1
	}
	if opts.match == "" {
		opts.match = MatchInput
	}
	out := string(writeFile(nil, buildScenarios([]*runLog{l}, opts)))
	out = strings.TrimPrefix(out, "scenarios:\n")
	return out[strings.Index(out, "\n")+1:] // without "# upstream run …"
}

func TestTimelineCases(t *testing.T) {
	// Local times run 50 s ahead of the upstream's clock (offset 50).
	cases := []struct {
		name string
		log  func() *runLog
		want string
	}{
		{"an answer nobody saw echoed is placed at its arrival, moved by the offset",
			func() *runLog {
				return &runLog{seq: 1, runID: "run_1", admitted: 150, input: "go", hasInput: true, obs: []observation{
					{kind: obsRecord, at: 150, body: rec(t, "queued", 0, "")},
					{kind: obsRecord, at: 151, body: rec(t, "waiting_for_approval", 1,
						`,"approval":{"command":"ls","request_id":"r1","event":"approval.request","run_id":"run_1","timestamp":101.0,"choices":["once","deny"]}`)},
					{kind: obsAnswer, at: 153, body: o(t, `{"object":"hermes.run.approval_response","run_id":"run_1","choice":"once","resolved":1}`)},
					{kind: obsRecord, at: 154.5, body: rec(t, "completed", 4.5, `,"output":"","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}`)},
				}}
			},
			`  - name: "rec-001"
    match: {"input": "^go$"}
    steps:
      - after: 1s
        approval: {"command": "ls", "request_id": "r1"}
      - after: 1.5s
        observe: {"status": "completed", "output": "", "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}}
`},
		{"a stop with nothing seen after it, a deny with nothing after it: empty lists",
			func() *runLog {
				return &runLog{seq: 2, runID: "run_1", admitted: 150, obs: []observation{
					{kind: obsFrame, at: 150.2, body: o(t, `{"command":"x","request_id":"r1","event":"approval.request","run_id":"run_1","timestamp":100.2,"choices":["once","deny"]}`)},
					{kind: obsAnswer, at: 150.3, body: o(t, `{"choice":"deny"}`)},
					{kind: obsFrame, at: 150.3, body: o(t, `{"event":"approval.responded","run_id":"run_1","timestamp":100.3,"choice":"deny","resolved":1}`)},
					{kind: obsStop, at: 150.4},
				}}
			},
			`  # the user message is not a text: matched by admission order
  # matched by admission order: run 2 of namespace default
  - name: "rec-002"
    match: {"session_id": "^run_57703349705258663741626769756c5a$"}
    steps:
      - after: 200ms
        approval: {"command": "x", "request_id": "r1"}
    if_denied: []
    on_stop: []
`},
		{"delivered steers, a custom last_event, an unscriptable frame, a failed run's error",
			func() *runLog {
				return &runLog{seq: 1, runID: "run_1", admitted: 150, input: "a\nb", hasInput: true, obs: []observation{
					{kind: obsRecord, at: 150, body: rec(t, "running", 0.25, `,"last_event":"run.started"`)},
					{kind: obsSteer, at: 150.3, text: "more"},
					{kind: obsFrame, at: 150.4, body: o(t, `{"event":"reasoning.delta","run_id":"run_1","timestamp":100.4,"text":"h"}`)},
					{kind: obsFrame, at: 150.5, body: o(t, `{"event":"run.completed","run_id":"run_1","timestamp":100.5,"output":"ok","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`)},
					{kind: obsRecord, at: 150.6, body: rec(t, "completed", 0.5, `,"last_event":"agent.done","output":"ok","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}`)},
				}}
			},
			`  # 1 event frame(s) left out: not scriptable by the events control
  - name: "rec-001"
    match: {"input": "^a\nb$"}
    steps:
      - after: 250ms
        observe: {"status": "running", "last_event": "run.started"}
      - after: 250ms
        observe: {"status": "completed", "output": "ok", "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}, "last_event": "agent.done"}
    steers: deliver
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := render(t, c.log(), buildOptions{})
			if got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestDuplicateInputs(t *testing.T) {
	logs := []*runLog{
		{seq: 1, runID: "run_a", input: "same", hasInput: true},
		{seq: 2, runID: "run_b", input: "same", hasInput: true},
	}
	ss := buildScenarios(logs, buildOptions{speed: 1, match: MatchInput})
	if c := ss[1].Comment; len(c) != 2 || c[1] != "never selected with --match input: rec-001 has the same input and comes first" {
		t.Errorf("comment: %q", c)
	}
}

func TestInputPattern(t *testing.T) {
	long := strings.Repeat("é", 1001)
	for _, c := range []struct {
		in     string
		redact bool
		want   string
	}{
		{"deploy (v1.2)?", false, `^deploy \(v1\.2\)\?$`},
		{"café ok", true, `^(?s:.{7})$`},
		{long, true, `^(?s:.{1000,})$`},
	} {
		if got := inputPattern(c.in, c.redact); got != c.want {
			t.Errorf("inputPattern(%.20q, %v) = %q, want %q", c.in, c.redact, got, c.want)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                              `"plain"`,
		"a\"b\\c\n\t\r":                      `"a\"b\\c\n\t\r"`,
		"\x00\x1f\x7f":                       `"\u0000\u001f\u007f"`,
		"nel\u0085ls\u2028ps\u2029bom\ufeff": `"nel\u0085ls\u2028ps\u2029bom\ufeff"`,
		"café 😀 ✓":                           `"café 😀 ✓"`,
		"lone\xed\xa0\x80":                   "\"lone\ufffd\ufffd\ufffd\"",
	} {
		got := quote(in)
		if got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
		var back string
		if !strings.HasPrefix(in, "lone") && (json.Unmarshal([]byte(got), &back) != nil || back != in) {
			t.Errorf("quote(%q) does not read back as JSON: %q", in, back)
		}
	}
}

func TestRedactStep(t *testing.T) {
	s := redactStep(Step{Action: ActApproval, Body: runs.ObjectValue(o(t, `{"command":"rm -rf ✓","pattern_keys":["rm"],"allow_session":false,"request_id":"r1"}`))})
	if got := flow(s.Body); got != `{"command": "xxxxxxxx", "pattern_keys": ["xx"], "allow_session": false, "request_id": "r1"}` {
		t.Errorf("approval: %s", got)
	}
	s = redactStep(Step{Action: ActEvents, Body: runs.ArrayValue(runs.ObjectValue(o(t, `{"event":"tool.started","tool":"terminal","preview":null}`)),
		runs.ObjectValue(o(t, `{"event":"subagent.complete","summary":"did it","task_count":2}`)))})
	if got := flow(s.Body); got != `[{"event": "tool.started", "tool": "terminal", "preview": null}, {"event": "subagent.complete", "summary": "xxxxxx", "task_count": 2}]` {
		t.Errorf("events: %s", got)
	}
}

// A stream of many deltas is merged into fewer events steps, never cut.
func TestManyDeltas(t *testing.T) {
	l := &runLog{seq: 1, runID: "run_1", admitted: 100, input: "long", hasInput: true}
	for i := range 2500 {
		at := 100 + float64(i)/1000
		l.obs = append(l.obs, observation{kind: obsFrame, at: at, body: o(t, `{"event":"message.delta","run_id":"run_1","timestamp":`+runs.FormatPyFloat(at)+`,"delta":"w"}`)})
	}
	l.obs = append(l.obs, observation{kind: obsFrame, at: 103, body: o(t, `{"event":"run.completed","run_id":"run_1","timestamp":103.0,"output":"x","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}}`)})
	s := buildScenarios([]*runLog{l}, buildOptions{speed: 1, match: MatchInput})[0]
	deltas := 0
	for _, st := range s.Steps {
		if st.Action == ActEvents {
			deltas += len(st.Body.Arr)
		}
	}
	last := s.Steps[len(s.Steps)-1]
	if len(s.Steps) > scenarios.MaxSteps || deltas != 2500 || last.Action != ActObserve || str(last.Body.Obj, "status") != "completed" {
		t.Errorf("%d steps, %d deltas, last %s %s", len(s.Steps), deltas, last.Action, flow(last.Body))
	}
	if c := s.Comment[len(s.Comment)-1]; c != "events within 10ms of a step's first event merged into it (at most 1000 steps a list)" {
		t.Errorf("comment %q", c)
	}
}

// Record values the observe control refuses (a malformed or newer upstream)
// are left out of the steps, field by field, so the file still loads: an
// unknown status, a null output, a usage with a fourth count, an error that
// is an object, an approval request_id that is not trimmed.
func TestUnscriptableRecordValues(t *testing.T) {
	l := &runLog{seq: 1, runID: "run_1", admitted: 150, input: "go", hasInput: true, obs: []observation{
		{kind: obsRecord, at: 150, body: rec(t, "thinking", 0.1, "")},
		{kind: obsRecord, at: 151, body: rec(t, "waiting_for_approval", 1, `,"approval":{"command":"ls","request_id":" r1 "}`)},
		{kind: obsRecord, at: 152, body: rec(t, "failed", 2, `,"error":{"message":"boom"}`)},
	}}
	m := &runLog{seq: 2, runID: "run_2", admitted: 150, input: "go2", hasInput: true, obs: []observation{
		{kind: obsFrame, at: 150.5, body: o(t, `{"event":"run.completed","run_id":"run_2","timestamp":100.5,"output":null,"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2,"cost":0.1},"pending_steer":"p"}`)},
	}}
	data := writeFile(nil, buildScenarios([]*runLog{l, m}, buildOptions{speed: 1, match: MatchInput}))
	if _, perr := scenarios.Parse(data); perr != nil {
		t.Fatalf("the file does not load: %s\n%s", perr.Message, data)
	}
	for _, want := range []string{
		`approval: {"command": "ls"}`,
		`observe: {"status": "failed"}`,
		`observe: {"status": "completed", "pending_steer": "p"}`,
		"# 1 status change(s) left out: the observe control refuses the status\n  # 2 step(s) written without the fields the observe control refuses\n  - name: \"rec-001\"",
		"# 1 step(s) written without the fields the observe control refuses\n  - name: \"rec-002\"",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("no %s in\n%s", want, data)
		}
	}
}

// An upstream time far from the others (a timestamp in milliseconds, 1e300)
// gives a delay the file can still hold: every delay is clamped to 0 ..
// the longest duration the loader reads (2562047h47m16.854s), never wrapped.
func TestDelayBounds(t *testing.T) {
	l := &runLog{seq: 1, runID: "run_1", admitted: 150, input: "go", hasInput: true, obs: []observation{
		{kind: obsFrame, at: 150.1, body: o(t, `{"event":"message.delta","run_id":"run_1","timestamp":100.1,"delta":"a"}`)},
		{kind: obsFrame, at: 150.2, body: o(t, `{"event":"message.delta","run_id":"run_1","timestamp":100200.0,"delta":"b"}`)},
		{kind: obsFrame, at: 150.3, body: o(t, `{"event":"message.delta","run_id":"run_1","timestamp":1e300,"delta":"c"}`)},
		{kind: obsFrame, at: 150.4, body: o(t, `{"event":"message.delta","run_id":"run_1","timestamp":100.4,"delta":"d"}`)},
	}}
	for _, speed := range []float64{1, MinSpeed} {
		data := writeFile(nil, buildScenarios([]*runLog{l}, buildOptions{speed: speed, match: MatchInput}))
		if _, perr := scenarios.Parse(data); perr != nil {
			t.Fatalf("speed %g: the file does not load: %s\n%s", speed, perr.Message, data)
		}
		if !strings.Contains(string(data), "after: 2562047h47m16.854s\n") {
			t.Errorf("speed %g: no clamped delay in\n%s", speed, data)
		}
	}
}

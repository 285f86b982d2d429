package runs

import (
	"strings"
	"testing"
)

func TestParseObserveErrors(t *testing.T) {
	const (
		status    = "400||observe: expected a supported status"
		field     = "400||observe: unsupported field"
		result    = "400||observe: result fields require completed status"
		errStatus = "400||observe: error requires failed or interrupted status"
		approval  = "400||observe: approval requires waiting_for_approval and an object"
		reqID     = "400||observe: approval request_id must be a nonempty trimmed string of at most 256 characters"
		pending   = "400||observe: approval request_id is already pending"
		usage     = "400||observe: usage requires three nonnegative token counts"
	)
	long := strings.Repeat("é", 257)
	cases := []struct {
		body string
		want string
	}{
		// step 2
		{`[]`, status},
		{`null`, status},
		{`{}`, status},
		{`{"status":"unknown"}`, status}, // acceptance 29
		{`{"status":"Running"}`, status},
		{`{"status":1}`, status},
		{`{"status":"started","run_id":"x"}`, status},
		// step 3
		{`{"status":"running","run_id":"replacement"}`, field}, // acceptance 29
		{`{"status":"running","output":1,"x":1}`, field},
		// step 4, in the order last_event, output, error, pending_steer
		{`{"status":"failed","error":1}`, "400||observe: error must be a string"}, // acceptance 30
		{`{"status":"completed","last_event":null}`, "400||observe: last_event must be a string"},
		{`{"status":"completed","pending_steer":[],"output":2}`, "400||observe: output must be a string"},
		{`{"status":"completed","pending_steer":false}`, "400||observe: pending_steer must be a string"},
		{`{"status":"running","error":"x","output":5}`, "400||observe: output must be a string"},
		// step 5
		{`{"status":"running","output":"bad"}`, result}, // acceptance 29
		{`{"status":"failed","usage":{},"error":"x"}`, result},
		{`{"status":"running","pending_steer":"x","error":"y"}`, result},
		// step 6
		{`{"status":"running","error":"x"}`, errStatus}, // acceptance 30
		{`{"status":"completed","error":"x"}`, errStatus},
		{`{"status":"waiting_for_approval","error":"x","approval":1}`, errStatus},
		// step 7
		{`{"status":"running","approval":{}}`, approval}, // acceptance 30
		{`{"status":"waiting_for_approval","approval":null}`, approval},
		{`{"status":"waiting_for_approval","approval":[]}`, approval},
		// step 8
		{`{"status":"waiting_for_approval","approval":{"request_id":""}}`, reqID},
		{`{"status":"waiting_for_approval","approval":{"request_id":" r"}}`, reqID},
		{`{"status":"waiting_for_approval","approval":{"request_id":"r\u00a0"}}`, reqID},
		{`{"status":"waiting_for_approval","approval":{"request_id":null}}`, reqID},
		{`{"status":"waiting_for_approval","approval":{"request_id":5}}`, reqID},
		{`{"status":"waiting_for_approval","approval":{"request_id":"` + long + `"}}`, reqID},
		{`{"status":"waiting_for_approval","approval":{"request_id":"busy"}}`, pending}, // acceptance 133
		// step 9
		{`{"status":"completed","usage":{"total_tokens":-1}}`, usage},                  // acceptance 29
		{`{"status":"completed","usage":{"input_tokens":1,"output_tokens":1}}`, usage}, // acceptance 30
		{`{"status":"completed","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":-1}}`, usage},
		{`{"status":"completed","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":1.5}}`, usage},
		{`{"status":"completed","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":"2"}}`, usage},
		{`{"status":"completed","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":true}}`, usage},
		{`{"status":"completed","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":null}}`, usage},
		{`{"status":"completed","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":9007199254740992}}`, usage},
		{`{"status":"completed","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":9007199254740992.0}}`, usage},
		{`{"status":"completed","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":1e999}}`, usage},
		{`{"status":"completed","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":1,"cost":0}}`, usage},
		{`{"status":"completed","usage":[1,2,3]}`, usage},
		{`{"status":"completed","usage":null}`, usage},
		// step 8 before step 9 is impossible together (usage needs completed); steps 2–7 win over 8
		{`{"status":"completed","approval":{"request_id":""}}`, approval},
	}
	isPending := func(id string) bool { return id == "busy" }
	for _, c := range cases {
		o, err := ParseObserve(mustParse(t, c.body), true, isPending)
		if got := errText(err); got != c.want {
			t.Errorf("ParseObserve(%s) = %s, want %s", c.body, got, c.want)
		}
		if o != nil {
			t.Errorf("ParseObserve(%s) returned a value with an error", c.body)
		}
	}
	if _, err := ParseObserve(Value{}, false, nil); errText(err) != status {
		t.Errorf("ParseObserve(no body) = %s, want %s", errText(err), status)
	}
	if ErrObserveTerminal.Status != 409 || ErrObserveTerminal.Code != "mock_terminal_run" || ErrObserveTerminal.Message != "observe: terminal runs cannot be changed" {
		t.Errorf("ErrObserveTerminal = %s", errText(ErrObserveTerminal))
	}
}

func TestParseObserveAccepts(t *testing.T) {
	cases := []struct {
		body      string
		usage     string // rendered usage, "" when absent
		requestID string
	}{
		{`{"status":"running","last_event":"run.started"}`, "", ""},
		// acceptance 33 and 34
		{`{"status":"completed","usage":{"total_tokens":5,"input_tokens":2,"output_tokens":3}}`, `{"input_tokens":2,"output_tokens":3,"total_tokens":5}`, ""},
		{`{"status":"completed","usage":{"input_tokens":2.0,"output_tokens":2e0,"total_tokens":-0.0}}`, `{"input_tokens":2,"output_tokens":2,"total_tokens":0}`, ""},
		{`{"status":"completed","usage":{"input_tokens":9007199254740991,"output_tokens":9007199254740991.0,"total_tokens":-0}}`, `{"input_tokens":9007199254740991,"output_tokens":9007199254740991,"total_tokens":0}`, ""},
		{`{"status":"waiting_for_approval","approval":{"request_id":"r1"}}`, "", "r1"},
		{`{"status":"waiting_for_approval","approval":{"request_id":"` + strings.Repeat("é", 256) + `"}}`, "", strings.Repeat("é", 256)},
		{`{"status":"failed","error":""}`, "", ""},
		{`{"status":"interrupted","error":"x","last_event":"y"}`, "", ""},
	}
	for _, c := range cases {
		o, err := ParseObserve(mustParse(t, c.body), true, func(string) bool { return false })
		if err != nil {
			t.Errorf("ParseObserve(%s) = %s", c.body, errText(err))
			continue
		}
		got := ""
		if o.Usage != nil {
			got = render(o.Usage)
		}
		if got != c.usage || o.ApprovalRequestID != c.requestID || o.HasRequestID != (c.requestID != "") {
			t.Errorf("ParseObserve(%s): usage %s request_id %q/%v", c.body, got, o.ApprovalRequestID, o.HasRequestID)
		}
	}
}

// observeSeq applies observe bodies in order to rec, as the gateway would
// (approval events get request ids from ids), and returns the final record.
func observeSeq(t *testing.T, rec *Obj, now float64, queue []string, ids []string, bodies ...string) *Obj {
	t.Helper()
	for _, b := range bodies {
		o, err := ParseObserve(mustParse(t, b), true, nil)
		if err != nil {
			t.Fatalf("ParseObserve(%s): %s", b, errText(err))
		}
		var ev *Obj
		if o.Status == WaitingForApproval {
			ev = ApprovalEvent(o.Approval, testRunID, now, func() string {
				id := ids[0]
				ids = ids[1:]
				return id
			})
		}
		rec = ApplyObserve(rec, o, now, ev, queue)
	}
	return rec
}

func TestApplyObserve(t *testing.T) {
	const head = `{"object":"hermes.run","run_id":"` + testRunID + `",`
	const mid = `"created_at":1700000000.0,"session_id":"` + testRunID + `","model":"hermes-agent"`
	rec := func(status string, at string, tail string) string {
		return head + `"status":"` + status + `","updated_at":` + at + `,` + mid + tail + `}`
	}
	approval := `"approval":{"command":"synthetic-command","request_id":"4f517459436b5145434675544552396b","event":"approval.request","run_id":"` + testRunID + `","timestamp":1700000001.25,"choices":["once","session","always","deny"]}`
	cases := []struct {
		name   string
		at     float64
		queue  []string
		bodies []string
		want   string
	}{
		// acceptance 22
		{"running", 1700000001.25, nil, []string{`{"status":"running"}`}, rec("running", "1700000001.25", "")},
		// acceptance 23
		{"waiting", 1700000001.25, nil, []string{`{"status":"running"}`, `{"status":"waiting_for_approval","approval":{"command":"synthetic-command"}}`},
			rec("waiting_for_approval", "1700000001.25", `,"last_event":"approval.request",`+approval)},
		// acceptance 24
		{"waiting then running", 1700000001.25, nil, []string{`{"status":"waiting_for_approval","approval":{"command":"synthetic-command"}}`, `{"status":"running"}`},
			rec("running", "1700000001.25", `,"last_event":"approval.request"`)},
		// acceptance 25 and 32 (completed directly: output, usage, last_event)
		{"completed with usage", 1700000001.25, nil, []string{`{"status":"running"}`, `{"status":"completed","output":"synthetic-result","usage":{"input_tokens":2,"output_tokens":3,"total_tokens":5}}`},
			rec("completed", "1700000001.25", `,"output":"synthetic-result","usage":{"input_tokens":2,"output_tokens":3,"total_tokens":5},"last_event":"run.completed"`)},
		// acceptance 27
		{"stopping then failed", testBase, nil, []string{`{"status":"stopping"}`, `{"status":"failed","error":"synthetic failure"}`},
			rec("failed", "1700000000.0", `,"last_event":"run.failed","error":"synthetic failure"`)},
		{"stopping then cancelled", testBase, nil, []string{`{"status":"stopping"}`, `{"status":"cancelled"}`},
			rec("cancelled", "1700000000.0", `,"last_event":"run.cancelled"`)},
		{"stopping then interrupted", testBase, nil, []string{`{"status":"stopping"}`, `{"status":"interrupted","error":"synthetic failure"}`},
			rec("interrupted", "1700000000.0", `,"last_event":"run.interrupted","error":"synthetic failure"`)},
		{"stopping", testBase, nil, []string{`{"status":"stopping"}`}, rec("stopping", "1700000000.0", `,"last_event":"run.stopping"`)},
		// acceptance 28 and 32 (failed: error, last_event)
		{"completed defaults", testBase, nil, []string{`{"status":"completed"}`},
			rec("completed", "1700000000.0", `,"output":"","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0},"last_event":"run.completed"`)},
		{"failed defaults", testBase, nil, []string{`{"status":"failed"}`},
			rec("failed", "1700000000.0", `,"error":"agent run failed","last_event":"run.failed"`)},
		{"interrupted defaults", testBase, nil, []string{`{"status":"interrupted"}`},
			rec("interrupted", "1700000000.0", `,"error":"The gateway restarted before this run settled.","last_event":"run.interrupted"`)},
		// acceptance 33 and 34
		{"usage order and 2.0", testBase, nil, []string{`{"status":"completed","usage":{"total_tokens":5.0,"input_tokens":2.0,"output_tokens":3e0}}`},
			rec("completed", "1700000000.0", `,"output":"","usage":{"input_tokens":2,"output_tokens":3,"total_tokens":5},"last_event":"run.completed"`)},
		// last_event from the body; queued/running without one keep the old value
		{"body last_event", testBase, nil, []string{`{"status":"running","last_event":"run.started"}`, `{"status":"queued"}`},
			rec("queued", "1700000000.0", `,"last_event":"run.started"`)},
		{"completed last_event from body", testBase, nil, []string{`{"status":"completed","last_event":"custom"}`},
			rec("completed", "1700000000.0", `,"output":"","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0},"last_event":"custom"`)},
		{"waiting last_event from body", testBase, []string{"ignored"}, []string{`{"status":"waiting_for_approval","last_event":"x","approval":{"request_id":"r"}}`},
			rec("waiting_for_approval", "1700000000.0", `,"last_event":"x","approval":{"request_id":"r","event":"approval.request","run_id":"`+testRunID+`","timestamp":1700000000.0,"choices":["once","session","always","deny"]}`)},
		// pending_steer: queue joined (acceptance 139, 141), body wins (acceptance 143), absent without either (142)
		{"pending_steer from queue", testBase, []string{"a", "b"}, []string{`{"status":"completed","output":"o"}`},
			rec("completed", "1700000000.0", `,"output":"o","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0},"last_event":"run.completed","pending_steer":"a\nb"`)},
		{"pending_steer from body", testBase, []string{"a"}, []string{`{"status":"completed","pending_steer":"x"}`},
			rec("completed", "1700000000.0", `,"output":"","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0},"last_event":"run.completed","pending_steer":"x"`)},
		{"queue ignored on failed", testBase, []string{"a"}, []string{`{"status":"failed"}`},
			rec("failed", "1700000000.0", `,"error":"agent run failed","last_event":"run.failed"`)},
		// a second approval replaces the first in place
		{"two approvals", testBase, nil, []string{`{"status":"waiting_for_approval"}`, `{"status":"waiting_for_approval","approval":{"smart_denied":1}}`},
			rec("waiting_for_approval", "1700000000.0", `,"last_event":"approval.request","approval":{"smart_denied":1,"request_id":"id2","event":"approval.request","run_id":"`+testRunID+`","timestamp":1700000000.0,"choices":["once","deny"]}`)},
		// approval removed by every other status, waiting → cancelled
		{"waiting then cancelled", testBase, nil, []string{`{"status":"waiting_for_approval"}`, `{"status":"cancelled"}`},
			rec("cancelled", "1700000000.0", `,"last_event":"run.cancelled"`)},
	}
	for _, c := range cases {
		ids := []string{"4f517459436b5145434675544552396b", "id2"}
		if c.name == "two approvals" {
			ids = []string{"id1", "id2"}
		}
		start := startRecord()
		got := render(observeSeq(t, start, c.at, c.queue, ids, c.bodies...))
		if got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.name, got, c.want)
		}
		if render(start) != queuedJSON {
			t.Errorf("%s modified its input", c.name)
		}
	}
}

// acceptance 32: a stopped running run observed completed keeps last_event before output.
func TestApplyObserveKeyOrderAfterStop(t *testing.T) {
	r := observeSeq(t, startRecord(), testBase, nil, nil, `{"status":"running"}`)
	r = Stopped(r, testBase)
	r = observeSeq(t, r, testBase, nil, nil, `{"status":"completed","output":"synthetic output"}`)
	want := `{"object":"hermes.run","run_id":"` + testRunID + `","status":"completed","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"` + testRunID + `","model":"hermes-agent","last_event":"run.completed","output":"synthetic output","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}}`
	if got := render(r); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

func TestApprovalEvent(t *testing.T) {
	cases := []struct {
		a    string // "" = nil
		want string
	}{
		// acceptance 23 / runs-api §6.5.1 example
		{`{"command":"synthetic-command"}`, `{"command":"synthetic-command","request_id":"GEN","event":"approval.request","run_id":"` + testRunID + `","timestamp":1700000001.25,"choices":["once","session","always","deny"]}`},
		{"", `{"request_id":"GEN","event":"approval.request","run_id":"` + testRunID + `","timestamp":1700000001.25,"choices":["once","session","always","deny"]}`},
		// acceptance 132
		{`{"smart_denied":true}`, `{"smart_denied":true,"request_id":"GEN","event":"approval.request","run_id":"` + testRunID + `","timestamp":1700000001.25,"choices":["once","deny"]}`},
		{`{"allow_session":false}`, `{"allow_session":false,"request_id":"GEN","event":"approval.request","run_id":"` + testRunID + `","timestamp":1700000001.25,"choices":["once","deny"]}`},
		{`{"allow_permanent":false}`, `{"allow_permanent":false,"request_id":"GEN","event":"approval.request","run_id":"` + testRunID + `","timestamp":1700000001.25,"choices":["once","session","deny"]}`},
		// "exactly false": 0 and null do not count; smart_denied wins over allow_permanent
		{`{"allow_session":0,"allow_permanent":null}`, `{"allow_session":0,"allow_permanent":null,"request_id":"GEN","event":"approval.request","run_id":"` + testRunID + `","timestamp":1700000001.25,"choices":["once","session","always","deny"]}`},
		{`{"smart_denied":"no","allow_permanent":false}`, `{"smart_denied":"no","allow_permanent":false,"request_id":"GEN","event":"approval.request","run_id":"` + testRunID + `","timestamp":1700000001.25,"choices":["once","deny"]}`},
		{`{"smart_denied":0,"allow_permanent":false}`, `{"smart_denied":0,"allow_permanent":false,"request_id":"GEN","event":"approval.request","run_id":"` + testRunID + `","timestamp":1700000001.25,"choices":["once","session","deny"]}`},
		// an existing request_id is kept; existing envelope keys are overwritten in place
		{`{"choices":1,"request_id":"r1","timestamp":"t","x":1,"event":"e"}`, `{"choices":["once","session","always","deny"],"request_id":"r1","timestamp":1700000001.25,"x":1,"event":"approval.request","run_id":"` + testRunID + `"}`},
	}
	for _, c := range cases {
		var a *Obj
		var before string
		if c.a != "" {
			a = mustParse(t, c.a).Obj
			before = render(a)
		}
		calls := 0
		e := ApprovalEvent(a, testRunID, 1700000001.25, func() string { calls++; return "GEN" })
		if got := render(e); got != c.want {
			t.Errorf("ApprovalEvent(%s)\n got %s\nwant %s", c.a, got, c.want)
		}
		wantCalls := 1
		if strings.Contains(c.a, "request_id") {
			wantCalls = 0
		}
		if calls != wantCalls {
			t.Errorf("ApprovalEvent(%s) called newRequestID %d times, want %d", c.a, calls, wantCalls)
		}
		if a != nil && render(a) != before {
			t.Errorf("ApprovalEvent(%s) modified its input", c.a)
		}
	}
}

func TestTerminalEvent(t *testing.T) {
	const env = `{"event":"%s","run_id":"` + testRunID + `","timestamp":1700000009.5`
	ev := func(name, tail string) string { return strings.Replace(env, "%s", name, 1) + tail + "}" }
	cases := []struct {
		name   string
		queue  []string
		bodies []string
		want   string // "" = nil
	}{
		{"completed", nil, []string{`{"status":"completed","output":"Your project has 3 files.","usage":{"input_tokens":812,"output_tokens":21,"total_tokens":833}}`},
			ev("run.completed", `,"output":"Your project has 3 files.","usage":{"input_tokens":812,"output_tokens":21,"total_tokens":833}`)},
		// acceptance 119 and 141
		{"completed with pending_steer", []string{"a", "b"}, []string{`{"status":"completed","last_event":"x"}`},
			ev("run.completed", `,"output":"","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0},"pending_steer":"a\nb"`)},
		{"failed", nil, []string{`{"status":"failed","error":"boom"}`}, ev("run.failed", `,"error":"boom"`)},
		{"cancelled", nil, []string{`{"status":"stopping"}`, `{"status":"cancelled"}`}, ev("run.cancelled", "")},
		{"interrupted", nil, []string{`{"status":"interrupted"}`}, ""},
		{"running", nil, []string{`{"status":"running"}`}, ""},
		{"stopping", nil, []string{`{"status":"stopping"}`}, ""},
		{"waiting", nil, []string{`{"status":"waiting_for_approval"}`}, ""},
	}
	for _, c := range cases {
		r := observeSeq(t, startRecord(), testBase, c.queue, []string{"id"}, c.bodies...)
		e := TerminalEvent(r, testRunID, 1700000009.5)
		got := ""
		if e != nil {
			got = render(e)
		}
		if got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

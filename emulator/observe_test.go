package emulator_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// Acceptance section B (scripted observations, items 22–34) through the full
// HTTP stack: POST /__admin/hermes/runs/:id/observe (controls §11.1) and the
// record it leaves behind (runs-api §4).

// obsRecord renders a record as admission writes it (runs-api §4.2 rule 1) for
// run id with the given status and timestamps, then tail (",\"k\":v…") appended
// before the closing brace.
func obsRecord(id, status, updated, created, tail string) string {
	return `{"object":"hermes.run","run_id":"` + id + `","status":"` + status + `","updated_at":` + updated +
		`,"created_at":` + created + `,"session_id":"` + id + `","model":"hermes-agent"` + tail + `}`
}

// obsKeys returns the keys of the JSON object body in the order they appear;
// path names nested objects to descend into first.
func obsKeys(t *testing.T, body []byte, path ...string) []string {
	t.Helper()
	raw := json.RawMessage(body)
	for _, p := range path {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("not an object: %s", raw)
		}
		raw = m[p]
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var keys []string
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			t.Fatalf("bad object %s: %v", raw, err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			t.Fatalf("bad object %s: %v", raw, err)
		}
	}
	return keys
}

func obsWantKeys(t *testing.T, body []byte, want string, path ...string) {
	t.Helper()
	if got := strings.Join(obsKeys(t, body, path...), ", "); got != want {
		t.Fatalf("keys %v = %s\nwant %s\nbody %s", path, got, want, body)
	}
}

// acceptance 22, 23, 24, 25, 26: one run scripted through running, waiting,
// running, completed and a rejected change after completion.
func TestObserveLifecycle(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start()
	x.advance("1250")

	// 22
	r := x.observe(id, `{"status":"running"}`)
	want := obsRecord(id, "running", "1700000001.25", "1700000000.0", "")
	x.want(r, 200, want)
	if r.Header.Get("X-Mockingbird-Checkpoint") != "" {
		t.Fatalf("observe carries a checkpoint header: %v", r.Header)
	}
	x.want(x.get("/v1/runs/"+id), 200, want)

	// 23
	approval := `{"command":"synthetic-command","request_id":"4f517459436b5145434675544552396b","event":"approval.request","run_id":"` + id +
		`","timestamp":1700000001.25,"choices":["once","session","always","deny"]}`
	want = obsRecord(id, "waiting_for_approval", "1700000001.25", "1700000000.0", `,"last_event":"approval.request","approval":`+approval)
	x.want(x.observe(id, `{"status":"waiting_for_approval","approval":{"command":"synthetic-command"}}`), 200, want)
	x.want(x.get("/v1/runs/"+id), 200, want)

	// 24
	want = obsRecord(id, "running", "1700000001.25", "1700000000.0", `,"last_event":"approval.request"`)
	x.want(x.observe(id, `{"status":"running"}`), 200, want)
	x.want(x.get("/v1/runs/"+id), 200, want)

	// 25
	want = obsRecord(id, "completed", "1700000001.25", "1700000000.0",
		`,"last_event":"run.completed","output":"synthetic-result","usage":{"input_tokens":2,"output_tokens":3,"total_tokens":5}`)
	x.want(x.observe(id, `{"status":"completed","output":"synthetic-result","usage":{"input_tokens":2,"output_tokens":3,"total_tokens":5}}`), 200, want)
	x.want(x.get("/v1/runs/"+id), 200, want)

	// 26
	x.advance("1000")
	for _, b := range []string{`{"status":"running"}`, `{"status":"completed"}`, `{"status":"queued"}`} {
		x.want(x.observe(id, b), 409, hermesErr("observe: terminal runs cannot be changed", "mock_terminal_run"))
	}
	x.want(x.get("/v1/runs/"+id), 200, want)
}

// acceptance 27: stopping first, then each outcome.
func TestObserveStoppingThenOutcome(t *testing.T) {
	cases := []struct {
		status, body, tail string
	}{
		{"failed", `{"status":"failed","error":"synthetic failure"}`, `,"last_event":"run.failed","error":"synthetic failure"`},
		{"cancelled", `{"status":"cancelled"}`, `,"last_event":"run.cancelled"`},
		{"interrupted", `{"status":"interrupted","error":"synthetic failure"}`, `,"last_event":"run.interrupted","error":"synthetic failure"`},
	}
	for _, c := range cases {
		t.Run(c.status, func(t *testing.T) {
			x := newH(t, emulator.Options{})
			x.freeze()
			id := x.start()
			stopping := obsRecord(id, "stopping", "1700000000.0", "1700000000.0", `,"last_event":"run.stopping"`)
			x.want(x.observe(id, `{"status":"stopping"}`), 200, stopping)
			x.want(x.get("/v1/runs/"+id), 200, stopping)
			want := obsRecord(id, c.status, "1700000000.0", "1700000000.0", c.tail)
			x.want(x.observe(id, c.body), 200, want)
			x.want(x.get("/v1/runs/"+id), 200, want)
		})
	}
}

// acceptance 28: defaults written by a bare terminal observation (runs-api §4.3).
func TestObserveDefaults(t *testing.T) {
	cases := []struct{ status, tail string }{
		{"completed", `,"output":"","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0},"last_event":"run.completed"`},
		{"failed", `,"error":"agent run failed","last_event":"run.failed"`},
		{"interrupted", `,"error":"The gateway restarted before this run settled.","last_event":"run.interrupted"`},
		{"cancelled", `,"last_event":"run.cancelled"`},
	}
	x := newH(t, emulator.Options{})
	x.freeze()
	for _, c := range cases {
		id := x.start()
		want := obsRecord(id, c.status, "1700000000.0", "1700000000.0", c.tail)
		x.want(x.observe(id, `{"status":"`+c.status+`"}`), 200, want)
		x.want(x.get("/v1/runs/"+id), 200, want)
	}
}

// acceptance 29, 30: invalid observations answer 400 and leave the run as admitted.
func TestObserveInvalid(t *testing.T) {
	cases := []struct{ body, msg string }{
		// 29
		{`{"status":"unknown"}`, "observe: expected a supported status"},
		{`{"status":"completed","usage":{"total_tokens":-1}}`, "observe: usage requires three nonnegative token counts"},
		{`{"status":"running","output":"bad"}`, "observe: result fields require completed status"},
		{`{"status":"running","run_id":"replacement"}`, "observe: unsupported field"},
		// 30
		{`{"status":"failed","error":1}`, "observe: error must be a string"},
		{`{"status":"running","error":"x"}`, "observe: error requires failed or interrupted status"},
		{`{"status":"running","approval":{}}`, "observe: approval requires waiting_for_approval and an object"},
		{`{"status":"completed","usage":{"input_tokens":1,"output_tokens":1}}`, "observe: usage requires three nonnegative token counts"},
		// neighbours of the same rules (controls §11.1 steps 2–9)
		{``, "observe: expected a supported status"},
		{`[]`, "observe: expected a supported status"},
		{`{}`, "observe: expected a supported status"},
		{`{"status":"started"}`, "observe: expected a supported status"},
		{`{"status":"waiting_for_approval","approval":[]}`, "observe: approval requires waiting_for_approval and an object"},
		{`{"status":"completed","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":1.5}}`, "observe: usage requires three nonnegative token counts"},
		{`{"status":"completed","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2,"cost":0}}`, "observe: usage requires three nonnegative token counts"},
		{`{"status":"completed","output":1}`, "observe: output must be a string"},
		{`{"status":"running","last_event":null}`, "observe: last_event must be a string"},
	}
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start()
	initial := obsRecord(id, "queued", "1700000000.0", "1700000000.0", "")
	x.advance("1000")
	for _, c := range cases {
		x.want(x.observe(id, c.body), 400, hermesErr(c.msg, ""))
		x.want(x.get("/v1/runs/"+id), 200, initial)
	}
	// The 400s win over the terminal 409 (controls §11.1 step 10).
	x.want(x.observe(id, `{"status":"completed"}`), 200, "")
	x.want(x.observe(id, `{"status":"running","run_id":"replacement"}`), 400, hermesErr("observe: unsupported field", ""))
}

// acceptance 31: observe in another namespace does not see the run.
func TestObserveOtherNamespace(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.ns = "a"
	id := x.start()
	x.ns = "b"
	x.want(x.observe(id, `{"status":"running"}`), 404, hermesErr("Run not found: "+id, "run_not_found"))
	x.want(x.post("/ns/b/__admin/hermes/runs/"+id+"/observe", `{"status":"running"}`), 404, hermesErr("Run not found: "+id, "run_not_found"))
	x.ns = ""
	x.want(x.post("/__admin/hermes/runs/"+id+"/observe?namespace=b", `{"status":"running"}`), 404, hermesErr("Run not found: "+id, "run_not_found"))
	x.ns = "a"
	x.want(x.get("/v1/runs/"+id), 200, "")
	if got := x.get("/v1/runs/"+id).field(t, "status"); got != "queued" {
		t.Fatalf("status in a = %s, want queued", got)
	}
}

// acceptance 32: key order after the three kinds of terminal change (bytes).
func TestObserveKeyOrder(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()

	stopped := x.start()
	x.want(x.observe(stopped, `{"status":"running"}`), 200, "")
	x.want(x.post("/v1/runs/"+stopped+"/stop", ""), 200, `{"run_id":"`+stopped+`","status":"stopping"}`)
	x.want(x.observe(stopped, `{"status":"completed","output":"synthetic output"}`), 200, "")
	x.want(x.get("/v1/runs/"+stopped), 200, obsRecord(stopped, "completed", "1700000000.0", "1700000000.0",
		`,"last_event":"run.completed","output":"synthetic output","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}`))

	direct := x.start()
	x.want(x.observe(direct, `{"status":"running"}`), 200, "")
	x.want(x.observe(direct, `{"status":"completed","output":"synthetic output"}`), 200, "")
	r := x.get("/v1/runs/" + direct)
	x.want(r, 200, obsRecord(direct, "completed", "1700000000.0", "1700000000.0",
		`,"output":"synthetic output","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0},"last_event":"run.completed"`))
	obsWantKeys(t, r.Body, "object, run_id, status, updated_at, created_at, session_id, model, output, usage, last_event")

	failed := x.start()
	x.want(x.observe(failed, `{"status":"running"}`), 200, "")
	x.want(x.observe(failed, `{"status":"failed"}`), 200, "")
	r = x.get("/v1/runs/" + failed)
	x.want(r, 200, obsRecord(failed, "failed", "1700000000.0", "1700000000.0", `,"error":"agent run failed","last_event":"run.failed"`))
	obsWantKeys(t, r.Body, "object, run_id, status, updated_at, created_at, session_id, model, error, last_event")
}

// acceptance 33, 34: usage is rewritten in canonical key order with integral counts.
func TestObserveUsageRendering(t *testing.T) {
	cases := []struct{ usage, want string }{
		{`{"total_tokens":5,"input_tokens":2,"output_tokens":3}`, `{"input_tokens":2,"output_tokens":3,"total_tokens":5}`},       // 33
		{`{"input_tokens":2.0,"output_tokens":2.0,"total_tokens":2.0}`, `{"input_tokens":2,"output_tokens":2,"total_tokens":2}`}, // 34
		{`{"output_tokens":2e0,"total_tokens":4.0,"input_tokens":2}`, `{"input_tokens":2,"output_tokens":2,"total_tokens":4}`},
		{`{"input_tokens":0,"output_tokens":-0,"total_tokens":9007199254740991}`, `{"input_tokens":0,"output_tokens":0,"total_tokens":9007199254740991}`},
	}
	x := newH(t, emulator.Options{})
	x.freeze()
	for _, c := range cases {
		id := x.start()
		want := obsRecord(id, "completed", "1700000000.0", "1700000000.0", `,"output":"","usage":`+c.want+`,"last_event":"run.completed"`)
		x.want(x.observe(id, `{"status":"completed","usage":`+c.usage+`}`), 200, want)
		r := x.get("/v1/runs/" + id)
		x.want(r, 200, want)
		obsWantKeys(t, r.Body, "input_tokens, output_tokens, total_tokens", "usage")
	}
	// 2^53 is out of range.
	id := x.start()
	x.want(x.observe(id, `{"status":"completed","usage":{"input_tokens":9007199254740992,"output_tokens":0,"total_tokens":0}}`), 400,
		hermesErr("observe: usage requires three nonnegative token counts", ""))
}

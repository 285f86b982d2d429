package emulator_test

import (
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// Steer acceptance (acceptance.md J, items 136–145; runs-api §6.6; controls §11.3).

// steerPost posts a RunSteer body.
func (x *h) steerPost(id, body string, hdr ...string) res {
	return x.post("/v1/runs/"+id+"/steer", body, hdr...)
}

// steerRunning admits a run and observes it running.
func (x *h) steerRunning(hdr ...string) string {
	x.t.Helper()
	id := x.start(hdr...)
	x.want(x.observe(id, `{"status":"running"}`), 200, "")
	return id
}

func steerOK(id string) string {
	return `{"object":"hermes.run.steer","run_id":"` + id + `","accepted":true}`
}

// steerCompleted is the record of a run at the frozen base observed completed,
// with pending (raw JSON string, "" = absent). A steer success wrote
// last_event before the completion, so it keeps its place before output
// (runs-api §4.2); without one it is written after usage.
func steerCompleted(id, pending string, steered bool) string {
	b := `{"object":"hermes.run","run_id":"` + id + `","status":"completed","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"` + id + `","model":"hermes-agent",`
	if steered {
		b += `"last_event":"run.completed",`
	}
	b += `"output":"","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}`
	if !steered {
		b += `,"last_event":"run.completed"`
	}
	if pending != "" {
		b += `,"pending_steer":` + pending
	}
	return b + "}"
}

// acceptance 136
func TestSteerAccepted(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.steerRunning()
	s, _, _ := x.sseOpen(id)
	x.advance("750")
	r := x.steerPost(id, `{"input":"focus on tests"}`)
	x.want(r, 200, steerOK(id))
	if cp := r.Header.Get("X-Mockingbird-Checkpoint"); len(cp) != 11 {
		t.Fatalf("checkpoint header %q", cp)
	}
	x.want(x.get("/v1/runs/"+id), 200, `{"object":"hermes.run","run_id":"`+id+`","status":"running","updated_at":1700000000.75,"created_at":1700000000.0,"session_id":"`+id+`","model":"hermes-agent","last_event":"run.steered"}`)
	s.want(sseFrame(`{"event": "run.steered", "run_id": "` + id + `", "timestamp": 1700000000.75, "accepted": true}`))
	// The steer text never reaches the journal; the run id does.
	j := x.get("/__admin/requests?operationId=RunSteer")
	if !strings.Contains(string(j.Body), `"ids":{"runId":"`+id+`"}`) || strings.Contains(string(j.Body), "focus") {
		t.Fatalf("journal: %s", j.Body)
	}
}

// acceptance 137: the gate comes before the body.
func TestSteerGate(t *testing.T) {
	x := newH(t, emulator.Options{})
	notAccepting := func(id string) string {
		return hermesErr("Run is not currently accepting steer input: "+id, "run_not_accepting_steer")
	}
	queued := x.start()
	waiting := x.steerRunning()
	x.want(x.observe(waiting, `{"status":"waiting_for_approval"}`), 200, "")
	stopping := x.steerRunning()
	x.want(x.post("/v1/runs/"+stopping+"/stop", ""), 200, "")
	completed := x.steerRunning()
	x.want(x.observe(completed, `{"status":"completed"}`), 200, "")
	for _, id := range []string{queued, waiting, stopping, completed} {
		for _, b := range []string{`{`, `{"input":5}`, `{"input":"ok"}`} {
			x.want(x.steerPost(id, b), 409, notAccepting(id))
		}
	}
	x.want(x.steerPost("missing", `{`), 404, hermesErr("Run not found: missing", "run_not_found"))
}

// acceptance 138, 140: missing text (400) and non-text input (501).
func TestSteerBodies(t *testing.T) {
	missing := hermesErr("Missing non-empty steer text; expected 'input', 'message', or 'text'.", "invalid_steer_input")
	nonText := unsupportedErr("non-text steer input is outside the verified subset")
	cases := []struct {
		body   string
		status int
		want   string
	}{
		{`{`, 400, missing},
		{`[]`, 400, missing},
		{`[1]`, 400, missing},
		{`{}`, 400, missing},
		{`{"input":"   "}`, 400, missing},
		{`{"text":"   "}`, 400, missing},
		{``, 400, missing},
		{`"text"`, 400, missing},
		{`{"input":0,"message":false,"text":[]}`, 400, missing},
		{`{"input":[{"type":"image_url"},{"type":"text","text":""}," "]}`, 400, missing},
		// acceptance 140
		{`{"input":5}`, 501, nonText},
		{`{"message":true}`, 501, nonText},
		{`{"input":{"text":"a"}}`, 501, nonText},
		{`{"input":[{"type":"text","text":5}]}`, 501, nonText},
	}
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.steerRunning()
	for _, c := range cases {
		x.want(x.steerPost(id, c.body), c.status, c.want)
	}
	// Nothing was queued.
	x.want(x.observe(id, `{"status":"completed"}`), 200, steerCompleted(id, "", false))
}

// acceptance 139, 141, 142, 143: queued text becomes pending_steer at completion.
func TestSteerPending(t *testing.T) {
	cases := []struct {
		name     string
		steers   []string
		deliver  int    // -1 = no delivery
		complete string // observe body
		pending  string
	}{
		{"message after empty input", []string{`{"input":"","message":"m"}`}, -1, `{"status":"completed"}`, `"m"`},
		{"parts", []string{`{"text":[{"type":"text","text":"a"},"b",{"type":"image_url"}]}`}, -1, `{"status":"completed"}`, `"a\nb"`},
		{"nested and stripped", []string{`{"input":[" x ",[{"type":" Input_Text ","text":"y"}],{"type":"output_text","text":"z"}]}`}, -1, `{"status":"completed"}`, `"x \ny\nz"`},
		{"two steers", []string{`{"input":"a"}`, `{"message":"  b  "}`}, -1, `{"status":"completed"}`, `"a\nb"`},
		{"delivered", []string{`{"input":"a"}`}, 1, `{"status":"completed"}`, ``},
		{"delivered then more", []string{`{"input":"a"}`}, 1, ``, ``},
		{"observation wins", []string{`{"input":"a"}`}, -1, `{"status":"completed","pending_steer":"x"}`, `"x"`},
		{"observation without steer", nil, -1, `{"status":"completed","pending_steer":"x"}`, `"x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := newH(t, emulator.Options{})
			x.freeze()
			id := x.steerRunning()
			for _, b := range c.steers {
				x.want(x.steerPost(id, b), 200, steerOK(id))
			}
			if c.deliver >= 0 {
				x.want(x.post("/__admin/hermes/runs/"+id+"/steer/deliver", ""), 200, `{"run_id":"`+id+`","delivered":1,"simulated":true}`)
				// H6: the body is ignored, but unknown fields are refused.
				x.want(x.post("/__admin/hermes/runs/"+id+"/steer/deliver", `{"ignored":true}`), 400, adminErr("unknown field ignored"))
				x.want(x.post("/__admin/hermes/runs/"+id+"/steer/deliver", `{}`), 200, `{"run_id":"`+id+`","delivered":0,"simulated":true}`)
			}
			if c.complete == "" { // steer again after delivery: only the new text is pending
				x.want(x.steerPost(id, `{"input":"c"}`), 200, steerOK(id))
				c.complete, c.pending = `{"status":"completed"}`, `"c"`
			}
			want := steerCompleted(id, c.pending, len(c.steers) > 0)
			x.want(x.observe(id, c.complete), 200, want)
			x.want(x.get("/v1/runs/"+id), 200, want)
		})
	}
}

// A restart discards the steer queue (runs-api §6.6): a later completion has
// nothing pending.
func TestSteerQueueDiscarded(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.steerRunning("Idempotency-Key", "k")
	x.want(x.steerPost(id, `{"input":"a"}`), 200, "")
	x.want(x.restart("alive"), 200, "")
	// Observe is allowed on a foreign owner; the restart emptied the queue.
	x.want(x.observe(id, `{"status":"completed"}`), 200, "")
	if strings.Contains(string(x.get("/v1/runs/"+id).Body), "pending_steer") {
		t.Fatal("pending_steer after restart")
	}
}

// acceptance 144
func TestSteerRefusedPreset(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.steerRunning()
	s, _, _ := x.sseOpen(id)
	x.want(x.post("/__admin/faults/presets/hermes_steer_refused", ""), 201, "")
	x.want(x.steerPost(id, `{"input":"a"}`), 409, hermesErr("Run did not accept steer text: "+id, "steer_not_accepted"))
	x.want(x.get("/v1/runs/"+id), 200, `{"object":"hermes.run","run_id":"`+id+`","status":"running","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"`+id+`","model":"hermes-agent"}`)
	x.want(x.steerPost(id, `{"input":"b"}`), 200, steerOK(id))
	// A rejected body consumes the rule too, and the 400 wins over the effect.
	x.want(x.post("/__admin/faults/presets/hermes_steer_refused", ""), 201, "")
	x.want(x.steerPost(id, `{}`), 400, hermesErr("Missing non-empty steer text; expected 'input', 'message', or 'text'.", "invalid_steer_input"))
	x.want(x.steerPost(id, `{"input":"c"}`), 200, steerOK(id))
	// Only the accepted steers were queued and emitted.
	x.want(x.observe(id, `{"status":"completed"}`), 200, steerCompleted(id, `"b\nc"`, true))
	steered := sseFrame(`{"event": "run.steered", "run_id": "` + id + `", "timestamp": 1700000000.0, "accepted": true}`)
	s.want(steered, steered)
	j := x.get("/__admin/requests?operationId=RunSteer&status=409")
	if !strings.Contains(string(j.Body), `"faultId":"hermes_steer_refused"`) {
		t.Fatalf("journal: %s", j.Body)
	}
}

// acceptance 145
func TestSteerNotLiveAndDeliverTerminal(t *testing.T) {
	x := newH(t, emulator.Options{})
	id := x.steerRunning("Idempotency-Key", "k")
	x.want(x.restart("alive"), 200, "")
	x.want(x.steerPost(id, `{"input":"a"}`), 409, hermesErr("Run is not currently accepting steer input: "+id, "run_not_accepting_steer"))
	done := x.steerRunning()
	x.want(x.observe(done, `{"status":"completed"}`), 200, "")
	x.want(x.post("/__admin/hermes/runs/"+done+"/steer/deliver", ""), 409, hermesErr("deliver: terminal runs cannot be changed", "mock_terminal_run"))
	x.want(x.post("/__admin/hermes/runs/missing/steer/deliver", ""), 404, hermesErr("Run not found: missing", "run_not_found"))
}

package emulator_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// Acceptance section E (stop and restarts, items 59–71): RunStop (runs-api
// §6.3), hydration and the stale-owner interruption (§10.1), the persist rule
// (§10.2) and the logical restart (§10.3, controls §11.5).

const rstInterruptedMsg = "The gateway restarted before this run settled."

// rstStart starts {"input":"synthetic"} with Idempotency-Key key and returns the run id.
func (x *h) rstStart(key string) string {
	x.t.Helper()
	return x.start("Idempotency-Key", key)
}

// rstReplay resends key and checks the replay answer {"run_id","status","replayed":true}.
func (x *h) rstReplay(key, id, status string) {
	x.t.Helper()
	r := x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", key)
	x.want(r, 202, `{"run_id":"`+id+`","status":"`+status+`","replayed":true}`)
	if r.Header.Get("Idempotency-Replayed") != "true" {
		x.t.Fatalf("replay of %s without Idempotency-Replayed: %v", key, r.Header)
	}
}

func (x *h) rstStop(id string) res { return x.post("/v1/runs/"+id+"/stop", "") }

func rstStopping(id string) string { return `{"run_id":"` + id + `","status":"stopping"}` }

func rstNotFound(id string) string { return hermesErr("Run not found: "+id, "run_not_found") }

// rstCheckpoint commits a checkpoint on main and returns its id (controls §8.3).
func (x *h) rstCheckpoint() string {
	x.t.Helper()
	r := x.post("/__admin/checkpoints", "")
	x.want(r, 201, "")
	return r.field(x.t, "id")
}

// rstCheckout moves main back to checkpoint cp (controls §8.5).
func (x *h) rstCheckout(cp string) {
	x.t.Helper()
	x.want(x.post("/__admin/branches/main/checkout", `{"checkpoint":"`+cp+`"}`), 200,
		`{"status":"ok","branch":"main","checkpoint":"`+cp+`"}`)
}

// acceptance 59, 60: keyed running runs stopped twice, then each outcome; a
// further stop returns the terminal record unchanged.
func TestRestartStopThenOutcome(t *testing.T) {
	cases := []struct{ key, body, tail string }{
		{"cancelled", `{"status":"cancelled"}`, `,"last_event":"run.cancelled"`},
		{"failed", `{"status":"failed","error":"synthetic failure"}`, `,"last_event":"run.failed","error":"synthetic failure"`},
		{"completed", `{"status":"completed","output":"synthetic result"}`,
			`,"last_event":"run.completed","output":"synthetic result","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}`},
	}
	x := newH(t, emulator.Options{})
	x.freeze()
	ids := map[string]string{}
	for _, c := range cases {
		id := x.rstStart(c.key)
		ids[c.key] = id
		x.want(x.observe(id, `{"status":"running"}`), 200, "")
	}
	x.advance("500")
	for _, c := range cases {
		id := ids[c.key]
		// 59
		for range 2 {
			r := x.rstStop(id)
			x.want(r, 200, rstStopping(id))
			if r.Header.Get("X-Mockingbird-Checkpoint") == "" {
				t.Fatalf("stop without checkpoint header: %v", r.Header)
			}
		}
		x.want(x.get("/v1/runs/"+id), 200, obsRecord(id, "stopping", "1700000000.5", "1700000000.0", `,"last_event":"run.stopping"`))
		x.rstReplay(c.key, id, "stopping")
	}
	x.advance("500")
	want := map[string]string{}
	for _, c := range cases {
		id := ids[c.key]
		// 60
		want[c.key] = obsRecord(id, c.key, "1700000001.0", "1700000000.0", c.tail)
		x.want(x.observe(id, c.body), 200, want[c.key])
		x.want(x.get("/v1/runs/"+id), 200, want[c.key])
	}
	x.advance("1000")
	for _, c := range cases {
		id := ids[c.key]
		x.want(x.rstStop(id), 200, want[c.key])
		x.want(x.get("/v1/runs/"+id), 200, want[c.key])
		x.rstReplay(c.key, id, c.key)
	}
}

// acceptance 61
func TestRestartStopQueued(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start()
	x.want(x.rstStop(id), 200, rstStopping(id))
	x.want(x.get("/v1/runs/"+id), 200, obsRecord(id, "stopping", "1700000000.0", "1700000000.0", `,"last_event":"run.stopping"`))
	x.want(x.observe(id, `{"status":"cancelled"}`), 200, "")
	x.want(x.rstStop("missing"), 404, rstNotFound("missing"))
	x.want(x.post("/ns/b/v1/runs/"+id+"/stop", ""), 404, rstNotFound(id))
	x.ns = "b"
	x.want(x.rstStop(id), 404, rstNotFound(id))
}

// acceptance 62, 63, 64, 65, 70: the stale restart scenario.
func TestRestartStale(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	unfinished := x.rstStart("unfinished")
	x.want(x.observe(unfinished, `{"status":"waiting_for_approval","approval":{"command":"synthetic"}}`), 200, "")
	terminal := x.rstStart("terminal")
	x.want(x.observe(terminal, `{"status":"completed","output":"saved"}`), 200, "")
	before := x.get("/v1/runs/" + terminal)
	keyless := x.start()
	x.advance("1000")
	// 70
	x.want(x.restart("stale"), 200, `{"owner":"stale","retained":2,"discarded":1,"simulated":true}`)
	x.advance("1000")

	// 62, 63: the durable copy comes back with sorted keys; the interruption appends error.
	interrupted := `{"approval":{"choices":["once","session","always","deny"],"command":"synthetic","event":"approval.request",` +
		`"request_id":"4f517459436b5145434675544552396b","run_id":"` + unfinished + `","timestamp":1700000000.0},` +
		`"created_at":1700000000.0,"last_event":"run.interrupted","model":"hermes-agent","object":"hermes.run","run_id":"` + unfinished +
		`","session_id":"` + unfinished + `","status":"interrupted","updated_at":1700000002.0,"error":"` + rstInterruptedMsg + `"}`
	r := x.get("/v1/runs/" + unfinished)
	x.want(r, 200, interrupted)
	obsWantKeys(t, r.Body, "approval, created_at, last_event, model, object, run_id, session_id, status, updated_at, error")
	obsWantKeys(t, r.Body, "choices, command, event, request_id, run_id, timestamp", "approval")
	x.advance("1000")
	x.want(x.get("/v1/runs/"+unfinished), 200, interrupted)

	// 64
	x.rstReplay("unfinished", unfinished, "interrupted")
	nr := x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "replacement")
	x.want(nr, 202, "")
	replacement := nr.field(t, "run_id")
	for _, old := range []string{unfinished, terminal, keyless} {
		if replacement == old {
			t.Fatalf("replacement reuses id %s", old)
		}
	}
	x.want(nr, 202, `{"run_id":"`+replacement+`","status":"started","replayed":false}`)
	x.want(x.observe(unfinished, `{"status":"running"}`), 409, hermesErr("observe: terminal runs cannot be changed", "mock_terminal_run"))
	x.want(x.rstStop(unfinished), 200, interrupted)
	r = x.get("/v1/runs/" + terminal)
	x.want(r, 200, "")
	sameJSON(t, r.Body, string(before.Body))
	x.rstReplay("terminal", terminal, "completed")
	x.want(x.get("/v1/runs/"+keyless), 404, rstNotFound(keyless))

	// 65: a second restart leaves the interrupted record as it was (by value:
	// the re-hydrated durable copy is sorted, error included).
	x.advance("5000")
	x.want(x.restart("stale"), 200, `{"owner":"stale","retained":3,"discarded":0,"simulated":true}`)
	r = x.get("/v1/runs/" + unfinished)
	x.want(r, 200, "")
	sameJSON(t, r.Body, interrupted)
	obsWantKeys(t, r.Body, "approval, created_at, error, last_event, model, object, run_id, session_id, status, updated_at")
	x.rstReplay("unfinished", unfinished, "interrupted")
	x.rstReplay("terminal", terminal, "completed")
	x.want(x.get("/v1/runs/"+keyless), 404, rstNotFound(keyless))
}

// acceptance 66: alive restart — the foreign owner may still finish the run.
func TestRestartAlive(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.rstStart("alive")
	running := x.observe(id, `{"status":"running"}`)
	x.want(running, 200, "")
	x.want(x.restart("alive"), 200, `{"owner":"alive","retained":1,"discarded":0,"simulated":true}`)
	x.advance("1000")
	sorted := `{"created_at":1700000000.0,"model":"hermes-agent","object":"hermes.run","run_id":"` + id + `","session_id":"` + id +
		`","status":"running","updated_at":1700000000.0`
	x.want(x.get("/v1/runs/"+id), 200, sorted+`}`)
	sameJSON(t, x.get("/v1/runs/"+id).Body, string(running.Body))
	x.want(x.rstStop(id), 409, hermesErr("Run is not active in this gateway process: "+id, "run_not_active"))
	x.rstReplay("alive", id, "running")
	done := `{"created_at":1700000000.0,"model":"hermes-agent","object":"hermes.run","run_id":"` + id + `","session_id":"` + id +
		`","status":"completed","updated_at":1700000001.0,"output":"foreign completion","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0},"last_event":"run.completed"}`
	x.want(x.observe(id, `{"status":"completed","output":"foreign completion"}`), 200, done)
	x.want(x.rstStop(id), 200, done)
	x.want(x.get("/v1/runs/"+id), 200, done)
	x.rstReplay("alive", id, "completed")
}

// acceptance 67: restart acts on the request's namespace only, and checkout
// undoes it.
func TestRestartNamespaceAndCheckout(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.ns = "a"
	a := x.rstStart("a")
	x.ns = "b"
	b := x.rstStart("b")
	x.ns = "a"
	cp := x.rstCheckpoint()
	x.want(x.post("/__admin/hermes/restart", `{"owner":"unknown"}`), 400, hermesErr("restart: owner must be explicitly stale or alive", ""))
	x.want(x.restart("stale"), 200, `{"owner":"stale","retained":1,"discarded":0,"simulated":true}`)
	x.rstReplay("a", a, "interrupted")
	x.ns = "b"
	x.want(x.get("/v1/runs/"+b), 200, obsRecord(b, "queued", "1700000000.0", "1700000000.0", ""))
	x.rstReplay("b", b, "queued")
	x.ns = "a"
	x.rstCheckout(cp)
	x.rstReplay("a", a, "queued")
	x.want(x.rstStop(a), 200, rstStopping(a))
}

// acceptance 68: stop before and after each kind of restart.
func TestRestartStopAcrossRestarts(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.rstStart("k")
	x.want(x.rstStop(id), 200, rstStopping(id))
	x.want(x.restart("alive"), 200, "")
	x.want(x.rstStop(id), 409, hermesErr("Run is not active in this gateway process: "+id, "run_not_active"))
	x.want(x.rstStop("missing"), 404, rstNotFound("missing"))
	x.want(x.restart("stale"), 200, "")
	x.advance("2500")
	want := `{"created_at":1700000000.0,"last_event":"run.interrupted","model":"hermes-agent","object":"hermes.run","run_id":"` + id +
		`","session_id":"` + id + `","status":"interrupted","updated_at":1700000002.5,"error":"` + rstInterruptedMsg + `"}`
	x.want(x.rstStop(id), 200, want)
	x.want(x.get("/v1/runs/"+id), 200, want)
}

// acceptance 69: one keyed run per state through a stale restart.
func TestRestartEveryState(t *testing.T) {
	states := []struct{ key, observe string }{
		{"queued", ""},
		{"running", `{"status":"running"}`},
		{"waiting_for_approval", `{"status":"waiting_for_approval"}`},
		{"stopping", `{"status":"stopping"}`},
		{"completed", `{"status":"completed","output":"synthetic result","usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}`},
		{"failed", `{"status":"failed","error":"synthetic failure"}`},
		{"cancelled", `{"status":"cancelled"}`},
		{"interrupted", `{"status":"interrupted"}`},
	}
	terminal := map[string]bool{"completed": true, "failed": true, "cancelled": true, "interrupted": true}
	x := newH(t, emulator.Options{})
	x.freeze()
	ids := map[string]string{}
	polls := map[string][]byte{}
	for _, s := range states {
		id := x.rstStart(s.key)
		ids[s.key] = id
		if s.observe != "" {
			x.want(x.observe(id, s.observe), 200, "")
		}
		r := x.get("/v1/runs/" + id)
		x.want(r, 200, "")
		if got := r.field(t, "status"); got != s.key {
			t.Fatalf("%s: status %s", s.key, got)
		}
		polls[s.key] = r.Body
	}
	x.want(x.post("/__admin/hermes/restart", `{"owner":["alive"]}`), 400, hermesErr("restart: owner must be explicitly stale or alive", ""))
	x.advance("1000")
	x.want(x.restart("stale"), 200, `{"owner":"stale","retained":8,"discarded":0,"simulated":true}`)
	for _, s := range states {
		id := ids[s.key]
		if !terminal[s.key] {
			x.rstReplay(s.key, id, "interrupted")
			r := x.get("/v1/runs/" + id)
			x.want(r, 200, "")
			if r.field(t, "error") != rstInterruptedMsg || r.field(t, "last_event") != "run.interrupted" {
				t.Fatalf("%s after restart: %s", s.key, r.Body)
			}
			continue
		}
		r := x.get("/v1/runs/" + id)
		x.want(r, 200, "")
		sameJSON(t, r.Body, string(polls[s.key]))
		x.rstReplay(s.key, id, s.key)
	}
}

// acceptance 71: the restart body must be exactly {"owner":"stale"|"alive"};
// a rejected restart changes nothing.
func TestRestartInvalidBody(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.rstStart("k")
	keyless := x.start()
	msg := hermesErr("restart: owner must be explicitly stale or alive", "")
	for _, b := range []string{`{}`, ``, `{"owner":"stale","x":1}`, `{"owner":"unknown"}`, `{"owner":["alive"]}`,
		`{"owner":"STALE"}`, `{"owner":null}`, `[]`, `"stale"`, " \n "} {
		x.want(x.post("/__admin/hermes/restart", b), 400, msg)
	}
	// Not JSON at all is the generic admin body error (controls §1, "Body").
	x.want(x.post("/__admin/hermes/restart", `{`), 400, adminErr("request body is not valid JSON"))
	x.want(x.get("/v1/runs/"+keyless), 200, obsRecord(keyless, "queued", "1700000000.0", "1700000000.0", ""))
	x.want(x.rstStop(id), 200, rstStopping(id))
}

// runs-api §4.2 example: a keyed running run interrupted by a stale restart
// comes back with sorted keys, then error and last_event appended (bytes).
func TestRestartInterruptedKeyOrder(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.rstStart("k")
	x.want(x.observe(id, `{"status":"running"}`), 200, "")
	x.want(x.restart("stale"), 200, "")
	x.advance("3600500")
	x.want(x.get("/v1/runs/"+id), 200, `{"created_at":1700000000.0,"model":"hermes-agent","object":"hermes.run","run_id":"`+id+
		`","session_id":"`+id+`","status":"interrupted","updated_at":1700003600.5,"error":"`+rstInterruptedMsg+`","last_event":"run.interrupted"}`)
}

// runs-api §6.3 step 5: stop removes approval and discards pending approvals,
// keeps queued steer text, and same-status repeats touch only the cache (§10.2).
func TestRestartStopEffects(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	waiting := x.rstStart("waiting")
	x.want(x.observe(waiting, `{"status":"waiting_for_approval"}`), 200, "")
	x.want(x.rstStop(waiting), 200, rstStopping(waiting))
	x.want(x.get("/v1/runs/"+waiting), 200, obsRecord(waiting, "stopping", "1700000000.0", "1700000000.0", `,"last_event":"run.stopping"`))
	x.want(x.post("/v1/runs/"+waiting+"/approval", `{"choice":"once"}`), 409,
		hermesErr("Run has no pending approval: "+waiting, "approval_not_pending"))

	steered := x.start()
	x.want(x.observe(steered, `{"status":"running"}`), 200, "")
	x.want(x.post("/v1/runs/"+steered+"/steer", `{"input":"a"}`), 200, "")
	x.want(x.rstStop(steered), 200, rstStopping(steered))
	x.want(x.observe(steered, `{"status":"completed"}`), 200, obsRecord(steered, "completed", "1700000000.0", "1700000000.0",
		`,"last_event":"run.completed","output":"","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0},"pending_steer":"a"`))

	// A repeated stop moves only the cached updated_at.
	x.advance("1000")
	x.want(x.rstStop(waiting), 200, rstStopping(waiting))
	x.want(x.get("/v1/runs/"+waiting), 200, obsRecord(waiting, "stopping", "1700000001.0", "1700000000.0", `,"last_event":"run.stopping"`))
	x.want(x.restart("alive"), 200, "")
	x.want(x.get("/v1/runs/"+waiting), 200, `{"created_at":1700000000.0,"last_event":"run.stopping","model":"hermes-agent","object":"hermes.run","run_id":"`+
		waiting+`","session_id":"`+waiting+`","status":"stopping","updated_at":1700000000.0}`)
}

// runs-api §10.2: same-status progress (scripted events, steer, a second
// approval.request) stays in the cache; status changes and results persist.
func TestRestartPersistRule(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	run := x.rstStart("run")
	x.want(x.observe(run, `{"status":"running"}`), 200, "") // persisted: status changed
	x.advance("1000")
	x.want(x.post("/__admin/hermes/runs/"+run+"/events", `{"events":[{"event":"tool.started","tool":"terminal"}]}`), 200,
		`{"run_id":"`+run+`","emitted":1,"buffered":1,"simulated":true}`)
	x.want(x.post("/v1/runs/"+run+"/steer", `{"input":"a"}`), 200, `{"object":"hermes.run.steer","run_id":"`+run+`","accepted":true}`)
	x.want(x.get("/v1/runs/"+run), 200, obsRecord(run, "running", "1700000001.0", "1700000000.0", `,"last_event":"run.steered"`))

	wait := x.rstStart("wait")
	x.want(x.observe(wait, `{"status":"waiting_for_approval","approval":{"command":"first"}}`), 200, "")  // persisted
	x.want(x.observe(wait, `{"status":"waiting_for_approval","approval":{"command":"second"}}`), 200, "") // cache only

	approved := x.rstStart("approved")
	x.want(x.observe(approved, `{"status":"waiting_for_approval","approval":{"command":"third"}}`), 200, "")
	x.want(x.post("/v1/runs/"+approved+"/approval", `{"choice":"once"}`), 200, "") // persisted: status changed

	x.want(x.restart("alive"), 200, `{"owner":"alive","retained":3,"discarded":0,"simulated":true}`)
	x.want(x.get("/v1/runs/"+run), 200, `{"created_at":1700000000.0,"model":"hermes-agent","object":"hermes.run","run_id":"`+run+
		`","session_id":"`+run+`","status":"running","updated_at":1700000000.0}`)
	r := x.get("/v1/runs/" + wait)
	x.want(r, 200, "")
	if cmd := r.JSON(t).(map[string]any)["approval"].(map[string]any)["command"]; cmd != "first" {
		t.Fatalf("durable approval command = %v, want first: %s", cmd, r.Body)
	}
	x.want(x.get("/v1/runs/"+approved), 200, `{"created_at":1700000001.0,"last_event":"approval.responded","model":"hermes-agent","object":"hermes.run","run_id":"`+
		approved+`","session_id":"`+approved+`","status":"running","updated_at":1700000001.0}`)
}

// runs-api §10.1 and controls §11: RunEvents checks visibility without
// hydrating; a failing control keeps the interruption its hydration did.
func TestRestartHydrationEffects(t *testing.T) {
	x := newH(t, emulator.Options{SSESubscribeWait: 10 * time.Millisecond})
	x.freeze()
	a := x.rstStart("a")
	b := x.rstStart("b")
	x.want(x.restart("stale"), 200, "")
	x.advance("1000")
	// No transport after a restart: visible, so 404 after the wait, and no interruption.
	x.want(x.get("/v1/runs/"+a+"/events"), 404, rstNotFound(a))
	x.want(x.observe(b, `{"status":"bogus"}`), 400, hermesErr("observe: expected a supported status", ""))
	x.advance("1000")
	if got := x.get("/v1/runs/" + a).JSON(t).(map[string]any)["updated_at"]; got != json.Number("1700000002.0") {
		t.Fatalf("a interrupted at %v, want 1700000002.0 (events must not hydrate)", got)
	}
	if got := x.get("/v1/runs/" + b).JSON(t).(map[string]any)["updated_at"]; got != json.Number("1700000001.0") {
		t.Fatalf("b interrupted at %v, want 1700000001.0 (the failed observe hydrated it)", got)
	}
}

// runs-api §10.3: a restart destroys transports, empties steer queues and
// clears the drain flag.
func TestRestartClearsProcessState(t *testing.T) {
	x := newH(t, emulator.Options{SSESubscribeWait: 10 * time.Millisecond})
	x.freeze()
	id := x.rstStart("k")
	x.want(x.observe(id, `{"status":"running"}`), 200, "")
	x.want(x.post("/v1/runs/"+id+"/steer", `{"input":"a"}`), 200, "")
	x.want(x.post("/__admin/hermes/drain", `{"draining":true}`), 200, `{"draining":true,"simulated":true}`)
	x.want(x.restart("alive"), 200, "")
	x.want(x.get("/__admin/hermes/drain"), 200, `{"draining":false}`)
	x.want(x.get("/v1/runs/"+id+"/events"), 404, rstNotFound(id))
	r := x.observe(id, `{"status":"completed"}`)
	x.want(r, 200, "")
	if _, ok := r.JSON(t).(map[string]any)["pending_steer"]; ok {
		t.Fatalf("steer queue survived the restart: %s", r.Body)
	}
}

// runs-api §9, §10.3: a restart covers every scope of the namespace; each
// scope sees only its own runs afterwards.
func TestRestartAllScopes(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	def := x.rstStart("k")
	x.want(x.post("/__admin/hermes/scope", `{"profile":"other","identity":"synthetic"}`), 200, "")
	oth := x.rstStart("k")
	if oth == def {
		t.Fatalf("same key in another scope replayed %s", def)
	}
	x.want(x.restart("stale"), 200, `{"owner":"stale","retained":2,"discarded":0,"simulated":true}`)
	x.want(x.get("/v1/runs/"+def), 404, rstNotFound(def))
	x.rstReplay("k", oth, "interrupted")
	x.want(x.post("/__admin/hermes/scope", `{"profile":"default","identity":"unauthenticated-test-listener"}`), 200, "")
	x.want(x.get("/v1/runs/"+oth), 404, rstNotFound(oth))
	x.rstReplay("k", def, "interrupted")
}

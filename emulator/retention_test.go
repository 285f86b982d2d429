package emulator_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// Acceptance section F (retention, items 72–83): lazy sweep ticks (runs-api
// §11.1), one sweep (§11.2, controls §11.7) and durable pruning (runs-api §11.3), with
// their exact equality boundaries. Every test starts from the frozen base.

// retSweep runs POST /__admin/hermes/sweep and checks the number removed.
func (x *h) retSweep(removed string) {
	x.t.Helper()
	x.want(x.post("/__admin/hermes/sweep", `{}`), 200, `{"cacheRemoved":`+removed+`,"simulated":true}`)
}

// retSet sets the frozen clock to ms.
func (x *h) retSet(ms string) { x.clock(`{"set":` + ms + `,"freeze":true}`) }

// retNew submits {"input":"synthetic"} with key and expects a new run; it returns the id.
func (x *h) retNew(key string) string {
	x.t.Helper()
	r := x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", key)
	id := r.field(x.t, "run_id")
	x.want(r, 202, `{"run_id":"`+id+`","status":"started","replayed":false}`)
	return id
}

// retStatus polls id and checks the status (200) or the 404 envelope (status "").
func (x *h) retStatus(id, status string) {
	x.t.Helper()
	r := x.get("/v1/runs/" + id)
	if status == "" {
		x.want(r, 404, rstNotFound(id))
		return
	}
	x.want(r, 200, "")
	if got := r.field(x.t, "status"); got != status {
		x.t.Fatalf("%s: status %s, want %s", id, got, status)
	}
}

// acceptance 72, 73: only completed, failed and cancelled records older than
// 3600 s (strictly) are swept.
func TestRetentionSweepStatuses(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.ns = "a"
	x.freeze()
	statuses := []string{"completed", "failed", "cancelled", "interrupted", "running"}
	ids := make([]string, len(statuses))
	for i, s := range statuses {
		ids[i] = x.start()
		x.want(x.observe(ids[i], `{"status":"`+s+`"}`), 200, "")
	}
	x.advance("3600000")
	x.retSweep("0")
	for i, s := range statuses {
		x.retStatus(ids[i], s)
	}
	x.advance("1")
	x.retSweep("3") // 73
	for i, s := range statuses {
		if i < 3 {
			s = ""
		}
		x.retStatus(ids[i], s)
	}
	// Another namespace was not swept.
	x.ns = "b"
	x.retSweep("0")
}

// acceptance 74: the lazy tick sweeps at the latest due tick, not at now.
func TestRetentionSweepTick(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start() // schedule: base + 60
	x.want(x.observe(id, `{"status":"completed"}`), 200, "")
	x.advance("3600001")
	x.retStatus(id, "completed") // tick base+3600: age exactly 3600, kept
	x.advance("59998")
	x.retStatus(id, "completed") // base+3659.999: next tick base+3660 not due
	x.advance("1")
	x.retStatus(id, "") // tick base+3660: swept
}

// acceptance 74 (neighbour): every run-addressing request evaluates the tick,
// not only GET (runs-api §11.1).
func TestRetentionTickOnEveryOperation(t *testing.T) {
	ops := []struct {
		name string
		call func(x *h, other string) res
	}{
		{"RunCreate", func(x *h, _ string) res { return x.post("/v1/runs", `{"input":"synthetic"}`) }},
		{"RunCreate invalid", func(x *h, _ string) res { return x.post("/v1/runs", `{"input":""}`) }},
		{"RunStop", func(x *h, other string) res { return x.post("/v1/runs/"+other+"/stop", "") }},
		{"RunApproval", func(x *h, other string) res { return x.post("/v1/runs/"+other+"/approval", `{"choice":"once"}`) }},
		{"RunSteer", func(x *h, other string) res { return x.post("/v1/runs/"+other+"/steer", `{"input":"x"}`) }},
		{"RunEvents", func(x *h, _ string) res { return x.get("/v1/runs/missing/events") }},
		{"observe", func(x *h, other string) res { return x.observe(other, `{"status":"queued"}`) }},
		{"events", func(x *h, other string) res {
			return x.post("/__admin/hermes/runs/"+other+"/events", `{"events":[{"event":"message.delta","delta":"x"}]}`)
		}},
		{"deliver", func(x *h, other string) res { return x.post("/__admin/hermes/runs/"+other+"/steer/deliver", "") }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			x := newH(t, emulator.Options{SSESubscribeWait: time.Millisecond})
			x.freeze()
			id := x.start()
			other := x.start()
			x.want(x.observe(id, `{"status":"completed"}`), 200, "")
			x.advance("3600001")
			op.call(x, other) // tick base+3600: kept
			x.advance("60000")
			op.call(x, other) // tick base+3660: swept
			// An explicit sweep would find nothing left: the tick removed it.
			x.retSweep("0")
			x.retStatus(id, "")
		})
	}
}

// acceptance 75: a terminal keyed run outlives 24 h until a keyed admission
// prunes its reservation and a sweep drops the cached copy.
func TestRetentionPruneThenSweep(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.rstStart("retained")
	x.want(x.observe(id, `{"status":"completed","output":"synthetic saved"}`), 200, "")
	x.advance("86400001")
	// The tick at base+86400 swept the cache; the run was hydrated back (sorted keys).
	saved := `{"created_at":1700000000.0,"last_event":"run.completed","model":"hermes-agent","object":"hermes.run","output":"synthetic saved",` +
		`"run_id":"` + id + `","session_id":"` + id + `","status":"completed","updated_at":1700000000.0,` +
		`"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}}`
	x.want(x.get("/v1/runs/"+id), 200, saved)
	x.start()
	x.want(x.get("/v1/runs/"+id), 200, saved)
	x.retNew("trigger")
	x.want(x.get("/v1/runs/"+id), 200, saved)
	x.retSweep("1")
	x.retStatus(id, "")
	if nid := x.retNew("retained"); nid == id {
		t.Fatalf("pruned key reused run id %s", id)
	}
}

// acceptance 76: replay at exactly T+86400, a new run 1 ms later, for every terminal status.
func TestRetentionPruneBoundary(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	statuses := []string{"completed", "failed", "cancelled", "interrupted"}
	ids := map[string]string{}
	for _, s := range statuses {
		ids[s] = x.rstStart(s)
		x.want(x.observe(ids[s], `{"status":"`+s+`"}`), 200, "")
	}
	x.retSet("1700086400000")
	for _, s := range statuses {
		x.rstReplay(s, ids[s], s)
	}
	x.advance("1")
	for _, s := range statuses {
		if nid := x.retNew(s); nid == ids[s] {
			t.Fatalf("%s: pruned key reused run id", s)
		}
	}
}

// acceptance 77: unfinished reservations never expire; same-status progress is
// cache-only (persist rule, runs-api §10.2), so a restart brings the older copy back.
func TestRetentionUnfinishedNeverExpires(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.rstStart("active")
	x.want(x.observe(id, `{"status":"running","last_event":"run.started"}`), 200, "")
	x.advance("172800000")
	x.want(x.observe(id, `{"status":"running","last_event":"tool.started"}`), 200, "")
	x.rstReplay("active", id, "running")
	x.want(x.get("/v1/runs/"+id), 200, obsRecord(id, "running", "1700172800.0", "1700000000.0", `,"last_event":"tool.started"`))
	x.want(x.restart("alive"), 200, `{"owner":"alive","retained":1,"discarded":0,"simulated":true}`)
	x.want(x.get("/v1/runs/"+id), 200, `{"created_at":1700000000.0,"last_event":"run.started","model":"hermes-agent","object":"hermes.run","run_id":"`+id+
		`","session_id":"`+id+`","status":"running","updated_at":1700000000.0}`)
	x.want(x.observe(id, `{"status":"completed"}`), 200, "")
	x.advance("86400000")
	x.rstReplay("active", id, "completed")
	x.advance("1")
	if nid := x.retNew("active"); nid == id {
		t.Fatalf("pruned key reused run id %s", id)
	}
}

// acceptance 78: a cached interrupted record survives pruning and sweeps, but
// not a restart.
func TestRetentionInterruptedCache(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.rstStart("interrupted")
	x.want(x.restart("stale"), 200, "")
	x.rstReplay("interrupted", id, "interrupted")
	x.advance("86400001")
	repl := x.retNew("interrupted")
	if repl == id {
		t.Fatalf("pruned key reused run id %s", id)
	}
	x.retSweep("0")
	x.retStatus(id, "interrupted")
	x.advance("3600001")
	x.retSweep("0")
	x.retStatus(id, "interrupted")
	x.want(x.restart("stale"), 200, `{"owner":"stale","retained":1,"discarded":1,"simulated":true}`)
	x.retStatus(id, "")
	x.rstReplay("interrupted", repl, "interrupted")
}

// acceptance 79: checkout restores pruned reservations, swept records and the clock.
func TestRetentionCheckout(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.ns = "a"
	old := x.rstStart("timeline")
	x.want(x.observe(old, `{"status":"completed"}`), 200, "")
	x.ns = "b"
	other := x.rstStart("other")
	x.ns = "a"
	cp := x.rstCheckpoint()
	x.advance("86400001")
	if nid := x.retNew("timeline"); nid == old {
		t.Fatalf("pruned key reused run id %s", old)
	}
	x.retSweep("0") // the admission's tick already swept it
	x.retStatus(old, "")
	x.rstCheckout(cp)
	clock := x.get("/__admin/clock").JSON(t).(map[string]any)
	if clock["now"].(json.Number) != "1700000000000" || clock["frozen"] != true {
		t.Fatalf("clock after checkout: %v", clock)
	}
	x.rstReplay("timeline", old, "completed")
	x.advance("3600000")
	x.retSweep("0")
	x.retStatus(old, "completed")
	x.ns = "b"
	x.retStatus(other, "queued")
}

// acceptance 80: pruning is committed before the conflict decision.
func TestRetentionPruneBeforeConflict(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	expired := x.rstStart("expired")
	x.want(x.observe(expired, `{"status":"completed"}`), 200, "")
	active := x.rstStart("active-conflict")
	x.advance("86400001")
	x.want(x.post("/v1/runs", `{"input":"different"}`, "Idempotency-Key", "active-conflict"), 409,
		hermesErr("Idempotency-Key was already used with a different request payload", "idempotency_key_conflict"))
	// The admission's tick swept expired from the cache, so nothing is discarded.
	x.want(x.restart("alive"), 200, `{"owner":"alive","retained":1,"discarded":0,"simulated":true}`)
	x.retStatus(expired, "")
	x.rstReplay("active-conflict", active, "queued")
}

// acceptance 81: invalid submissions never prune.
func TestRetentionInvalidDoesNotPrune(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	expired := x.rstStart("invalid-expired")
	x.want(x.observe(expired, `{"status":"completed"}`), 200, "")
	x.rstStart("invalid-active")
	x.advance("86400001")
	for _, k := range []string{"invalid-active", "invalid-expired", "invalid-new"} {
		x.want(x.post("/v1/runs", `{"input":""}`, "Idempotency-Key", k), 400, hermesErr("Missing 'input' field", ""))
	}
	// Nor do keyless admissions, bad keys or conflicts with a fresh key's own body.
	x.start()
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "bad key"), 400,
		hermesErr("Idempotency-Key must be 1-255 visible ASCII characters", "invalid_idempotency_key"))
	x.want(x.restart("alive"), 200, `{"owner":"alive","retained":2,"discarded":1,"simulated":true}`)
	x.retStatus(expired, "completed")
}

// acceptance 82: the sweep boundary is strict (age > 3600 s), in binary64 seconds.
func TestRetentionSweepBoundary(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start()
	x.want(x.observe(id, `{"status":"completed"}`), 200, "")
	x.retSet("1700003600000")
	x.retSweep("0")
	x.retStatus(id, "completed")
	x.retSet("1700003600001")
	x.retSweep("1")
	x.retStatus(id, "")
}

// acceptance 83: no operation other than a valid keyed RunCreate prunes.
func TestRetentionOnlyAdmissionPrunes(t *testing.T) {
	x := newH(t, emulator.Options{SSESubscribeWait: 10 * time.Millisecond})
	x.freeze()
	id := x.rstStart("kept")
	x.want(x.observe(id, `{"status":"completed","output":"synthetic saved"}`), 200, "")
	before := x.get("/v1/runs/" + id)
	x.advance("86400001")
	r := x.get("/v1/runs/" + id)
	x.want(r, 200, "")
	sameJSON(t, r.Body, string(before.Body))
	x.want(x.post("/v1/runs/"+id+"/stop", ""), 200, string(r.Body))
	// The transport expired with the tick at base+86400 (age > 300 s, no subscriber).
	x.want(x.get("/v1/runs/"+id+"/events"), 404, rstNotFound(id))
	x.want(x.post("/v1/runs/"+id+"/approval", `{"choice":"once"}`), 409,
		hermesErr("Run has no active approval session: "+id, "approval_not_active"))
	x.want(x.post("/v1/runs/"+id+"/steer", `{"input":"x"}`), 409,
		hermesErr("Run is not currently accepting steer input: "+id, "run_not_accepting_steer"))
	x.want(x.observe(id, `{"status":"running"}`), 409, hermesErr("observe: terminal runs cannot be changed", "mock_terminal_run"))
	x.want(x.post("/__admin/hermes/runs/"+id+"/events", `{"events":[{"event":"message.delta","delta":"x"}]}`), 409,
		hermesErr("events: terminal runs cannot be changed", "mock_terminal_run"))
	x.want(x.post("/__admin/hermes/runs/"+id+"/steer/deliver", ""), 409,
		hermesErr("deliver: terminal runs cannot be changed", "mock_terminal_run"))
	x.retSweep("1")
	x.want(x.restart("alive"), 200, `{"owner":"alive","retained":1,"discarded":0,"simulated":true}`)
	r = x.get("/v1/runs/" + id)
	x.want(r, 200, "")
	sameJSON(t, r.Body, string(before.Body))
	// The first valid keyed admission does prune, replay included.
	if nid := x.retNew("kept"); nid == id {
		t.Fatalf("pruned key reused run id %s", id)
	}
}

// runs-api §11.2: a transport without a subscriber expires when the sweep finds
// it older than 300 s (strictly); until then a late subscriber gets the buffer.
func TestRetentionTransportExpiry(t *testing.T) {
	x := newH(t, emulator.Options{SSESubscribeWait: 10 * time.Millisecond})
	x.freeze()
	kept := x.start()
	x.want(x.observe(kept, `{"status":"completed"}`), 200, "")
	gone := x.start()
	x.want(x.observe(gone, `{"status":"completed"}`), 200, "")
	x.advance("300000")
	x.retSweep("0")
	r := x.get("/v1/runs/" + kept + "/events")
	x.want(r, 200, `data: {"event": "run.completed", "run_id": "`+kept+`", "timestamp": 1700000000.0, "output": "", `+
		`"usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}}`+"\n\n: stream closed\n\n")
	if ct := r.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	// The stream ended, so its transport is gone.
	x.want(x.get("/v1/runs/"+kept+"/events"), 404, rstNotFound(kept))
	x.advance("1")
	x.retSweep("0")
	x.want(x.get("/v1/runs/"+gone+"/events"), 404, rstNotFound(gone))
	x.retStatus(gone, "completed")
}

// runs-api §11.1: the first tick fixes the schedule's phase; a RunCreate with
// an empty body evaluates no tick (§6.1 step 5 precedes step 6).
func TestRetentionNoTickOnEmptyBody(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.want(x.post("/v1/runs", ""), 400, hermesErr("Invalid JSON", ""))
	x.advance("30000")
	id := x.start() // first tick: schedule base+90
	x.want(x.observe(id, `{"status":"completed"}`), 200, "")
	x.advance("3630500")
	x.retStatus(id, "completed") // tick base+3630: age exactly 3600
	x.advance("29500")
	x.retStatus(id, "") // tick base+3690
}

// runs-api §10.3: a restart moves the schedule to now+60.
func TestRetentionScheduleAfterRestart(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.start() // schedule base+60
	x.advance("30000")
	x.want(x.restart("alive"), 200, "") // schedule base+90
	id := x.start()
	x.want(x.observe(id, `{"status":"completed"}`), 200, "")
	x.advance("3600500")
	x.retStatus(id, "completed") // tick base+3630: age exactly 3600
	x.advance("30000")
	x.retStatus(id, "completed") // base+3660.5: next tick base+3690 not due
	x.advance("29500")
	x.retStatus(id, "") // tick base+3690
}

// runs-api §11.2: "exactly one sweep, at the latest due tick" — a record whose
// age at that tick is not over 3600 s stays even though now is far later.
func TestRetentionLatestTickOnly(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.start() // schedule base+60
	x.advance("3570000")
	id := x.start()
	x.want(x.observe(id, `{"status":"cancelled"}`), 200, "") // updated base+3570; tick base+3540 evaluated
	x.advance("3629999")                                     // now base+7199.999, latest tick base+7140
	x.retStatus(id, "cancelled")                             // age 3570 at the tick
	x.advance("1")                                           // tick base+7200: age 3630
	x.retStatus(id, "")
}

// runs-api §10.2, §10.4, §11.3 with --db: what the logical restart, the
// persist rule and pruning left in the file is what a real restart finds.
func TestRetentionDurableMirror(t *testing.T) {
	db := filepath.Join(t.TempDir(), "hermes.db")
	x := newH(t, emulator.Options{DBPath: db})
	x.freeze()
	pruned := x.rstStart("pruned")
	x.want(x.observe(pruned, `{"status":"completed"}`), 200, "")
	waiting := x.rstStart("waiting")
	x.want(x.observe(waiting, `{"status":"waiting_for_approval","approval":{"command":"first"}}`), 200, "")
	x.want(x.observe(waiting, `{"status":"waiting_for_approval","approval":{"command":"second"}}`), 200, "")
	done := x.rstStart("done")
	x.want(x.restart("alive"), 200, `{"owner":"alive","retained":3,"discarded":0,"simulated":true}`)
	x.advance("86400001")
	x.want(x.observe(done, `{"status":"completed","output":"foreign completion"}`), 200, "")
	trigger := x.retNew("trigger")
	if err := x.srv.Close(); err != nil {
		t.Fatal(err)
	}

	y := newH(t, emulator.Options{DBPath: db})
	y.retStatus(pruned, "")
	r := y.get("/v1/runs/" + waiting)
	y.want(r, 200, "")
	m := r.JSON(t).(map[string]any)
	if m["status"] != "interrupted" || m["approval"].(map[string]any)["command"] != "first" || m["updated_at"] != json.Number("1700086400.001") {
		t.Fatalf("waiting after the real restart: %s", r.Body)
	}
	y.want(y.get("/v1/runs/"+done), 200, `{"created_at":1700000000.0,"last_event":"run.completed","model":"hermes-agent","object":"hermes.run",`+
		`"output":"foreign completion","run_id":"`+done+`","session_id":"`+done+`","status":"completed","updated_at":1700086400.001,`+
		`"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}}`)
	y.rstReplay("trigger", trigger, "interrupted")
	y.rstReplay("done", done, "completed")
	if nid := y.retNew("pruned"); nid == pruned {
		t.Fatalf("pruned key reused run id %s", pruned)
	}
}

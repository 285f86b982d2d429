package emulator_test

// Acceptance section L: a real restart on a --db file (runs-api §10.4) and the
// isolation of embedded instances without one. The "process" is an embedded
// server: Close() stops it the way the binary stops on SIGTERM, and a new
// server opened on the same file is the restarted process.

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

const interruptedMsg = "The gateway restarted before this run settled."

// durableOpen starts an emulator on the SQLite file db; cleanup closes it
// unless the test stopped it first (Close is idempotent).
func durableOpen(t *testing.T, db string, opts emulator.Options) *h {
	t.Helper()
	opts.DBPath = db
	return newH(t, opts)
}

// durableStop stops the emulator like the end of a process.
func durableStop(t *testing.T, x *h) {
	t.Helper()
	if err := x.srv.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// durableObj decodes a JSON object body.
func durableObj(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("not an object: %v: %s", err, body)
	}
	return m
}

// acceptance 161, 162
func TestRealRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "f.db")
	x := durableOpen(t, db, emulator.Options{})
	x.freeze()
	done := x.start("Idempotency-Key", "done")
	live := x.start("Idempotency-Key", "live")
	keyless := x.start()
	x.want(x.observe(done, `{"status":"completed","output":"saved","usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}`), 200, "")
	x.want(x.observe(live, `{"status":"running"}`), 200, "")
	doneBefore := x.get("/v1/runs/" + done)
	liveBefore := x.get("/v1/runs/" + live)
	x.want(doneBefore, 200, "")
	x.want(liveBefore, 200, "")
	durableStop(t, x)

	y := durableOpen(t, db, emulator.Options{})
	y.advance("5000") // the clock state came back frozen at the base (163)
	// 161: the completed record has the same values, keys sorted.
	r := y.get("/v1/runs/" + done)
	y.want(r, 200, "")
	sameJSON(t, r.Body, string(doneBefore.Body))
	if keys := jsonKeys(t, r.Body); !slices.IsSorted(keys) {
		t.Fatalf("completed record keys not sorted: %v", keys)
	}
	if r.field(t, "output") != "saved" {
		t.Fatalf("output lost: %s", r.Body)
	}
	// 161: the running run is interrupted at its first access: the durable copy's
	// keys sorted, then error and last_event appended (runs-api §4.2 example).
	wantLive := `{"created_at":1700000000.0,"model":"hermes-agent","object":"hermes.run","run_id":"` + live +
		`","session_id":"` + live + `","status":"interrupted","updated_at":1700000005.0,"error":"` + interruptedMsg +
		`","last_event":"run.interrupted"}`
	if liveBefore.field(t, "last_event") != "" {
		t.Fatalf("fixture: observe running set last_event: %s", liveBefore.Body)
	}
	for range 2 {
		r = y.get("/v1/runs/" + live)
		y.want(r, 200, wantLive)
		y.advance("1000") // the second access sees the same updated_at
	}
	y.want(y.get("/v1/runs/"+keyless), 404, hermesErr("Run not found: "+keyless, "run_not_found"))
	y.want(y.post("/v1/runs/"+live+"/stop", ""), 200, string(r.Body))

	// 162: the old key replays interrupted; the id counter continues.
	y.want(y.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "live"), 202, `{"run_id":"`+live+`","status":"interrupted","replayed":true}`)
	y.want(y.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "done"), 202, `{"run_id":"`+done+`","status":"completed","replayed":true}`)
	fresh := newH(t, emulator.Options{})
	for range 3 {
		fresh.start()
	}
	fourth := fresh.start()
	id := y.start()
	if id != fourth || id == done || id == live || id == keyless {
		t.Fatalf("new run %s after restart; earlier %s %s %s; fourth id %s", id, done, live, keyless, fourth)
	}
	// A new key creates a new local run: the fifth id.
	y.want(y.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "replacement"), 202, "")

	// A second restart keeps the interrupted record as it is.
	durableStop(t, y)
	z := durableOpen(t, db, emulator.Options{})
	z.advance("1000")
	r2 := z.get("/v1/runs/" + live)
	z.want(r2, 200, "")
	sameJSON(t, r2.Body, wantLive)
	if keys := jsonKeys(t, r2.Body); !slices.IsSorted(keys) {
		t.Fatalf("rehydrated keys not sorted: %v", keys)
	}
	z.want(z.get("/v1/runs/"+id), 404, hermesErr("Run not found: "+id, "run_not_found"))
}

// acceptance 163
func TestRealRestartClock(t *testing.T) {
	db := filepath.Join(t.TempDir(), "f.db")
	x := durableOpen(t, db, emulator.Options{})
	x.freeze()
	durableStop(t, x)
	y := durableOpen(t, db, emulator.Options{})
	c := durableObj(t, y.get("/__admin/clock").Body)
	if c["now"] != 1700000000000.0 || c["frozen"] != true {
		t.Fatalf("clock after restart: %v", c)
	}
	// A live clock keeps its offset: now continues from the set instant.
	y.clock(`{"set":1600000000000,"freeze":false}`)
	durableStop(t, y)
	z := durableOpen(t, db, emulator.Options{})
	c = durableObj(t, z.get("/__admin/clock").Body)
	if now, _ := c["now"].(float64); c["frozen"] != false || now < 1600000000000 || now > 1600000000000+60_000 {
		t.Fatalf("live clock after restart: %v", c)
	}
}

// acceptance 164
func TestRealRestartForgetsProcessState(t *testing.T) {
	db := filepath.Join(t.TempDir(), "f.db")
	x := durableOpen(t, db, emulator.Options{})
	x.freeze()
	x.want(x.post("/__admin/faults", `{"pathPrefix":"/nothing","status":418}`), 201, "")
	x.want(x.do("PUT", "/__admin/credentials", `{"credentials":{"sk-test-123456":"a"}}`), 200, `{"mapped":1}`)
	x.start("Idempotency-Key", "k")
	x.start()
	x.get("/v1/runs/missing")
	x.want(x.post("/__admin/checkpoints", ""), 201, "")
	x.want(x.post("/__admin/hermes/drain", `{"draining":true}`), 200, "")
	tl := durableObj(t, x.get("/__admin/timeline").Body)
	if n := len(tl["checkpoints"].([]any)); n < 4 {
		t.Fatalf("expected several checkpoints before the stop, got %d", n)
	}
	durableStop(t, x)

	y := durableOpen(t, db, emulator.Options{})
	y.want(y.get("/v1/runs/missing"), 404, hermesErr("Run not found: missing", "run_not_found"))
	y.want(y.get("/__admin/faults"), 200, `{"faults":[]}`)
	y.want(y.get("/__admin/credentials"), 200, `{"credentials":[]}`)
	j := durableObj(t, y.get("/__admin/requests").Body)
	reqs := j["requests"].([]any)
	if len(reqs) != 1 {
		t.Fatalf("journal after restart: %v", j)
	}
	e := reqs[0].(map[string]any)
	if e["operationId"] != "RunGet" || e["path"] != "/v1/runs/missing" || e["status"] != 404.0 {
		t.Fatalf("journal entry: %v", e)
	}
	y.want(y.get("/__admin/metrics"), 200, "")
	m := durableObj(t, y.get("/__admin/metrics").Body)
	if m["requests"] != 1.0 || !reflect.DeepEqual(m["byOperation"], map[string]any{"RunGet 404": 1.0}) || m["faults"] != 0.0 {
		t.Fatalf("metrics after restart: %v", m)
	}
	y.want(y.get("/__admin/timeline"), 200,
		`{"branches":{"main":"cp_00000001"},"checkpoints":[{"id":"cp_00000001","branch":"main","parent":null,"at":1700000000000}]}`)
	y.want(y.get("/__admin/hermes/drain"), 200, `{"draining":false}`)
	// The namespace found in the file exists from start-up.
	y.want(y.get("/__admin/namespaces"), 200, `{"default":"default","namespaces":["default"]}`)
}

// acceptance 165
func TestEmbeddedInstancesAreIsolated(t *testing.T) {
	a := newH(t, emulator.Options{})
	b := newH(t, emulator.Options{})
	if id := a.start(); id != run1 {
		t.Fatalf("first id in a: %s", id)
	}
	b.want(b.get("/v1/runs/"+run1), 404, hermesErr("Run not found: "+run1, "run_not_found"))
	if id := b.start(); id != run1 {
		t.Fatalf("first id in b: %s", id)
	}
	a.want(a.observe(run1, `{"status":"completed"}`), 200, "")
	if b.get("/v1/runs/"+run1).field(t, "status") != "queued" {
		t.Fatal("b sees a's change")
	}
	// The same holds through Handler() without a listener.
	c := &h{t: t, srv: newH(t, emulator.Options{NoListener: true}).srv, inproc: true}
	c.want(c.get("/v1/runs/"+run1), 404, hermesErr("Run not found: "+run1, "run_not_found"))
	if id := c.start(); id != run1 {
		t.Fatalf("first id in c: %s", id)
	}
}

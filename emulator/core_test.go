package emulator_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

const run1 = "run_4e685a726271445348426a4a70783364"

// The README walk-through (issue 3): submit with a key, replay, conflict, poll,
// observe running, stop, observe cancelled, poll, terminal replay, 404.
//
// It runs over every wiring: memory and file database, listener and Handler().
func TestWalkthrough(t *testing.T) {
	for _, w := range []struct {
		inproc, file bool
	}{{false, false}, {true, false}, {false, true}, {true, true}} {
		opts := emulator.Options{}
		if w.file {
			opts.DBPath = filepath.Join(t.TempDir(), "w.db")
		}
		x := newH(t, opts)
		x.inproc = w.inproc
		x.freeze()
		key := []string{"Idempotency-Key", "delivery"}
		x.want(x.post("/v1/runs", `{"input":"synthetic"}`, key...), 202, `{"run_id":"`+run1+`","status":"started","replayed":false}`)
		r := x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", " delivery ")
		x.want(r, 202, `{"run_id":"`+run1+`","status":"queued","replayed":true}`)
		if r.Header.Get("Idempotency-Replayed") != "true" {
			t.Fatalf("replay header: %v", r.Header)
		}
		x.want(x.post("/v1/runs", `{"input":"different"}`, key...), 409,
			hermesErr("Idempotency-Key was already used with a different request payload", "idempotency_key_conflict"))
		x.want(x.get("/v1/runs/"+run1), 200, `{"object":"hermes.run","run_id":"`+run1+`","status":"queued","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"`+run1+`","model":"hermes-agent"}`)
		x.want(x.observe(run1, `{"status":"running"}`), 200, "")
		x.want(x.post("/v1/runs/"+run1+"/stop", ""), 200, `{"run_id":"`+run1+`","status":"stopping"}`)
		x.want(x.observe(run1, `{"status":"cancelled"}`), 200, "")
		x.want(x.get("/v1/runs/"+run1), 200, `{"object":"hermes.run","run_id":"`+run1+`","status":"cancelled","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"`+run1+`","model":"hermes-agent","last_event":"run.cancelled"}`)
		x.want(x.post("/v1/runs", `{"input":"synthetic"}`, key...), 202, `{"run_id":"`+run1+`","status":"cancelled","replayed":true}`)
		x.want(x.get("/v1/runs/missing"), 404, hermesErr("Run not found: missing", "run_not_found"))
	}
}

// acceptance 195
func TestDeterministicIDs(t *testing.T) {
	x := newH(t, emulator.Options{})
	want := []string{run1, "run_57703349705258663741626769756c5a", "run_77774b677732707967695639616f3561"}
	for i, w := range want {
		if got := x.start(); got != w {
			t.Fatalf("start %d = %s, want %s", i, got, w)
		}
	}
}

// acceptance 189
func TestPageNotFound(t *testing.T) {
	x := newH(t, emulator.Options{})
	for _, c := range [][2]string{{"POST", "/v1/runs/"}, {"GET", "/v1/runs"}, {"DELETE", "/v1/runs/x"}, {"GET", "/v1/runs/x/stop"}, {"GET", "/missing"}, {"GET", "/p/default/v1/runs/x"}, {"POST", "/v1/runs//stop"}} {
		r := x.do(c[0], c[1], "")
		x.want(r, 404, `{"message":"page not found"}`)
		if !strings.HasPrefix(r.Header.Get("X-Mockingbird"), "hermes@") {
			t.Fatalf("x-mockingbird missing on %v", c)
		}
	}
}

package emulator_test

import (
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// Edges of the autopilot found by driving the binary: each test fails without
// the fix it names.

// A frozen clock fires due steps only when a request resets, sets or advances
// it (docs/scenarios.md §2): a refused set or advance moves nothing, and
// neither does a reset other than true, which the clock ignores (controls §5).
func TestScenarioFrozenClockRefusedMoveFiresNothing(t *testing.T) {
	x := newH(t, emulator.Options{Scenarios: mustSet(t, `{"scenarios":[{"name":"now","steps":[{"after":0,"observe":{"status":"running"}}]}]}`)})
	x.freeze()
	id := x.start()
	for _, c := range []struct {
		body   string
		status int
		answer string // "" for the clock state
	}{
		{`{"advance":"bad"}`, 400, adminErr(`advance: expected ms or "15m"-style`)},
		{`{"set":"nope","advance":1000}`, 400, adminErr("set: expected epoch ms or ISO-8601")},
		{`{"advance":1e308}`, 400, adminErr("advance: out of range (the clock stays within ±8.64e15 ms)")},
		{`{"reset":false}`, 200, ""},
		{`{"freeze":true}`, 200, ""},
	} {
		x.want(x.post("/__admin/clock", c.body), c.status, c.answer)
		if s := x.status(id); s != "queued" {
			t.Fatalf("after %s: %s, want queued (the clock did not move)", c.body, s)
		}
	}
	x.advance("0")
	if s := x.status(id); s != "running" {
		t.Fatalf("after an advance by 0: %s, want running", s)
	}
}

// A scenario waiting for an approval answer ends when a manual observe makes
// the run terminal: a terminal run takes no answer, so it would otherwise wait
// forever, the run view showing it on a finished run and the namespace
// holding it after the run is swept (Cursor.Finished).
func TestScenarioWaitingEndsWhenTheRunFinishes(t *testing.T) {
	x := newH(t, emulator.Options{Scenarios: mustSet(t, `{"scenarios":[{"name":"ask","steps":[
		{"after":0,"approval":{"command":"make deploy"}},{"after":100,"observe":{"status":"completed"}}]}]}`)})
	x.freeze()
	id := x.start()
	x.advance("0")
	if p := x.get("/__admin/hermes/runs/" + id).JSON(t).(map[string]any)["scenario"]; p == nil {
		t.Fatal("no scenario position while the approval waits")
	}
	x.want(x.observe(id, `{"status":"completed","output":"by hand"}`), 200, "")
	if p := x.get("/__admin/hermes/runs/" + id).JSON(t).(map[string]any)["scenario"]; p != nil {
		t.Fatalf("scenario of the completed run: %v, want null", p)
	}
	x.want(x.post("/v1/runs/"+id+"/approval", `{"choice":"once"}`), 409, hermesErr("Run has no active approval session: "+id, "approval_not_active"))
}

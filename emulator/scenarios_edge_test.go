package emulator_test

import (
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// Edges of the autopilot found by driving the binary: each test fails without
// the fix it names.

// A frozen clock fires due steps only when a request resets, sets or advances
// it (scenarios §2): a refused set or advance moves nothing, and
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

// Only a stop that makes the run stopping switches its scenario to on_stop
// (scenarios §3). A stop while an on_stop approval waits withdraws
// that approval: on_stop starts again and asks anew — the run was left
// stopping for ever, its scenario waiting for an answer nothing could give.
// A stop of a run a step made stopping leaves the steps going.
func TestScenarioStopOnlyWhenItMakesTheRunStopping(t *testing.T) {
	x := newH(t, emulator.Options{Scenarios: mustSet(t, `{"scenarios":[
		{"name":"winding","match":{"input":"^wind"},"steps":[
			{"after":0,"observe":{"status":"stopping"}},{"after":100,"observe":{"status":"completed","output":"wound down"}}],
		 "on_stop":[{"after":0,"observe":{"status":"cancelled"}}]},
		{"name":"ask","steps":[{"after":0,"observe":{"status":"running"}},{"after":"1h","observe":{"status":"completed"}}],
		 "on_stop":[{"after":0,"approval":{"command":"keep the partial work?"}},{"after":100,"observe":{"status":"cancelled"}}]}]}`)})
	x.freeze()
	wind, ask := x.startInput("wind down"), x.startInput("work")
	x.advance("0")
	stop := func(id string) {
		x.want(x.post("/v1/runs/"+id+"/stop", ""), 200, `{"run_id":"`+id+`","status":"stopping"}`)
	}
	stop(wind)
	stop(ask)
	x.advance("0") // ask: on_stop[0] asks
	if s := x.status(ask); s != "waiting_for_approval" {
		t.Fatalf("ask after the stop: %s", s)
	}
	stop(ask) // withdraws the approval: on_stop again
	x.advance("0")
	if s := x.status(ask); s != "waiting_for_approval" {
		t.Fatalf("ask after the second stop: %s, want waiting_for_approval (asked again)", s)
	}
	x.want(x.post("/v1/runs/"+ask+"/approval", `{"choice":"once"}`), 200, "")
	x.advance("100")
	if s := x.status(ask); s != "cancelled" {
		t.Fatalf("ask: %s, want cancelled", s)
	}
	if rec := x.get("/v1/runs/" + wind).String(); !strings.Contains(rec, `"status":"completed"`) || !strings.Contains(rec, `"output":"wound down"`) {
		t.Fatalf("wind: %s, want completed by its steps", rec)
	}
}

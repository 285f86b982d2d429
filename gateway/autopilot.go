package gateway

import (
	"fmt"
	"math"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
	"github.com/hermes-emulator/hermes-emulator/state"
)

// The autopilot (docs/scenarios.md) applied to state: scenario sets per
// namespace (scenarios.Sets), each scenario-driven run's cursor in its main
// branch's State, and the queue of due steps kept in step with those cursors.
// Every step is applied as the control it names (controls.go), under the
// gateway lock, with a checkpoint on main.

// autopilot is the gateway's scenario machinery; its fields are under g.mu.
type autopilot struct {
	sets     scenarios.Sets    // every namespace's set; Default is Options.Scenarios
	due      scenarios.Queue   // the next due step of every run of every main branch
	runner   *scenarios.Runner // the timer of the running clock
	admitted uint64            // scenario-driven admissions so far (the tie order)
	// stepClock, while an advance of a live clock fires steps, is the clock a
	// checkpoint captures: live, reading the step's due time. The gateway's
	// clock is then frozen at that time only so that the step reads it.
	stepClock *runs.Clock
}

func (g *Gateway) startAutopilot() {
	g.auto.sets.Default = g.opts.Scenarios
	g.auto.runner = scenarios.NewRunner(ticker{g})
	g.auto.due.Notify = g.auto.runner.Kick
}

// SetScenarios replaces ns's scenario set (PUT /__admin/hermes/scenarios); runs
// admitted keep the scenario they matched. Bounds (scenarios.Sets.Put): 429 past
// Options.MaxNamespaces own sets (or deletions), 409 past what all sets hold.
func (g *Gateway) SetScenarios(ns string, s *scenarios.Set) *runs.Error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.auto.sets.Put(ns, s, g.opts.MaxNamespaces)
}

// Scenarios returns ns's scenario set: its own, else the default; nil when
// it has none (GET /__admin/hermes/scenarios).
func (g *Gateway) Scenarios(ns string) *scenarios.Set {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.auto.sets.Of(ns)
}

// DeleteScenarios leaves ns without scenarios, not even the default, until
// the next SetScenarios (DELETE /__admin/hermes/scenarios).
func (g *Gateway) DeleteScenarios(ns string) *runs.Error { return g.SetScenarios(ns, nil) }

// scenarioAdmit starts a new run's cursor when a scenario of its namespace
// matches it (scenarios §1.2): main branch only, new runs only.
func (x *tx) scenarioAdmit(id string, sub *runs.Submission) {
	if x.view || x.branch != "main" {
		return
	}
	sc := x.g.auto.sets.Of(x.ns.name).ForRun(id, sub)
	if sc == nil {
		return
	}
	x.g.auto.admitted++
	x.setCursor(id, scenarios.Start(sc, x.g.auto.admitted, x.g.nowMs()), true)
}

// scenarioStopped switches run id's scenario to on_stop after an accepted
// RunStop, unless the run was stopping already (Cursor.Stopped).
func (x *tx) scenarioStopped(id string, wasStopping bool) {
	x.moveCursor(id, func(c scenarios.Cursor, at float64) (scenarios.Cursor, bool) { return c.Stopped(wasStopping, at) })
}

// scenarioAnswered resumes run id's scenario, or enters if_denied, after a
// successful RunApproval.
func (x *tx) scenarioAnswered(id string, deny bool) {
	x.moveCursor(id, func(c scenarios.Cursor, at float64) (scenarios.Cursor, bool) { return c.Answered(deny, at) })
}

// scenarioFinished ends run id's scenario when it waits for an approval
// answer and a manual observe made the run terminal (Cursor.Finished).
func (x *tx) scenarioFinished(id string) {
	x.moveCursor(id, func(c scenarios.Cursor, _ float64) (scenarios.Cursor, bool) { return c.Finished() })
}

// moveCursor moves run id's cursor on every branch (main may be checked out there).
func (x *tx) moveCursor(id string, move func(scenarios.Cursor, float64) (scenarios.Cursor, bool)) {
	if x.view {
		return
	}
	if c, ok := x.st.Cursor(id); ok {
		next, live := move(c, x.g.nowMs())
		x.setCursor(id, next, live)
	}
}

// setCursor stores (live) or drops run id's cursor; the queue follows on commit.
func (x *tx) setCursor(id string, c scenarios.Cursor, live bool) {
	x.st.SetCursor(id, c, live)
	x.dirty = true
	x.cursorIDs = append(x.cursorIDs, id)
}

// syncCursors makes the queue follow the cursors a committed tx changed
// (all of its namespace's when it replaced the state). Callers hold g.mu.
func (g *Gateway) syncCursors(x *tx) {
	if x.view || x.branch != "main" {
		return
	}
	if x.resync {
		g.resyncCursors(x.ns.name, x.st)
		return
	}
	for _, id := range x.cursorIDs {
		c, ok := x.st.Cursor(id)
		g.auto.due.Follow(scenarios.Key{NS: x.ns.name, Run: id}, c, ok)
	}
}

// resyncCursors rebuilds ns's queue entries from st, its new main state
// (checkout, restart, reset).
func (g *Gateway) resyncCursors(ns string, st state.State) {
	g.auto.due.RemoveNS(ns)
	st.EachCursor(func(id string, c scenarios.Cursor) {
		g.auto.due.Follow(scenarios.Key{NS: ns, Run: id}, c, true)
	})
}

// fireStep applies the step e names as the control it is (scenarios §1.1)
// and moves the cursor on, committing a checkpoint on main. A control that
// fails ends the run's scenario with one WARN line and, the run still being
// there, a run.changed (no checkpoint: the control failed) so that a
// follower of its view sees the scenario end. Callers hold g.mu.
func (g *Gateway) fireStep(e scenarios.Entry) {
	x, _ := g.begin(Main(e.NS)) // main always exists
	c, ok := x.st.Cursor(e.Run)
	if !ok || c.Waiting || c.Due != e.Due {
		// The queue follows every cursor move (checkAutopilot), so this is a bug.
		panic(fmt.Sprintf("gateway: scenario step of %s/%s is no longer due", e.NS, e.Run))
	}
	if err := x.applyStep(e.Run, c); err != nil {
		x.setCursor(e.Run, c, false)
		if r, ok := x.st.Run(e.Run); ok { // its view's scenario is now null
			x.told("run.changed", e.Run, r.Status, nil)
		}
		g.commit(x)
		g.opts.Logger.Warn("scenario step failed; the run's scenario ends", "namespace", e.NS, "run", e.Run,
			"scenario", c.Scenario.Name, "step", c.Path(), "error", err.Message)
		return
	}
	next, live := c.Fired(g.nowMs())
	x.setCursor(e.Run, next, live)
	g.commit(x)
	g.tl(x.ns).Commit(x.branch)
	if g.opts.OnScenarioStep != nil {
		g.opts.OnScenarioStep(c.Scenario.Name)
	}
}

// applyStep applies c's next step to run id, addressed first as the control
// would; with steers: deliver, queued steer texts are delivered just before it
// (which leaves the run's record as it was), and kept when the step fails.
func (x *tx) applyStep(id string, c scenarios.Cursor) *runs.Error {
	run, err := x.addressed(id)
	if err != nil {
		return err
	}
	st, addressed := c.Step(), x.st
	if c.Scenario.DeliverSteers && st.Action != scenarios.DeliverSteers && x.st.SteerCount(id) > 0 {
		if _, err := x.deliver(id, run); err != nil {
			return err
		}
	}
	switch st.Action {
	case scenarios.Observe, scenarios.Approval:
		_, err = x.observe(id, run, st.Body, true)
	case scenarios.Events:
		_, err = x.events(id, run, st.Body, true)
	case scenarios.DeliverSteers:
		_, err = x.deliver(id, run)
	}
	if err != nil {
		x.st = addressed // nothing applied: the steers stay queued
	}
	return err
}

// advanceScenarios fires, in due order, every step due up to c's reading
// (POST /__admin/clock), each with the clock reading its own due time — never
// before the reading the request started from — and returns when they have
// fired (scenarios §2). A frozen clock that the request did not move
// (runs.Clock.ApplyRequest: no reset, set or advance applied — a refused one
// included) fires nothing. Callers hold g.mu and then set the clock to c.
func (g *Gateway) advanceScenarios(moved bool, c runs.Clock) {
	if c.Frozen && !moved {
		return
	}
	wall := g.opts.Wall()
	target := c.Now(wall)
	floor := math.Min(g.nowMs(), target)
	saved := g.clock
	defer func() { g.clock, g.auto.stepClock = saved, nil }()
	g.auto.due.Drain(target, func(e scenarios.Entry) {
		at := math.Max(e.Due, floor)
		g.clock = runs.Clock{Frozen: true, FrozenMs: at, OffsetMs: saved.OffsetMs}
		if !c.Frozen {
			// The clock the request leaves runs: a checkpoint of this step
			// records it running, as it read at the step, not frozen there.
			g.auto.stepClock = &runs.Clock{OffsetMs: at - wall}
		}
		g.fireStep(e)
	})
}

// ticker is the gateway as the runner's host: it fires what is due while the
// clock runs.
type ticker struct{ g *Gateway }

// Tick fires every step due now (running clock) and tells the runner how long
// to wait for the next one.
func (t ticker) Tick() (wait time.Duration, ok bool) {
	g := t.g
	err := g.locked(func() *runs.Error {
		if g.clock.Frozen || g.auto.due.Len() == 0 {
			return nil // nothing can fall due: the clock is not read
		}
		g.auto.due.Drain(g.nowMs(), g.fireStep)
		wait, ok = g.auto.due.Until(g.nowMs())
		return nil
	})
	if err != nil { // a bug under the lock (locked): say so rather than stop quietly
		g.opts.Logger.Warn("scenario tick failed", "error", err.Message)
	}
	return wait, ok
}

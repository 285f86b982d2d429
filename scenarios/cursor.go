package scenarios

import "strconv"

// Phase is the step list a cursor walks.
type Phase uint8

// The phases of a scenario (scenarios §3).
const (
	InSteps    Phase = iota // the scenario's steps
	InIfDenied              // if_denied, after an approval was denied
	InOnStop                // on_stop, after the client stopped the run
)

// String is the phase's key in the file.
func (p Phase) String() string {
	switch p {
	case InIfDenied:
		return "if_denied"
	case InOnStop:
		return "on_stop"
	}
	return "steps"
}

// Cursor is a run's position in its scenario (scenarios §5): a plain
// value kept in the namespace state, so checkpoints capture it and checkout
// restores it. The transitions below are pure; the gateway applies the steps.
// A cursor exists only while its scenario still has a step to fire or an
// approval to wait for.
type Cursor struct {
	Scenario *Scenario // the scenario the run matched at admission (immutable)
	Phase    Phase
	Next     int     // index of the next step in the phase's list
	Due      float64 // emulator ms at which Next falls due; unused while Waiting
	Waiting  bool    // an approval step fired; the scenario waits for the answer
	Order    uint64  // admission order: ties between runs due at the same time
	Seq      uint64  // steps fired so far: ties within one run
}

// Start is the cursor of a run admitted at emulator ms at, the order-th
// scenario-driven admission: the first step falls due after its delay.
func Start(sc *Scenario, order uint64, at float64) Cursor {
	c := Cursor{Scenario: sc, Order: order}
	c, _ = c.enter(InSteps, at)
	return c
}

// List is the step list of the cursor's phase.
func (c Cursor) List() []Step {
	switch c.Phase {
	case InIfDenied:
		return c.Scenario.IfDenied
	case InOnStop:
		return c.Scenario.OnStop
	}
	return c.Scenario.Steps
}

// Step is the next step (the one due at Due, or after the answer while Waiting).
func (c Cursor) Step() Step { return c.List()[c.Next] }

// Path names the next step as the file does, e.g. "steps[2]" or "on_stop[0]".
func (c Cursor) Path() string { return c.Phase.String() + "[" + strconv.Itoa(c.Next) + "]" }

// enter starts walking list p at emulator ms at; ok is false when p is empty.
func (c Cursor) enter(p Phase, at float64) (Cursor, bool) {
	c.Phase, c.Next, c.Waiting = p, 0, false
	return c.schedule(at)
}

// schedule makes Next due after its delay counted from at; ok is false when
// the list has no step left (the scenario has ended).
func (c Cursor) schedule(at float64) (Cursor, bool) {
	list := c.List()
	if c.Next >= len(list) {
		return c, false
	}
	c.Due = at + list[c.Next].AfterMs
	return c, true
}

// Fired is the cursor after its next step was applied at emulator ms at: an
// approval step waits for the answer; any other moves on to the following step,
// due after its delay counted from at. ok is false when the scenario has ended.
func (c Cursor) Fired(at float64) (Cursor, bool) {
	approval := c.Step().Action == Approval
	c.Next++
	c.Seq++
	if approval {
		c.Waiting = true
		return c, true
	}
	return c.schedule(at)
}

// Answered is the cursor after the client answered an approval at emulator ms
// at (runs-api §6.5): while the scenario waits, once/session/always resume it
// with the next step counted from the answer, deny replaces the remaining steps
// by if_denied (a denial inside if_denied resumes it). A cursor that is not waiting is unchanged (manual controls do
// not move it). ok is false when the scenario has ended.
func (c Cursor) Answered(deny bool, at float64) (Cursor, bool) {
	if !c.Waiting {
		return c, true
	}
	if deny && c.Phase != InIfDenied {
		return c.enter(InIfDenied, at)
	}
	c.Waiting = false
	return c.schedule(at)
}

// Stopped is the cursor after the client's stop at emulator ms at
// (scenarios §3). A stop that makes the run stopping replaces the
// remaining steps by on_stop, counted from the stop — also inside on_stop when
// the run no longer was stopping: a stop there withdraws the approval an
// on_stop step waits for, which nothing could answer then. A stop of a run
// that was already stopping (wasStopping: a repeated stop, or a step that
// observed stopping) leaves the cursor unchanged. ok is false when the
// scenario has ended.
func (c Cursor) Stopped(wasStopping bool, at float64) (Cursor, bool) {
	if wasStopping {
		return c, true
	}
	return c.enter(InOnStop, at)
}

// Finished is the cursor after its run became terminal other than by one of
// its steps (a manual observe): a cursor waiting for an approval answer has
// ended — a terminal run takes no answer (runs-api §6.5), so it would wait
// forever — and ok is false; any other is unchanged: its next step fails when
// it falls due (scenarios §3).
func (c Cursor) Finished() (Cursor, bool) { return c, !c.Waiting }

// Position is a run's place in its scenario as the run view shows it
// (scenarios §6): the scenario, the next step ("steps[2]",
// "if_denied[0]", "on_stop[0]") and when it falls due (emulator ms; waiting
// for an approval answer: Waiting, Due 0).
type Position struct {
	Name    string
	Step    string
	Due     float64
	Waiting bool
}

// Position is c as the run view shows it.
func (c Cursor) Position() Position {
	p := Position{Name: c.Scenario.Name, Step: c.Path(), Waiting: c.Waiting}
	if !c.Waiting {
		p.Due = c.Due
	}
	return p
}

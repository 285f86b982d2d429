package gateway

import (
	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/state"
)

// Admission is the outcome of a successful RunCreate (runs-api §6.1 step 12).
type Admission struct {
	RunID      string
	Status     string // "started" for a new run, else the current status
	Replayed   bool
	Checkpoint string // the accepted-mutation checkpoint of a new run
}

// Creation is a RunCreate as the handler prepared it without the lock: the
// outcomes of its pure checks, in the spec's order (runs-api §6.1), and what
// they produced.
type Creation struct {
	Intake *runs.Error // steps 3–5: the header checks and an empty body (nil: passed)
	Body   *runs.Error // steps 7–10: parse, key, validation, fingerprint (nil: passed)
	// Key is the stripped Idempotency-Key ("" = keyless), Fingerprint its
	// fingerprint, Sub the validated submission.
	Key, Fingerprint string
	Sub              *runs.Submission
}

// Create performs RunCreate from step 2 in one transaction (runs-api §6.1): the
// drain flag (503), the intake checks, the sweep tick, the body checks, then
// (keyed) the prune and the admission: create, replay or conflict.
func (g *Gateway) Create(t Target, c Creation) (Admission, *runs.Error) {
	var a Admission
	cp, err := g.update(t, func(x *tx) *runs.Error {
		if d := runs.Decide(runs.AdmissionFacts{Draining: x.st.Draining}); d == runs.Draining {
			return d.Err(0)
		}
		if c.Intake != nil {
			return c.Intake
		}
		x.sweepTick()
		if c.Body != nil {
			return c.Body
		}
		var err *runs.Error
		a, err = x.admit(c.Key, c.Fingerprint, c.Sub)
		return err
	})
	a.Checkpoint = cp
	return a, err
}

// admit is steps 11–12: the prune (keyed only), then create, replay or
// conflict. key is the stripped Idempotency-Key ("" = keyless).
func (x *tx) admit(key, fingerprint string, sub *runs.Submission) (Admission, *runs.Error) {
	scope := x.scope()
	var r *state.Reservation
	if key != "" {
		x.prune()
		r, _ = x.st.Res(scope, key)
	}
	d := runs.Decide(runs.AdmissionFacts{Reserved: r != nil, SameFingerprint: r != nil && r.Fingerprint == fingerprint,
		Live: x.st.Live(), Max: x.g.opts.MaxConcurrentRuns})
	switch d {
	case runs.Replay:
		status := r.Status
		if c, ok := x.hydrate(r.RunID, scope); ok {
			status = c.Status
		}
		return Admission{RunID: r.RunID, Status: status, Replayed: true}, nil
	case runs.Conflict, runs.AtCapacity:
		return Admission{}, d.Err(x.g.opts.MaxConcurrentRuns)
	}
	if err := x.g.roomFor(x.ns); err != nil { // this admission would create namespace N+1 (hardening H3)
		return Admission{}, err
	}
	x.st.RunCounter++
	x.dirty = true
	id := runs.RunID(x.storageNS(), x.st.RunCounter)
	now := x.now()
	rec := runs.NewRecord(id, now, sub)
	owner := state.Owner{Scope: scope, Keyed: key != "", Local: true, Alive: true}
	c := state.Cached{Status: runs.Queued, CreatedAt: now, UpdatedAt: now, Owner: owner}.WithRecord(rec, nil)
	var nr *state.Reservation
	if key != "" {
		nr = newReservation(scope, key, fingerprint, id, x.st.RunCounter, x.g.durableText(c, rec), now)
	}
	x.putRun(id, c, nr)
	x.opened = append(x.opened, opening{id, now})
	x.scenarioAdmit(id, sub)
	x.accept = true
	return Admission{RunID: id, Status: "started"}, nil
}

// onRun runs fn in a transaction on t (update) with run id addressed first
// (x.addressed: the sweep tick, hydration, 404 when not visible).
func (g *Gateway) onRun(t Target, id string, fn func(x *tx, c *state.Cached) *runs.Error) (string, *runs.Error) {
	return g.update(t, func(x *tx) *runs.Error {
		c, err := x.addressed(id)
		if err != nil {
			return err
		}
		return fn(x, c)
	})
}

// Get returns run id's record (runs-api §6.2).
func (g *Gateway) Get(t Target, id string) ([]byte, *runs.Error) {
	var body []byte
	_, err := g.onRun(t, id, func(x *tx, c *state.Cached) *runs.Error {
		body = c.Text()
		return nil
	})
	return body, err
}

// Stopped is the outcome of RunStop: the unchanged record of a terminal run,
// or the checkpoint of an accepted stop.
type Stopped struct {
	Terminal   []byte
	Checkpoint string
}

// Stop requests a cooperative stop (runs-api §6.3).
func (g *Gateway) Stop(t Target, id string) (Stopped, *runs.Error) {
	var s Stopped
	cp, err := g.onRun(t, id, func(x *tx, c *state.Cached) *runs.Error {
		if runs.IsTerminal(c.Status) {
			s.Terminal = c.Text()
			return nil
		}
		if !c.Owner.Local {
			return runs.RunNotActive(id)
		}
		before := c.Value()
		x.setRecord(id, c, runs.Stopped(before, x.now()), before)
		x.st.SetApprovals(id, nil)
		x.scenarioStopped(id, c.Status == runs.Stopping)
		x.accept = true
		return nil
	})
	s.Checkpoint = cp
	return s, err
}

// Approved is the outcome of a RunApproval success.
type Approved struct {
	Resolved   int
	Checkpoint string
}

// Approve answers pending approvals (runs-api §6.5.2). The caller parsed the
// body: ans is the answer, or bodyErr the body's error (steps 3–7), which is
// reported only after the run was found.
func (g *Gateway) Approve(t Target, id string, ans *runs.ApprovalAnswer, bodyErr *runs.Error) (Approved, *runs.Error) {
	var out Approved
	cp, err := g.onRun(t, id, func(x *tx, c *state.Cached) *runs.Error {
		if bodyErr != nil {
			return bodyErr
		}
		if !state.IsLive(c) {
			return runs.ApprovalNotActive(id)
		}
		from, to := runs.ResolveApprovals(x.st.ApprovalCount(id), func(i int) *runs.Obj { return x.st.ApprovalAt(id, i) }, ans)
		resolved := to - from
		if resolved == 0 {
			return runs.ApprovalNotPending(id)
		}
		now := x.now()
		before := c.Value()
		x.setRecord(id, c, runs.ApprovalResponded(before, now), before)
		x.st.RemoveApprovals(id, from, to)
		x.emit(id, runs.ApprovalRespondedEvent(id, now, ans, resolved))
		x.scenarioAnswered(id, ans.Choice == "deny")
		x.accept = true
		out.Resolved = resolved
		return nil
	})
	out.Checkpoint = cp
	return out, err
}

// Steer queues guidance text (runs-api §6.6) and returns the accepted
// checkpoint. The caller normalised the body: text, or textErr (steps 4–5),
// which is reported only after the gate. refused is the hermes.steer_refused
// effect.
func (g *Gateway) Steer(t Target, id, text string, textErr *runs.Error, refused bool) (string, *runs.Error) {
	return g.onRun(t, id, func(x *tx, c *state.Cached) *runs.Error {
		if c.Status != runs.Running || !c.Owner.Local {
			return runs.SteerNotAccepting(id)
		}
		if textErr != nil {
			return textErr
		}
		if refused {
			return runs.SteerRefused(id)
		}
		x.st.AppendSteer(id, text)
		now := x.now()
		before := c.Value()
		x.setRecord(id, c, runs.Steered(before, now), before)
		x.emit(id, runs.SteeredEvent(id, now))
		x.accept = true
		return nil
	})
}

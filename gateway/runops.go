package gateway

import (
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Admission is the outcome of a successful RunCreate (runs-api §6.1 step 12).
type Admission struct {
	RunID      string
	Status     string // "started" for a new run, else the current status
	Replayed   bool
	Checkpoint string // the accepted-mutation checkpoint of a new run
}

// Draining reports the namespace's drain flag (runs-api §14.2).
func (g *Gateway) Draining(t Target) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.view != nil {
		return t.view.draining
	}
	x := g.begin(t)
	return x.st.draining
}

// SweepTick evaluates the retention schedule of t (runs-api §11.1).
func (g *Gateway) SweepTick(t Target) *runs.Error {
	_, err := g.update(t, func(x *tx) *runs.Error {
		x.sweepTick()
		return nil
	})
	return err
}

// Scope returns t's current scope hash (runs-api §9).
func (g *Gateway) Scope(t Target) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.begin(t).scope()
}

// Admit prunes (keyed only) and then creates, replays or conflicts in one
// transaction (runs-api §6.1 steps 11–12). key is the stripped Idempotency-Key
// ("" = keyless) and fingerprint its fingerprint.
func (g *Gateway) Admit(t Target, key, fingerprint string, sub *runs.Submission) (Admission, *runs.Error) {
	var a Admission
	cp, err := g.update(t, func(x *tx) *runs.Error {
		scope := x.scope()
		if key != "" {
			x.prune()
			if r, ok := x.st.res.Get(resKey(scope, key)); ok {
				if r.Fingerprint != fingerprint {
					return runs.ErrKeyConflict
				}
				c, _ := x.hydrate(r.RunID, scope)
				a = Admission{RunID: r.RunID, Status: c.Status, Replayed: true}
				return nil
			}
		}
		if max := x.g.opts.MaxConcurrentRuns; max > 0 && x.st.live >= max {
			return runs.Throttle(max)
		}
		x.st.runCounter++
		x.dirty = true
		id := runs.RunID(x.storageNS(), x.st.runCounter)
		now := x.now()
		rec := runs.NewRecord(id, now, sub)
		owner := Owner{Scope: scope, Keyed: key != "", Local: true, Alive: true}
		x.putRun(id, &Cached{Record: encode(rec), Status: runs.Queued, UpdatedAt: now, Owner: owner})
		if key != "" {
			x.putRes(&Reservation{Scope: scope, Key: key, Fingerprint: fingerprint, RunID: id, Owner: owner,
				Record: encode(runs.SortedCopy(runs.ObjectValue(rec)).Obj), Status: runs.Queued, UpdatedAt: now})
		}
		x.openTransport(id, now)
		x.accept = true
		a = Admission{RunID: id, Status: "started"}
		return nil
	})
	a.Checkpoint = cp
	return a, err
}

// Get returns run id's record (runs-api §6.2).
func (g *Gateway) Get(t Target, id string) ([]byte, *runs.Error) {
	var body []byte
	_, err := g.update(t, func(x *tx) *runs.Error {
		c, err := x.addressed(id)
		if err != nil {
			return err
		}
		body = c.Record
		return nil
	})
	return body, err
}

// Stopped is the outcome of RunStop: the body and the accepted checkpoint, if any.
type Stopped struct {
	Body       []byte
	Checkpoint string
}

// Stop requests a cooperative stop (runs-api §6.3).
func (g *Gateway) Stop(t Target, id string) (Stopped, *runs.Error) {
	var s Stopped
	cp, err := g.update(t, func(x *tx) *runs.Error {
		c, err := x.addressed(id)
		if err != nil {
			return err
		}
		if runs.IsTerminal(c.Status) {
			s.Body = c.Record
			return nil
		}
		if !c.Owner.Local {
			return runs.Hermes("run_not_active", "Run is not active in this gateway process: "+id)
		}
		before := decode(c.Record)
		x.setRecord(id, c, runs.Stopped(before, x.now()), before)
		x.st.setApprovals(id, nil)
		x.accept = true
		s.Body = []byte(`{"run_id":` + runs.QuoteString(id) + `,"status":"stopping"}`)
		return nil
	})
	s.Checkpoint = cp
	return s, err
}

// Answered is the outcome of a RunApproval or RunSteer success.
type Answered struct {
	Body       []byte
	Checkpoint string
}

// Approve answers pending approvals (runs-api §6.5.2). body is the raw request body.
func (g *Gateway) Approve(t Target, id string, body []byte) (Answered, *runs.Error) {
	var out Answered
	cp, err := g.update(t, func(x *tx) *runs.Error {
		c, err := x.addressed(id)
		if err != nil {
			return err
		}
		v, perr := runs.Parse(body)
		if perr != nil {
			return runs.ErrInvalidJSON
		}
		ans, aerr := runs.ParseApproval(v)
		if aerr != nil {
			return aerr
		}
		if !isLive(c) {
			return runs.Hermes("approval_not_active", "Run has no active approval session: "+id)
		}
		queue, _ := x.st.approvals.Get(id)
		var keep []*runs.Obj
		resolved := 0
		for i, e := range queue {
			switch {
			case ans.HasRequestID:
				if rid, _ := e.Get("request_id"); rid.Kind == runs.String && rid.Str == ans.RequestID && resolved == 0 {
					resolved++
					continue
				}
			case ans.ResolveAll:
				resolved++
				continue
			case i == 0:
				resolved++
				continue
			}
			keep = append(keep, e)
		}
		if resolved == 0 {
			return runs.Hermes("approval_not_pending", "Run has no pending approval: "+id)
		}
		now := x.now()
		before := decode(c.Record)
		x.setRecord(id, c, runs.ApprovalResponded(before, now), before)
		x.st.setApprovals(id, keep)
		x.emit(id, runs.ApprovalRespondedEvent(id, now, ans, resolved))
		x.accept = true
		b := []byte(`{"object":"hermes.run.approval_response","run_id":` + runs.QuoteString(id) + `,"choice":` + runs.QuoteString(ans.Choice))
		if ans.HasRequestID {
			b = append(b, `,"request_id":`+runs.QuoteString(ans.RequestID)...)
		}
		b = append(b, `,"resolved":`+itoa(resolved)+`}`...)
		out.Body = b
		return nil
	})
	out.Checkpoint = cp
	return out, err
}

// Steer queues guidance text (runs-api §6.6). refused is the hermes.steer_refused effect.
func (g *Gateway) Steer(t Target, id string, body []byte, refused bool) (Answered, *runs.Error) {
	var out Answered
	cp, err := g.update(t, func(x *tx) *runs.Error {
		c, err := x.addressed(id)
		if err != nil {
			return err
		}
		if c.Status != runs.Running || !c.Owner.Local {
			return runs.Hermes("run_not_accepting_steer", "Run is not currently accepting steer input: "+id)
		}
		v, perr := runs.Parse(body)
		if perr != nil || v.Kind != runs.Object {
			v = runs.ObjectValue(nil)
		}
		text, serr := runs.SteerText(v)
		if serr != nil {
			return serr
		}
		if refused {
			return runs.Hermes("steer_not_accepted", "Run did not accept steer text: "+id)
		}
		q, _ := x.st.steers.Get(id)
		x.st.setSteers(id, append(append([]string(nil), q...), text))
		now := x.now()
		before := decode(c.Record)
		x.setRecord(id, c, runs.Steered(before, now), before)
		ev := runs.Event("run.steered", id, now)
		ev.Set("accepted", runs.BoolValue(true))
		x.emit(id, ev)
		x.accept = true
		out.Body = []byte(`{"object":"hermes.run.steer","run_id":` + runs.QuoteString(id) + `,"accepted":true}`)
		return nil
	})
	out.Checkpoint = cp
	return out, err
}

func itoa(n int) string { return runs.IntValue(int64(n)).Int }

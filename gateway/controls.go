package gateway

import (
	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/state"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// The Hermes controls (controls.md §11). They act on the namespace's main
// branch and commit a checkpoint after success.

// Observe scripts what the executor reports (controls §11.1) and returns the new record.
func (g *Gateway) Observe(ns, id string, body runs.Value, hasBody bool) ([]byte, *runs.Error) {
	var out []byte
	_, err := g.onRun(Main(ns), id, func(x *tx, c *state.Cached) (err *runs.Error) {
		out, err = x.observe(id, c, body, hasBody)
		return err
	})
	return out, err
}

// observe is the observe control in x on run id, addressed as c; scenario
// steps apply it too.
func (x *tx) observe(id string, c *state.Cached, body runs.Value, hasBody bool) ([]byte, *runs.Error) {
	pending := func(i int) *runs.Obj { return x.st.ApprovalAt(id, i) }
	o, oerr := runs.ParseObserve(body, hasBody, func(rid string) bool {
		return runs.FindApproval(x.st.ApprovalCount(id), pending, rid) >= 0
	})
	if oerr != nil {
		return nil, oerr
	}
	if runs.IsTerminal(c.Status) {
		return nil, runs.ErrObserveTerminal
	}
	now := x.now()
	var approval *runs.Obj
	if o.Status == runs.WaitingForApproval {
		approval = runs.ApprovalEvent(o.Approval, id, now, func() string {
			x.st.ApprovalCounter++
			x.dirty = true
			return runs.ApprovalID(x.storageNS(), x.st.ApprovalCounter)
		})
	}
	var steers []string // read only by a completion (pending_steer)
	if o.Status == runs.Completed {
		steers = x.st.Steers(id)
	}
	before := c.Value()
	rec := runs.ApplyObserve(before, o, now, approval, steers)
	nc := x.setRecord(id, c, rec, before)
	switch o.Status {
	case runs.WaitingForApproval:
		if state.IsLive(nc) {
			x.st.AppendApproval(id, approval)
		}
		x.emit(id, approval)
	case runs.Queued, runs.Running, runs.Stopping:
		x.st.SetApprovals(id, nil)
	default: // terminal
		if ev := runs.TerminalEvent(rec, id, now); ev != nil {
			x.emit(id, ev)
		}
		x.ends = append(x.ends, id)
		x.st.SetApprovals(id, nil)
		x.st.SetSteers(id, nil)
		x.scenarioFinished(id)
	}
	x.checkpoint = true
	return nc.Text(), nil
}

// Emitted is the answer of the events control (controls §11.2).
type Emitted struct {
	Emitted, Buffered int
}

// Events scripts non-status events (controls §11.2). Buffered counts the
// frames the run's transport took when the change was published: none past
// its bound (hardening H5).
func (g *Gateway) Events(ns, id string, body runs.Value, hasBody bool) (Emitted, *runs.Error) {
	var out Emitted
	buffered := 0
	_, err := g.onRun(Main(ns), id, func(x *tx, c *state.Cached) (err *runs.Error) {
		out, err = x.events(id, c, body, hasBody)
		x.buffered = &buffered
		return err
	})
	out.Buffered = buffered
	return out, err
}

// events is the events control in x on run id, addressed as c; scenario
// steps apply it too. It counts the emitted events; Events counts the
// buffered ones (x.buffered).
func (x *tx) events(id string, c *state.Cached, body runs.Value, hasBody bool) (Emitted, *runs.Error) {
	var out Emitted
	evs, eerr := runs.ParseEvents(body, hasBody)
	if eerr != nil {
		return out, eerr
	}
	if runs.IsTerminal(c.Status) {
		return out, runs.ErrEventsTerminal
	}
	if !c.Owner.Local {
		return out, runs.RunNotActive(id)
	}
	for _, e := range evs {
		now := x.now()
		x.emit(id, e.Build(id, now))
		out.Emitted++
		if e.Name != "message.delta" {
			before := c.Value()
			c = x.setRecord(id, c, runs.EventApplied(before, e.Name, now), before)
		}
	}
	x.checkpoint = true
	return out, nil
}

// Deliver empties a run's steer queue (controls §11.3) and returns how many texts it held.
func (g *Gateway) Deliver(ns, id string) (int, *runs.Error) {
	n := 0
	_, err := g.onRun(Main(ns), id, func(x *tx, c *state.Cached) (err *runs.Error) {
		n, err = x.deliver(id, c)
		return err
	})
	return n, err
}

// deliver is the steer-delivery control in x on run id, addressed as c;
// scenario steps apply it too.
func (x *tx) deliver(id string, c *state.Cached) (int, *runs.Error) {
	if runs.IsTerminal(c.Status) {
		return 0, runs.ErrDeliverTerminal
	}
	n := x.st.SteerCount(id)
	x.st.SetSteers(id, nil)
	x.dirty = true
	x.checkpoint = true
	return n, nil
}

// DrainFlag reads the drain flag of ns's main branch (controls §11.4).
func (g *Gateway) DrainFlag(ns string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	x, err := g.begin(Main(ns))
	return err == nil && x.st.Draining
}

// SetDraining sets the drain flag (controls §11.4).
func (g *Gateway) SetDraining(ns string, on bool) *runs.Error {
	_, err := g.update(Main(ns), func(x *tx) *runs.Error {
		x.st.Draining = on
		x.dirty = true
		x.checkpoint = true
		return nil
	})
	return err
}

// Restarted is the answer of the restart control (controls §11.5).
type Restarted struct {
	Retained, Discarded int
}

// Restart performs a logical restart of ns (runs-api §10.3). alive selects the
// "alive" owner (the old owner still runs elsewhere) over "stale".
func (g *Gateway) Restart(ns string, alive bool) (Restarted, *runs.Error) {
	var out Restarted
	_, err := g.update(Main(ns), func(x *tx) *runs.Error {
		out = x.restart(alive)
		x.checkpoint = true
		return nil
	})
	return out, err
}

func (x *tx) restart(alive bool) Restarted {
	var out Restarted
	x.st.EachRun(func(id string, _ *state.Cached) {
		if _, ok := x.st.ResOfRun(id); !ok {
			out.Discarded++
		}
	})
	// Every reservation's owner changes in memory only: the store's owner
	// flags are never read (a real restart reads every owner stale), so
	// nothing is written and the rows --db has not read stay unread.
	fresh := x.st.Restarted(alive)
	out.Retained = fresh.Reserved()
	fresh.NextSweep, fresh.HasSweep = x.now()+runs.SweepTick, true
	x.st = fresh
	x.dirty = true
	x.resync = true // every scenario position is dropped (scenarios §5)
	x.g.transports.Destroy(x.ns.name, x.branch)
	return out
}

// SetScope replaces the namespace's scope (controls §11.6).
func (g *Gateway) SetScope(ns, profile, identity string) *runs.Error {
	_, err := g.update(Main(ns), func(x *tx) *runs.Error {
		x.st.ScopeProfile, x.st.ScopeIdentity = profile, identity
		x.meta, x.dirty = true, true
		x.checkpoint = true
		return nil
	})
	return err
}

// Sweep runs one retention sweep at now without moving the schedule (controls §11.7).
func (g *Gateway) Sweep(ns string) (int, *runs.Error) {
	n := 0
	_, err := g.update(Main(ns), func(x *tx) *runs.Error {
		n = x.sweep(x.now())
		x.dirty = true
		x.checkpoint = true
		return nil
	})
	return n, err
}

// Reset clears the namespaces' state (controls §4.3); all selects every created
// namespace. It returns the names reset, sorted.
func (g *Gateway) Reset(ns string, all bool) ([]string, *runs.Error) {
	names := []string{ns}
	if all {
		names = g.Namespaces()
	}
	err := g.locked(func() *runs.Error {
		for _, name := range names {
			space := g.spaces[name]
			if space == nil {
				continue // reset does not create a namespace (controls §4.1)
			}
			// The namespace stays created (controls §4.1), holding nothing but
			// its name: state, branches, timeline and transports are released.
			g.q.Enqueue(storage.Batch{Namespace: name, Clear: true, Meta: &storage.Namespace{Name: name}})
			for b := range space.branches {
				g.transports.Destroy(name, b)
			}
			g.nBranches -= len(space.branches) - 1
			g.spaces[name] = newNamespace(name)
			g.auto.due.RemoveNS(name)
			g.snaps.Drop(space.tl) // its snapshots restore nothing now
			g.changed(Change{Kind: "namespace.reset", Namespace: name})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return names, nil
}

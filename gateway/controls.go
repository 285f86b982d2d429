package gateway

import (
	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// The Hermes controls (controls.md §11). They act on the namespace's main
// branch and commit a checkpoint after success.

// Observe scripts what the executor reports (controls §11.1) and returns the new record.
func (g *Gateway) Observe(ns, id string, body runs.Value, hasBody bool) ([]byte, *runs.Error) {
	var out []byte
	_, err := g.update(Main(ns), func(x *tx) (err *runs.Error) {
		out, err = x.observe(id, body, hasBody)
		return err
	})
	return out, err
}

// observe is the observe control in x; scenario steps apply it too.
func (x *tx) observe(id string, body runs.Value, hasBody bool) ([]byte, *runs.Error) {
	c, err := x.addressed(id)
	if err != nil {
		return nil, err
	}
	pending, _ := x.st.approvals.Get(id)
	o, oerr := runs.ParseObserve(body, hasBody, func(rid string) bool {
		for _, e := range pending {
			if v, _ := e.Get("request_id"); v.Kind == runs.String && v.Str == rid {
				return true
			}
		}
		return false
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
			x.st.approvalCounter++
			x.dirty = true
			return runs.ApprovalID(x.storageNS(), x.st.approvalCounter)
		})
	}
	steers, _ := x.st.steers.Get(id)
	before := decode(c.Record)
	rec := runs.ApplyObserve(before, o, now, approval, steers)
	nc := x.setRecord(id, c, rec, before)
	switch o.Status {
	case runs.WaitingForApproval:
		if isLive(nc) {
			x.st.setApprovals(id, append(append([]*runs.Obj(nil), pending...), approval))
		}
		x.emit(id, approval)
	case runs.Queued, runs.Running, runs.Stopping:
		x.st.setApprovals(id, nil)
	default: // terminal
		if ev := runs.TerminalEvent(rec, id, now); ev != nil {
			x.emit(id, ev)
		}
		x.ends = append(x.ends, id)
		x.st.setApprovals(id, nil)
		x.st.setSteers(id, nil)
	}
	x.checkpoint = true
	return nc.Record, nil
}

// Emitted is the answer of the events control (controls §11.2).
type Emitted struct {
	Emitted, Buffered int
}

// Events scripts non-status events (controls §11.2).
func (g *Gateway) Events(ns, id string, body runs.Value, hasBody bool) (Emitted, *runs.Error) {
	var out Emitted
	_, err := g.update(Main(ns), func(x *tx) (err *runs.Error) {
		out, err = x.events(id, body, hasBody)
		return err
	})
	return out, err
}

// events is the events control in x; scenario steps apply it too.
func (x *tx) events(id string, body runs.Value, hasBody bool) (Emitted, *runs.Error) {
	var out Emitted
	c, err := x.addressed(id)
	if err != nil {
		return out, err
	}
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
	hasTransport := x.g.hasTransport(tkey{x.name, x.branch, id})
	for _, e := range evs {
		now := x.now()
		x.emit(id, e.Build(id, now))
		if hasTransport {
			out.Buffered++
		}
		out.Emitted++
		if e.Name != "message.delta" {
			before := decode(c.Record)
			c = x.setRecord(id, c, runs.EventApplied(before, e.Name, now), before)
		}
	}
	x.checkpoint = true
	return out, nil
}

// Deliver empties a run's steer queue (controls §11.3) and returns how many texts it held.
func (g *Gateway) Deliver(ns, id string) (int, *runs.Error) {
	n := 0
	_, err := g.update(Main(ns), func(x *tx) (err *runs.Error) {
		n, err = x.deliver(id)
		return err
	})
	return n, err
}

// deliver is the steer-delivery control in x; scenario steps apply it too.
func (x *tx) deliver(id string) (int, *runs.Error) {
	c, err := x.addressed(id)
	if err != nil {
		return 0, err
	}
	if runs.IsTerminal(c.Status) {
		return 0, runs.ErrDeliverTerminal
	}
	q, _ := x.st.steers.Get(id)
	x.st.setSteers(id, nil)
	x.dirty = true
	x.checkpoint = true
	return len(q), nil
}

// DrainFlag reads the drain flag of ns's main branch (controls §11.4).
func (g *Gateway) DrainFlag(ns string) bool { return g.Draining(Main(ns)) }

// SetDraining sets the drain flag (controls §11.4).
func (g *Gateway) SetDraining(ns string, on bool) *runs.Error {
	_, err := g.update(Main(ns), func(x *tx) *runs.Error {
		x.st.draining = on
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
	x.st.flatten()
	for it := x.st.runs.Iterator(); !it.Done(); {
		id, _, _ := it.Next()
		if _, ok := x.st.resOfRun(id); !ok {
			out.Discarded++
		}
	}
	// Rewrite every reservation's owner; storage gets one UPDATE, not a row each.
	fresh := newState()
	fresh.byRun, fresh.prunable, fresh.nRes = x.st.byRun, x.st.prunable, x.st.nRes
	x.st.eachRes(func(r *Reservation) {
		nr := *r
		nr.Owner.Local, nr.Owner.Alive = false, alive
		fresh.res = fresh.res.Set(resKey(r.Scope, r.Key), &nr)
	})
	out.Retained = fresh.res.Len()
	fresh.scopeProfile, fresh.scopeIdentity = x.st.scopeProfile, x.st.scopeIdentity
	fresh.runCounter, fresh.approvalCounter = x.st.runCounter, x.st.approvalCounter
	fresh.nextSweep, fresh.hasSweep = x.now()+runs.SweepTick, true
	x.st = fresh
	x.dirty = true
	x.resync = true // every scenario position is dropped (docs/scenarios.md §5)
	if x.durable {
		x.batch.SetOwners = &storage.OwnerUpdate{Local: false, Alive: alive}
	}
	x.g.destroyTransports(x.name, x.branch, true)
	return out
}

// SetScope replaces the namespace's scope (controls §11.6).
func (g *Gateway) SetScope(ns, profile, identity string) *runs.Error {
	_, err := g.update(Main(ns), func(x *tx) *runs.Error {
		x.st.scopeProfile, x.st.scopeIdentity = profile, identity
		x.touchMeta()
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
	defer g.unlockDurable(g.lock())
	for _, name := range names {
		space := g.spaces[name]
		if space == nil {
			continue // reset does not create a namespace (controls §4.1)
		}
		// The namespace stays created (controls §4.1), holding nothing but
		// its name: state, branches, timeline and transports are released.
		g.q.Enqueue(storage.Batch{Namespace: name, Clear: true, Meta: &storage.Namespace{Name: name}})
		for b := range space.branches {
			g.destroyTransports(name, b, true)
		}
		g.spaces[name] = newNamespace(name)
		g.auto.due.RemoveNS(name)
		g.snaps.Drop(space.tl) // its snapshots restore nothing now
	}
	return names, nil
}

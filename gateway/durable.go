package gateway

import (
	"context"
	"fmt"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

func bg() context.Context { return context.Background() }

// load reads what the store holds and performs a stale restart of every
// namespace found (runs-api §10.4): reservations come back with owners
// local:false, alive:false; counters and scope continue; the sweep schedule
// starts at now + 60 s; the clock state is restored.
func (g *Gateway) load() error {
	spaces, reservations, clock, err := g.db.Load(bg())
	if err != nil {
		return fmt.Errorf("gateway: load: %w", err)
	}
	if clock != nil {
		g.clock = runs.Clock{Frozen: clock.Frozen, FrozenMs: clock.FrozenMs, OffsetMs: clock.OffsetMs}
	}
	now := g.nowS()
	for _, m := range spaces {
		st := newState()
		st.runCounter, st.approvalCounter = m.RunCounter, m.ApprovalCounter
		st.scopeProfile, st.scopeIdentity = m.ScopeProfile, m.ScopeIdentity
		st.nextSweep, st.hasSweep = now+60, true
		g.spaces[m.Name] = &namespace{name: m.Name, branches: map[string]*branchState{"main": {st: st}},
			durRuns: m.RunCounter, durApprovals: m.ApprovalCounter}
	}
	for _, r := range reservations {
		ns := g.spaces[r.Namespace]
		if ns == nil {
			continue
		}
		rec, err := runs.ParseStored(r.Record)
		if err != nil || rec.Kind != runs.Object {
			return fmt.Errorf("gateway: load: reservation %s of %s: record does not parse", r.RunID, r.Namespace)
		}
		bs := ns.branches["main"]
		bs.st.putRes(g.cat, &Reservation{Scope: r.Scope, Key: r.Key, Fingerprint: r.Fingerprint, RunID: r.RunID, N: r.RunN,
			Owner:  Owner{Scope: r.OwnerScope, Keyed: r.Keyed},
			Record: r.Record, Status: runs.RecordStatus(rec.Obj), UpdatedAt: r.UpdatedAt})
	}
	for name := range g.spaces {
		if err := g.db.Apply(bg(), storage.Batch{Namespace: name, SetOwners: &storage.OwnerUpdate{}}); err != nil {
			return fmt.Errorf("gateway: load: %w", err)
		}
	}
	return nil
}

// rewriteDurable makes the store's copy of ns equal st (checkout of main).
// Callers hold g.mu.
func (g *Gateway) rewriteDurable(ns string, st State) *runs.Error {
	b := storage.Batch{Namespace: ns, Clear: true, Meta: &storage.Namespace{Name: ns, RunCounter: st.runCounter,
		ApprovalCounter: st.approvalCounter, ScopeProfile: st.scopeProfile, ScopeIdentity: st.scopeIdentity}}
	st.res.each(g.cat, func(r *Reservation) { b.Upsert = append(b.Upsert, r.row(ns)) })
	g.q.enqueue(b)
	if space := g.spaces[ns]; space != nil {
		space.durRuns, space.durApprovals = st.runCounter, st.approvalCounter
	}
	return nil
}

// Close writes the exact counters of every namespace to the store, so that a
// graceful restart continues ids at n+1 (runs-api §10.4); after a crash the
// reserved high-water marks guarantee ids still never repeat. Call it once
// requests have stopped, before closing the store.
func (g *Gateway) Close() error {
	g.auto.runner.Close() // before the lock: a tick in progress takes it
	g.mu.Lock()
	defer g.mu.Unlock()
	g.q.close()
	for name, space := range g.spaces {
		st := space.branches["main"].st
		if st.runCounter == space.durRuns && st.approvalCounter == space.durApprovals {
			continue
		}
		err := g.db.Apply(bg(), storage.Batch{Namespace: name, Meta: &storage.Namespace{Name: name,
			RunCounter: st.runCounter, ApprovalCounter: st.approvalCounter,
			ScopeProfile: st.scopeProfile, ScopeIdentity: st.scopeIdentity}})
		if err != nil {
			return errStorage(err)
		}
		space.durRuns, space.durApprovals = st.runCounter, st.approvalCounter
	}
	return nil
}

package gateway

import (
	"context"
	"fmt"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/state"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// load reads the namespace rows and the clock and performs a stale restart of
// every namespace found (runs-api §10.4): reservations come back, when first
// read, with owners local:false, alive:false; counters and scope continue;
// the sweep schedule starts at now + 60 s; the clock state is restored.
func (g *Gateway) load() error {
	ctx := context.Background()
	// The rows the previous process's prunes marked are gone (storage.Expiry).
	if err := g.db.DropExpired(ctx); err != nil {
		return fmt.Errorf("gateway: load: %w", err)
	}
	spaces, clock, err := g.db.LoadMeta(ctx)
	if err != nil {
		return fmt.Errorf("gateway: load: %w", err)
	}
	if clock != nil {
		g.clock = runs.Clock{Frozen: clock.Frozen, FrozenMs: clock.FrozenMs, OffsetMs: clock.OffsetMs}
	}
	now := g.nowS()
	for _, m := range spaces {
		// The stale restart (runs-api §10.4) makes every stored owner
		// local:false, alive:false: the rows are read that way (diskRow), so
		// nothing is rewritten here, and none is read until asked for.
		count, err := g.db.CountReservations(ctx, m.Name)
		if err != nil {
			return fmt.Errorf("gateway: load: %w", err)
		}
		st := state.New()
		st.RunCounter, st.ApprovalCounter = m.RunCounter, m.ApprovalCounter
		st.ScopeProfile, st.ScopeIdentity = m.ScopeProfile, m.ScopeIdentity
		st.NextSweep, st.HasSweep = now+runs.SweepTick, true
		st.ReadOnDemand(g.db, m.Name, count, m.RunCounter)
		ns := newNamespace(m.Name)
		ns.branches["main"].st = st
		ns.durRuns, ns.durApprovals = m.RunCounter, m.ApprovalCounter
		g.spaces[m.Name] = ns
	}
	return nil
}

// rewriteDurable makes the store's copy of ns equal st (checkout of main).
// Callers hold g.mu.
func (g *Gateway) rewriteDurable(ns string, st state.State) {
	b := storage.Batch{Namespace: ns, Clear: true, Meta: &storage.Namespace{Name: ns, RunCounter: st.RunCounter,
		ApprovalCounter: st.ApprovalCounter, ScopeProfile: st.ScopeProfile, ScopeIdentity: st.ScopeIdentity}}
	st.EachRes(func(r *state.Reservation) { b.Upsert = append(b.Upsert, &r.Reservation) })
	g.q.Enqueue(b)
	if space := g.spaces[ns]; space != nil {
		space.durRuns, space.durApprovals = st.RunCounter, st.ApprovalCounter
	}
}

// Close writes the exact counters of every namespace to the store, so that a
// graceful restart continues ids at n+1 (runs-api §10.4); after a crash the
// reserved high-water marks guarantee ids still never repeat. Call it once
// requests have stopped, before closing the store.
func (g *Gateway) Close() error {
	g.auto.runner.Close() // before the lock: a tick in progress takes it
	g.mu.Lock()
	defer g.mu.Unlock()
	g.q.Close()
	ctx := context.Background()
	for name, space := range g.spaces {
		st := space.branches["main"].st
		if st.RunCounter == space.durRuns && st.ApprovalCounter == space.durApprovals {
			continue
		}
		err := g.db.Apply(ctx, storage.Batch{Namespace: name, Meta: &storage.Namespace{Name: name,
			RunCounter: st.RunCounter, ApprovalCounter: st.ApprovalCounter,
			ScopeProfile: st.ScopeProfile, ScopeIdentity: st.ScopeIdentity}})
		if err != nil {
			return runs.Storage(err)
		}
		space.durRuns, space.durApprovals = st.RunCounter, st.ApprovalCounter
	}
	return nil
}

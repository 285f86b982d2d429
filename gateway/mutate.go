package gateway

import (
	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/state"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// The tx mutators and the run lifecycle steps shared by the operations:
// every change to state goes through them, so the durable batch, the change
// flag, the indexes and the change feed stay in step.

// putRun stores c as cached run id and, unless r is nil, reservation r of
// the run in the same change (state.PutRunRes), adding r to the durable batch.
func (x *tx) putRun(id string, c *state.Cached, r *state.Reservation) {
	_, existed := x.st.Run(id)
	if r == nil {
		x.st.PutRun(id, c)
	} else {
		x.st.PutRunRes(id, c, r)
		if x.durable {
			x.batch.Upsert = append(x.batch.Upsert, &r.Reservation)
		}
	}
	x.dirty = true
	if existed {
		x.told("run.changed", id, c.Status, nil)
	} else {
		x.told("run.created", id, c.Status, nil)
	}
}

func (x *tx) delRun(id string) {
	if _, ok := x.st.Run(id); !ok {
		return
	}
	x.st.DelRun(id)
	x.dirty = true
	x.told("run.removed", id, "", nil)
}

func (x *tx) delRes(scope, key string) {
	if _, ok := x.st.Res(scope, key); !ok {
		return
	}
	x.st.DelRes(scope, key)
	x.dirty = true
	if x.durable {
		x.batch.Delete = append(x.batch.Delete, storage.ReservationKey{Scope: scope, Key: key})
	}
}

// emit queues event ev of run runID as an SSE frame, delivered on commit.
func (x *tx) emit(runID string, ev *runs.Obj) {
	frame := append([]byte("data: "), runs.AppendPython(nil, runs.ObjectValue(ev))...)
	frame = append(frame, '\n', '\n')
	x.emits = append(x.emits, emission{runID, frame})
	x.told("run.event", runID, "", frame)
}

// told queues a change of run id for Options.OnChange, told on commit: none
// in a history view or while no one listens.
func (x *tx) told(kind, id, status string, frame []byte) {
	if x.g.listening() && !x.view {
		x.changes = append(x.changes, Change{Kind: kind, Namespace: x.ns.name, Branch: x.branch, RunID: id, Status: status, Frame: frame})
	}
}

// newReservation is the reservation of a new keyed run: run id with counter n,
// admitted in scope at now with the durable text of its record (durableText),
// owned here (runs-api §7, §9).
func newReservation(scope, key, fingerprint, id string, n int64, text []byte, now float64) *state.Reservation {
	return &state.Reservation{Status: runs.Queued, Reservation: storage.Reservation{Scope: scope, Key: key,
		Fingerprint: fingerprint, RunID: id, RunN: n, OwnerScope: scope, Keyed: true, Local: true, Alive: true,
		Record: text, UpdatedAt: now}}
}

// durableText is the record a reservation stores for rec, cached as c. The
// SQLite file (--db) holds the durable copy as upstream writes it, keys
// sorted at every level (runs-api §4.2 rule 3); in memory the reservation
// shares the cached text, in its vendor order (a large record is rendered) —
// hydration sorts either way (durable).
func (g *Gateway) durableText(c *state.Cached, rec *runs.Obj) []byte {
	if g.waits() {
		return runs.RenderedSorted(rec)
	}
	return c.Text()
}

// cachedOf is the run as its reservation r gives it, with the record text:
// r's own (the control plane lists it so, not hydrated) or hydrated's.
func cachedOf(r *state.Reservation, text []byte) *state.Cached {
	rec := runs.StoredRecord(text)
	return state.Cached{Status: r.Status, CreatedAt: recordTime(rec, "created_at"), UpdatedAt: r.UpdatedAt,
		Owner: r.OwnerStamp()}.WithRecord(rec, text)
}

// hydrated is the run as hydration copies it from reservation r into the
// cache: its record with keys sorted at every level (runs-api §4.2 rule 3).
func hydrated(r *state.Reservation) *state.Cached {
	return cachedOf(r, runs.RenderedSorted(runs.StoredRecord(r.Record)))
}

// recordTime is the record's created_at or updated_at, in seconds.
func recordTime(rec *runs.Obj, field string) float64 {
	v, _ := rec.Get(field)
	return v.Float
}

// setRecord replaces run id's cached record after a change and applies the
// persist rule (runs-api §10.2) to its reservation.
func (x *tx) setRecord(id string, before *state.Cached, rec *runs.Obj, beforeRec *runs.Obj) *state.Cached {
	c := state.Cached{Status: runs.RecordStatus(rec), CreatedAt: before.CreatedAt,
		UpdatedAt: recordTime(rec, "updated_at"), Owner: before.Owner}.WithRecord(rec, nil)
	var nr *state.Reservation
	if r, ok := x.st.ResOfRun(id); ok && runs.ShouldPersist(beforeRec, rec) {
		nr = r.Rewritten(x.g.durableText(c, rec), c.Status, x.now())
	}
	x.putRun(id, c, nr)
	return c
}

// hydrate implements runs-api §10.1: the run visible in scope, copied from its
// reservation into the cache when needed, with the stale-owner interruption.
func (x *tx) hydrate(id, scope string) (*state.Cached, bool) {
	if c, ok := x.st.Run(id); ok && c.Owner.Scope == scope {
		return c, true
	}
	r, ok := x.st.ResOfRun(id)
	if !ok || r.Scope != scope {
		return nil, false
	}
	c := hydrated(r)
	var nr *state.Reservation
	if !r.Alive && !runs.IsTerminal(r.Status) {
		now := x.now()
		rec := runs.Interrupt(c.Value(), now)
		c = state.Cached{Status: runs.Interrupted, CreatedAt: c.CreatedAt, UpdatedAt: now, Owner: c.Owner}.WithRecord(rec, nil)
		nr = r.Rewritten(x.g.durableText(c, rec), runs.Interrupted, now)
	}
	x.putRun(id, c, nr)
	return c, true
}

// addressed is the first step of every run-addressing operation and control:
// the sweep tick, then hydration in the current scope; not visible → 404.
// Its effects stay even when the operation then fails (controls §11).
func (x *tx) addressed(id string) (*state.Cached, *runs.Error) {
	x.sweepTick()
	c, ok := x.hydrate(id, x.scope())
	if !ok {
		return nil, runs.RunNotFound(id)
	}
	return c, nil
}

// visible checks visibility without hydration (RunEvents, runs-api §6.4.2 step 3).
func (x *tx) visible(id, scope string) bool {
	if c, ok := x.st.Run(id); ok && c.Owner.Scope == scope {
		return true
	}
	if r, ok := x.st.ResOfRun(id); ok {
		return r.Scope == scope
	}
	return false
}

// sweepTick evaluates the lazy retention schedule (runs-api §11.1).
func (x *tx) sweepTick() {
	now := x.now()
	if !x.st.HasSweep {
		x.st.NextSweep, x.st.HasSweep = now+runs.SweepTick, true
		x.dirty = true
		return
	}
	if now < x.st.NextSweep {
		return
	}
	tick := runs.NextSweep(x.st.NextSweep, now)
	x.sweep(tick)
	x.st.NextSweep = tick + runs.SweepTick
	x.dirty = true
}

// sweep is one retention sweep at time at (runs-api §11.2); it returns the
// number of cached runs removed.
func (x *tx) sweep(at float64) int {
	if !x.view {
		x.g.transports.Expire(x.ns.name, x.branch, at)
	}
	doomed := x.st.Sweepable(func(updatedAt float64) bool { return runs.Expired(updatedAt, at, runs.CacheRetention) })
	for _, id := range doomed {
		x.delRun(id)
	}
	return len(doomed)
}

// prune deletes terminal reservations older than 24 hours (runs-api §11.3):
// those in memory one by one, the start-up rows of --db all at once, the
// store in one statement (state.PruneStartup, storage.Expiry).
func (x *tx) prune() {
	now := x.now()
	for _, k := range x.st.Prunable(func(updatedAt float64) bool { return runs.Expired(updatedAt, now, runs.DurableRetention) }) {
		x.delRes(k.Scope, k.Key)
	}
	if x.st.PruneStartup(now) {
		x.dirty = true
		if x.durable {
			x.batch.Expire = &storage.Expiry{Now: now, Age: runs.DurableRetention}
		}
	}
}

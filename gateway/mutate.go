package gateway

import (
	"bytes"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// The tx mutators and the run lifecycle steps shared by the operations:
// every change to state goes through them, so the durable batch, the change
// flag, the indexes and the change feed stay in step.

func (x *tx) putRun(id string, c *Cached) {
	_, existed := x.st.getRun(id)
	x.st.putRun(id, c)
	x.dirty = true
	if kind := "run.created"; x.g.listening() && !x.view {
		if existed {
			kind = "run.changed"
		}
		x.changes = append(x.changes, Change{Kind: kind, Namespace: x.name, Branch: x.branch, RunID: id, Status: c.Status})
	}
}

func (x *tx) delRun(id string) {
	if _, ok := x.st.getRun(id); !ok {
		return
	}
	x.st.delRun(id)
	x.dirty = true
	if x.g.listening() && !x.view {
		x.changes = append(x.changes, Change{Kind: "run.removed", Namespace: x.name, Branch: x.branch, RunID: id})
	}
}

// putRes stores r and adds it to the durable batch.
func (x *tx) putRes(r *Reservation) {
	x.st.putRes(r)
	x.dirty = true
	if x.durable {
		x.batch.Upsert = append(x.batch.Upsert, &r.Reservation)
	}
}

func (x *tx) delRes(scope, key string) {
	r, ok := x.st.getRes(scope, key)
	if !ok {
		return
	}
	x.st.delRes(scope, key)
	x.dirty = true
	if x.durable {
		x.batch.Delete = append(x.batch.Delete, storage.ReservationKey{Scope: r.Scope, Key: r.Key})
	}
}

func (x *tx) touchMeta() {
	x.meta = true
	x.dirty = true
}

func (x *tx) emit(runID string, ev *runs.Obj) {
	if x.view {
		return
	}
	frame := append([]byte("data: "), runs.AppendPython(nil, runs.ObjectValue(ev))...)
	frame = append(frame, '\n', '\n')
	x.emits = append(x.emits, emission{runID, frame})
	if x.g.listening() {
		x.changes = append(x.changes, Change{Kind: "run.event", Namespace: x.name, Branch: x.branch, RunID: runID, Frame: frame})
	}
}

func decode(b []byte) *runs.Obj {
	v, err := runs.ParseStored(b)
	if err != nil || v.Kind != runs.Object {
		// Records are rendered by this package; failing to read one back is a bug.
		panic("gateway: stored record does not parse: " + string(b))
	}
	return v.Obj
}

// encode renders o for keeping: exactly sized, since a record is held for
// its run's life (a rendering appended from nil has up to twice the room).
func encode(o *runs.Obj) []byte { return bytes.Clone(runs.MarshalValue(runs.ObjectValue(o))) }

func updatedAt(o *runs.Obj) float64 {
	v, _ := o.Get("updated_at")
	return v.Float
}

func createdAt(o *runs.Obj) float64 {
	v, _ := o.Get("created_at")
	return v.Float
}

// setRecord replaces run id's cached record after a change and applies the
// persist rule (runs-api §10.2) to its reservation.
func (x *tx) setRecord(id string, before *Cached, rec *runs.Obj, beforeRec *runs.Obj) *Cached {
	c := &Cached{Record: encode(rec), Status: runs.RecordStatus(rec), CreatedAt: before.CreatedAt,
		UpdatedAt: updatedAt(rec), Owner: before.Owner}
	x.putRun(id, c)
	if r, ok := x.st.resOfRun(id); ok && runs.ShouldPersist(beforeRec, rec) {
		nr := *r
		nr.Record = encode(runs.SortedCopy(runs.ObjectValue(rec)).Obj)
		nr.Status = c.Status
		nr.UpdatedAt = x.now()
		x.putRes(&nr)
	}
	return c
}

// hydrate implements runs-api §10.1: the run visible in scope, copied from its
// reservation into the cache when needed, with the stale-owner interruption.
func (x *tx) hydrate(id, scope string) (*Cached, bool) {
	if c, ok := x.st.getRun(id); ok && c.Owner.Scope == scope {
		return c, true
	}
	r, ok := x.st.resOfRun(id)
	if !ok || r.Scope != scope {
		return nil, false
	}
	rec := decode(r.Record)
	c := &Cached{Record: r.Record, Status: r.Status, CreatedAt: createdAt(rec), UpdatedAt: r.UpdatedAt, Owner: r.owner()}
	if !r.Alive && !runs.IsTerminal(r.Status) {
		now := x.now()
		rec := runs.Interrupt(rec, now)
		c = &Cached{Record: encode(rec), Status: runs.Interrupted, CreatedAt: c.CreatedAt, UpdatedAt: now, Owner: r.owner()}
		nr := *r
		nr.Record = encode(runs.SortedCopy(runs.ObjectValue(rec)).Obj)
		nr.Status = runs.Interrupted
		nr.UpdatedAt = now
		x.putRes(&nr)
	}
	x.putRun(id, c)
	return c, true
}

// addressed is the first step of every run-addressing operation and control:
// the sweep tick, then hydration in the current scope; not visible → 404.
// Its effects stay even when the operation then fails (controls §11).
func (x *tx) addressed(id string) (*Cached, *runs.Error) {
	x.sweepTick()
	c, ok := x.hydrate(id, x.scope())
	if !ok {
		return nil, runs.RunNotFound(id)
	}
	return c, nil
}

// visible checks visibility without hydration (RunEvents, runs-api §6.4.2 step 3).
func (x *tx) visible(id, scope string) bool {
	if c, ok := x.st.getRun(id); ok && c.Owner.Scope == scope {
		return true
	}
	if r, ok := x.st.resOfRun(id); ok {
		return r.Scope == scope
	}
	return false
}

// sweepTick evaluates the lazy retention schedule (runs-api §11.1).
func (x *tx) sweepTick() {
	now := x.now()
	if !x.st.hasSweep {
		x.st.nextSweep, x.st.hasSweep = now+runs.SweepTick, true
		x.dirty = true
		return
	}
	if now < x.st.nextSweep {
		return
	}
	tick := runs.NextSweep(x.st.nextSweep, now)
	x.sweep(tick)
	x.st.nextSweep = tick + runs.SweepTick
	x.dirty = true
}

// sweep is one retention sweep at time at (runs-api §11.2); it returns the
// number of cached runs removed.
func (x *tx) sweep(at float64) int {
	if !x.view {
		x.g.transports.Expire(x.name, x.branch, at)
	}
	var doomed []string
	it := x.st.sweepable.Iterator()
	for !it.Done() {
		k, _, _ := it.Next()
		if !runs.Expired(k.at, at, runs.CacheRetention) {
			break
		}
		doomed = append(doomed, k.key)
	}
	for _, id := range doomed {
		x.delRun(id)
	}
	return len(doomed)
}

// prune deletes terminal reservations older than 24 hours (runs-api §11.3).
func (x *tx) prune() {
	limit := x.now() - runs.DurableRetention
	var doomed []storage.ReservationKey
	it := x.st.prunable.Iterator()
	for !it.Done() {
		k, _, _ := it.Next()
		if !(k.at < limit) {
			break
		}
		doomed = append(doomed, k.key)
	}
	for _, k := range doomed {
		x.delRes(k.Scope, k.Key)
	}
}

// openTransport opens the transport of run id, created at now, when x commits.
func (x *tx) openTransport(id string, now float64) {
	if x.view {
		return
	}
	x.opened = append(x.opened, opening{id, now})
}

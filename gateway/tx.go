package gateway

import (
	"math"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// The tx mutators: every change to state goes through them, so the durable
// batch, the change flag and the indexes stay in step.

func (x *tx) putRun(id string, c *Cached) {
	x.runChanged("run.changed", id, c.Status)
	x.st.putRun(x.g.cat, id, c)
	x.dirty = true
}

func (x *tx) delRun(id string) {
	x.runChanged("run.removed", id, "")
	x.st.delRun(x.g.cat, id)
	x.dirty = true
}

func (x *tx) putRes(r *Reservation) {
	x.st.putRes(x.g.cat, r)
	x.dirty = true
	x.writeRes(r)
}

// admitRes stores r, the plain reservation of a run just admitted in storage
// namespace nsI (catalog index): as a log entry when it can be one.
func (x *tx) admitRes(r *Reservation, nsI uint32) {
	if !x.st.res.admit(x.g.cat, nsI, r) {
		x.putRes(r)
		return
	}
	x.dirty = true
	x.writeRes(r)
}

// writeRes adds reservation r to the durable batch.
func (x *tx) writeRes(r *Reservation) {
	if x.durable {
		x.batch.Upsert = append(x.batch.Upsert, r.row(x.name))
	}
}

func (x *tx) delRes(scope, key string) {
	r, ok := x.st.res.get(x.g.cat, scope, key)
	if !ok {
		return
	}
	x.st.delRes(x.g.cat, scope, key)
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
	x.runEvent(runID, frame)
}

func decode(b []byte) *runs.Obj {
	v, err := runs.ParseStored(b)
	if err != nil || v.Kind != runs.Object {
		// Records are rendered by this package; failing to read one back is a bug.
		panic("gateway: stored record does not parse: " + string(b))
	}
	return v.Obj
}

func encode(o *runs.Obj) []byte { return runs.MarshalValue(runs.ObjectValue(o)) }

func updatedAt(o *runs.Obj) float64 {
	v, _ := o.Get("updated_at")
	return v.Float
}

// setRecord replaces run id's cached record after a change and applies the
// persist rule (runs-api §10.2) to its reservation.
func (x *tx) setRecord(id string, before *Cached, rec *runs.Obj, beforeRec *runs.Obj) *Cached {
	c := &Cached{Record: encode(rec), Status: runs.RecordStatus(rec), UpdatedAt: updatedAt(rec), Owner: before.Owner}
	x.putRun(id, c)
	if r, ok := x.st.res.ofRun(x.g.cat, id); ok && runs.ShouldPersist(beforeRec, rec) {
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
	if c, ok := x.st.runs.get(x.g.cat, id); ok && c.Owner.Scope == scope {
		return c, true
	}
	r, ok := x.st.res.ofRun(x.g.cat, id)
	if !ok || r.Scope != scope {
		return nil, false
	}
	c := &Cached{Record: r.durable(), Status: r.Status, UpdatedAt: r.UpdatedAt, Owner: r.Owner}
	if !r.Owner.Alive && !runs.IsTerminal(r.Status) {
		now := x.now()
		rec := runs.Interrupt(decode(c.Record), now)
		c = &Cached{Record: encode(rec), Status: runs.Interrupted, UpdatedAt: now, Owner: r.Owner}
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
	if c, ok := x.st.runs.get(x.g.cat, id); ok && c.Owner.Scope == scope {
		return true
	}
	if r, ok := x.st.res.ofRun(x.g.cat, id); ok {
		return r.Scope == scope
	}
	return false
}

// sweepTick evaluates the lazy retention schedule (runs-api §11.1).
func (x *tx) sweepTick() {
	now := x.now()
	if !x.st.hasSweep {
		x.st.nextSweep, x.st.hasSweep = now+60, true
		x.dirty = true
		return
	}
	if now < x.st.nextSweep {
		return
	}
	tick := x.st.nextSweep + math.Floor((now-x.st.nextSweep)/60)*60
	x.sweep(tick)
	x.st.nextSweep = tick + 60
	x.dirty = true
}

// sweep is one retention sweep at time at (runs-api §11.2); it returns the
// number of cached runs removed.
func (x *tx) sweep(at float64) int {
	if !x.view {
		x.g.expireTransports(x.name, x.branch, at)
	}
	var doomed []string
	it := x.st.sweepable.Iterator()
	for !it.Done() {
		k, _, _ := it.Next()
		if !(at-k.at > 3600) {
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
	limit := x.now() - 86400
	var doomed []string
	it := x.st.prunable.Iterator()
	for !it.Done() {
		k, _, _ := it.Next()
		if !(k.at < limit) {
			break
		}
		doomed = append(doomed, k.key)
	}
	for _, k := range doomed {
		r, _ := x.st.res.other.Get(k) // terminal, so never an entry of the log
		x.delRes(r.Scope, r.Key)
	}
}

// openTransport opens the transport of the n-th run, id, when x commits; nsI
// is the catalog index of its storage namespace (0: none).
func (x *tx) openTransport(id string, nsI uint32, n int64, now float64) {
	if x.view {
		return
	}
	x.runChanged("run.created", id, runs.Queued)
	x.opened = append(x.opened, opening{tkey{x.name, x.branch, id}, nsI, n})
	x.created = now
}

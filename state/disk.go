package state

import (
	"context"
	"math"

	"github.com/benbjohnson/immutable"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// diskRows are the reservations a namespace had in the store (--db) when the
// process started. Start-up reads none of them: a row is read when first
// asked for, by key or by run id (upstream hydrates a run from its durable
// row the same way), so start-up cost and memory do not grow with the file.
//
// Every State of the namespace that descends from start-up shares one
// diskRows and sees a row unless it masked its key (State.masked): a State
// that changed or removed a row keeps its own version in memory.
//
// Invariant: a key not in orig has, in the store, the row it had at
// start-up. Every key is read and recorded in orig before it is first
// written — State.DelRes reads it so before masking — so what orig does not
// hold the store still answers as at start-up; what orig holds is that
// start-up row (nil: none). After all() (a checkout of main, a logical
// restart, a repair, which rewrite whole namespaces), orig holds every row
// and the store is not read again.
//
// The durable prune (runs-api §11.3) also reaches start-up rows not read yet:
// terms indexes every terminal start-up row orig holds by (updatedAt, key),
// and every terminal start-up row updated before scanned is in orig (scan
// reads them). A State walks terms from its own cursor (State.pruned).
type diskRows struct {
	store       storage.Store
	ns          string
	orig        map[storage.ReservationKey]*Reservation // the row of each key at start-up (nil: none)
	byRun       map[string][]storage.ReservationKey     // run id → keys in orig whose start-up row has it
	runsRead    map[string]bool                         // run ids whose start-up rows orig holds (ofRun read them)
	withoutRows int                                     // ids in runsRead without start-up rows
	complete    bool                                    // orig holds every row
	terms       *immutable.SortedMap[aged[storage.ReservationKey], struct{}]
	scanned     float64 // every terminal start-up row updated before it is in orig
}

// maxRunsWithoutRows bounds the run ids without start-up rows that ofRun
// remembers (runs of this process asked for again and again).
const maxRunsWithoutRows = 100_000

func newDiskRows(store storage.Store, ns string) *diskRows {
	return &diskRows{store: store, ns: ns, orig: map[storage.ReservationKey]*Reservation{},
		byRun: map[string][]storage.ReservationKey{}, runsRead: map[string]bool{},
		terms:   immutable.NewSortedMap[aged[storage.ReservationKey], struct{}](agedComparer[storage.ReservationKey]{compareRes}),
		scanned: math.Inf(-1)}
}

// diskRow is a stored row as a start-up reservation: a real restart made every
// owner stale (runs-api §10.4).
func diskRow(r storage.Reservation) *Reservation {
	rec := runs.StoredRecord(r.Record)
	r.Namespace = "" // a batch names it
	r.Local, r.Alive = false, false
	return &Reservation{Reservation: r, Status: runs.RecordStatus(rec)}
}

func (d *diskRows) record(k storage.ReservationKey, r *Reservation) {
	if _, ok := d.orig[k]; ok {
		return
	}
	d.orig[k] = r
	if r != nil {
		d.byRun[r.RunID] = append(d.byRun[r.RunID], k)
		if runs.IsTerminal(r.Status) {
			d.terms = d.terms.Set(aged[storage.ReservationKey]{r.UpdatedAt, k}, struct{}{})
		}
	}
}

// scan reads into orig every terminal start-up row updated before before
// (the store once per range: later calls read only what is newer than what
// was read). A row of a key orig holds is not a start-up row (it was read
// before it was written); the others are, as the store still holds them.
// Unfinished rows are not kept: a prune never takes them.
func (d *diskRows) scan(before float64) {
	if d.complete || before <= d.scanned {
		return
	}
	rows, err := d.store.ReservationsUpdatedIn(context.Background(), d.ns, d.scanned, before)
	if err != nil {
		panic(runs.Storage(err))
	}
	for _, row := range rows {
		if r := diskRow(row); runs.IsTerminal(r.Status) {
			d.record(resKey(row.Scope, row.Key), r)
		}
	}
	d.scanned = before
}

// get returns the start-up row of (scope, key), nil when there was none. A
// row found is kept in orig; a key found missing is kept only when the caller
// is about to write it (writing), so that reads of keys that never existed —
// every new Idempotency-Key, admitted or refused — hold no memory: orig holds
// at most the file's rows and the keys written since start-up.
func (d *diskRows) get(scope, key string, writing bool) *Reservation {
	k := resKey(scope, key)
	if r, ok := d.orig[k]; ok || d.complete {
		return r
	}
	row, ok, err := d.store.Reservation(context.Background(), d.ns, scope, key)
	if err != nil {
		panic(runs.Storage(err)) // answered 500 by the locked wrapper
	}
	var r *Reservation
	if ok {
		r = diskRow(row)
	}
	if r != nil || writing {
		d.record(k, r)
	}
	return r
}

// ofRun returns the keys of the start-up rows of run id. The store is asked
// once per run id that has rows: afterwards orig holds every start-up row of
// id (a row of id written since was read, so recorded, before it was
// written), and a run changed again and again (every observe asks for its
// reservation) costs no further read. An id without rows is remembered only
// when the asking State holds that run (known) and, of those, at most
// maxRunsWithoutRows: ids that never existed are asked again each time and
// hold no memory.
func (d *diskRows) ofRun(id string, known bool) []storage.ReservationKey {
	if !d.complete && !d.runsRead[id] {
		rows, err := d.store.ReservationsOfRun(context.Background(), d.ns, id)
		if err != nil {
			panic(runs.Storage(err))
		}
		for _, row := range rows {
			d.record(resKey(row.Scope, row.Key), diskRow(row))
		}
		if len(rows) > 0 || known && d.withoutRows < maxRunsWithoutRows {
			d.runsRead[id] = true
			if len(rows) == 0 {
				d.withoutRows++
			}
		}
	}
	return d.byRun[id]
}

// all reads every start-up row not read yet; afterwards the store is never
// read again.
func (d *diskRows) all() {
	if d.complete {
		return
	}
	rows, err := d.store.Reservations(context.Background(), d.ns)
	if err != nil {
		panic(runs.Storage(err)) // answered 500 by the locked wrapper
	}
	for _, row := range rows {
		d.record(resKey(row.Scope, row.Key), diskRow(row))
	}
	d.complete, d.scanned = true, math.Inf(1)
}

// diskPrunable returns the keys of the terminal start-up rows s still sees
// whose updatedAt expired reports true for, oldest first; every expired one
// is updated before before. s's cursor moves past the rows s masked, so each
// is walked over once.
func (s *State) diskPrunable(before float64, expired func(updatedAt float64) bool) []storage.ReservationKey {
	d := s.disk
	d.scan(before)
	var out []storage.ReservationKey
	it := d.terms.Iterator()
	if s.pruned != nil {
		it.Seek(*s.pruned)
	}
	moving := true
	for !it.Done() {
		a, _, _ := it.Next()
		if s.isMasked(a.key) {
			if moving {
				s.pruned = &a
			}
			continue
		}
		if !expired(a.at) {
			break
		}
		moving = false
		out = append(out, a.key)
	}
	return out
}

// Flatten makes s hold every reservation it sees in memory, without disk:
// for the operations that rewrite every reservation.
func (s *State) Flatten() {
	if s.disk == nil {
		return
	}
	d := s.disk
	d.all()
	s.disk, s.pruned = nil, nil
	for k, r := range d.orig {
		if r != nil && !s.isMasked(k) {
			s.addRes(k, r)
		}
	}
	s.masked = nil
}

// isMasked reports whether s changed or removed the start-up row of k.
func (s *State) isMasked(k storage.ReservationKey) bool {
	if s.masked == nil {
		return false
	}
	_, ok := s.masked.Get(k)
	return ok
}

// StartupRows returns the read of the store's rows that EachStartupRow needs
// (nil when it needs none: no start-up rows, or all of them read). The read
// may run without the gateway's lock, so that a listing of a large file does
// not stall every request: whatever changed in the store since, s masks.
func (s *State) StartupRows() func() ([]storage.Reservation, error) {
	d := s.disk
	if d == nil || d.complete {
		return nil
	}
	return func() ([]storage.Reservation, error) { return d.store.Reservations(context.Background(), d.ns) }
}

// EachStartupRow calls f with every start-up row s still sees and has not
// changed (unmasked): orig's where orig holds its key — a key written since
// start-up was read first, so orig holds its start-up row — and otherwise
// stored's, the store's rows as StartupRows read them (not kept). The control
// plane's run listing walks them (a file's runs are listed before anything
// read them).
func (s *State) EachStartupRow(stored []storage.Reservation, f func(r *Reservation)) {
	d := s.disk
	if d == nil {
		return
	}
	for k, r := range d.orig {
		if r != nil && !s.isMasked(k) {
			f(r)
		}
	}
	if d.complete {
		return
	}
	for _, row := range stored {
		k := resKey(row.Scope, row.Key)
		if _, read := d.orig[k]; !read && !s.isMasked(k) {
			f(diskRow(row))
		}
	}
}

// diskOfRun returns the newest start-up row of run id that s still sees.
func (s *State) diskOfRun(id string) *Reservation {
	var best *Reservation
	_, known := s.runs.Get(id)
	for _, k := range s.disk.ofRun(id, known) {
		if r := s.disk.orig[k]; !s.isMasked(k) && (best == nil || r.RunN > best.RunN) {
			best = r
		}
	}
	return best
}

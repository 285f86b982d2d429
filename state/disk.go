package state

import (
	"context"
	"math"
	"slices"
	"sort"

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
// diskRows and sees a row unless it masked its key (State.masked) — a State
// that changed or removed a row keeps its own version in memory — or pruned
// it (State.prunedAt), with its own owner flags (State.diskAlive).
//
// Invariant: a key not in orig has, in the store, the row it had at start-up
// (its owner flags aside: a start-up row is read with every owner stale, and
// a State gives it its own), or none, or a row this process wrote for a run
// it admitted — which tells itself by its run counter: the namespace's
// counter at start-up (runs) is at least every start-up row's RunN (the store
// raises it in the batch that writes a greater one) and below the counter of
// every run admitted since. Every key is read and its start-up row recorded in
// orig before it is first written — State.DelRes reads it so before masking
// — so orig holds start-up rows only, and a key without one is neither kept
// nor masked: what a process writes for new keys holds no memory once pruned.
// A durable prune does not delete a row, it marks it (storage.Expiry), so
// older States still read it. After all() (a checkout of main or a repair,
// which rewrite whole namespaces), orig holds every row and the store is not
// read again.
//
// The durable prune (runs-api §11.3) reaches the start-up rows not read yet
// without reading them: expiring lists every terminal start-up row updated
// before scanned, by (updatedAt, key) — from the store's index for the keys
// orig does not hold, from terms (orig's terminal rows by age) for the others
// — so that a State counts the rows its prune takes (State.PruneStartup).
type diskRows struct {
	store       storage.Store
	ns          string
	runs        int64                                                        // the namespace's run counter at start-up
	orig        map[storage.ReservationKey]*Reservation                      // the start-up row of each key read
	byRun       map[string][]storage.ReservationKey                          // run id → keys in orig whose start-up row has it
	runsRead    map[string]bool                                              // run ids whose start-up rows orig holds (ofRun read them)
	withoutRows int                                                          // ids in runsRead without start-up rows
	complete    bool                                                         // orig holds every row
	terms       *immutable.SortedMap[aged[storage.ReservationKey], struct{}] // orig's terminal rows by (updatedAt, key)
	expiring    []aged[storage.ReservationKey]                               // every terminal start-up row updated before scanned, in order
	scanned     float64
}

// maxRunsWithoutRows bounds the run ids without start-up rows that ofRun
// remembers (runs of this process asked for again and again).
const maxRunsWithoutRows = 100_000

func newDiskRows(store storage.Store, ns string, runs int64) *diskRows {
	return &diskRows{store: store, ns: ns, runs: runs, orig: map[storage.ReservationKey]*Reservation{},
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

// startupRow reports whether the store's row of key k, of run counter n, is
// the start-up row of k that orig does not hold yet: not a row this process
// wrote for a run it admitted (diskRows' invariant), and k not read yet.
func (d *diskRows) startupRow(k storage.ReservationKey, n int64) bool {
	_, read := d.orig[k]
	return n <= d.runs && !read
}

// record keeps r, the start-up row of k that startupRow found, in orig.
func (d *diskRows) record(k storage.ReservationKey, r *Reservation) {
	d.orig[k] = r
	d.byRun[r.RunID] = append(d.byRun[r.RunID], k)
	if r.Terminal {
		d.terms = d.terms.Set(aged[storage.ReservationKey]{r.UpdatedAt, k}, struct{}{})
	}
}

// scan extends expiring to the terminal start-up rows updated before before
// (the store once per range of time: each call reads only what is newer than
// what was read). The store's rows of keys orig holds may not be start-up
// rows (they were read before being written): terms gives those; nor are the
// rows this process wrote. Only keys, times and counters are read, no record,
// and nothing is kept in orig.
func (d *diskRows) scan(before float64) {
	if before <= d.scanned {
		return
	}
	var band []aged[storage.ReservationKey]
	if !d.complete {
		rows, err := d.store.TerminalIn(context.Background(), d.ns, d.scanned, before)
		if err != nil {
			panic(runs.Storage(err))
		}
		for _, row := range rows {
			if d.startupRow(row.Key, row.RunN) {
				band = append(band, aged[storage.ReservationKey]{row.UpdatedAt, row.Key})
			}
		}
	}
	it := d.terms.Iterator()
	it.Seek(aged[storage.ReservationKey]{at: d.scanned})
	for !it.Done() {
		a, _, _ := it.Next()
		if a.at >= before {
			break
		}
		band = append(band, a)
	}
	slices.SortFunc(band, agedComparer[storage.ReservationKey]{compareRes}.Compare)
	d.expiring = append(d.expiring, band...)
	d.scanned = before
}

// get returns the start-up row of (scope, key), nil when there was none. A
// row found is kept in orig; nothing is kept for a key without one — every
// new Idempotency-Key, admitted or refused — so orig holds at most the file's
// rows, however many keys the process writes.
func (d *diskRows) get(scope, key string) *Reservation {
	k := resKey(scope, key)
	if r, ok := d.orig[k]; ok || d.complete {
		return r
	}
	row, ok, err := d.store.Reservation(context.Background(), d.ns, scope, key)
	if err != nil {
		panic(runs.Storage(err)) // answered 500 by the locked wrapper
	}
	if !ok || !d.startupRow(k, row.RunN) {
		return nil
	}
	r := diskRow(row)
	d.record(k, r)
	return r
}

// ofRun returns the keys of the start-up rows of run id. The store is asked
// once per run id that has rows: afterwards orig holds every start-up row of
// id (a row of id written since was read, so recorded, before it was
// written), and a run changed again and again (every observe asks for its
// reservation) costs no further read. An id without start-up rows — one that
// never existed, or a run of this process — is remembered only when the
// asking State holds that run (known) and, of those, at most
// maxRunsWithoutRows: the others are asked again each time and hold no memory.
func (d *diskRows) ofRun(id string, known bool) []storage.ReservationKey {
	if !d.complete && !d.runsRead[id] {
		rows, err := d.store.ReservationsOfRun(context.Background(), d.ns, id)
		if err != nil {
			panic(runs.Storage(err))
		}
		found := false
		for _, row := range rows {
			if row.RunN > d.runs {
				continue // a run admitted since start-up
			}
			found = true
			if k := resKey(row.Scope, row.Key); d.startupRow(k, row.RunN) {
				d.record(k, diskRow(row))
			}
		}
		if found || known && d.withoutRows < maxRunsWithoutRows {
			d.runsRead[id] = true
			if !found {
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
		if k := resKey(row.Scope, row.Key); d.startupRow(k, row.RunN) {
			d.record(k, diskRow(row))
		}
	}
	d.complete = true
}

// PruneStartup is the durable prune at now (runs-api §11.3) of the start-up
// rows s sees, read or not: each terminal one whose updatedAt expired is gone
// for s from now on (s.prunedAt moves to now; none is read or masked), and
// Reserved counts them out. It reports whether it took any: the store then
// marks them with one statement (storage.Expiry). The reservations in memory
// are Prunable's.
func (s *State) PruneStartup(now float64) bool {
	if s.disk == nil || now <= s.prunedAt {
		return false // expiry only grows with now: nothing more to take
	}
	d := s.disk
	// Every expired updatedAt is below now − DurableRetention + 1 (the bound
	// allows for the rounding of the subtraction).
	d.scan(now - runs.DurableRetention + 1)
	i := sort.Search(len(d.expiring), func(i int) bool { return !s.pruned(d.expiring[i].at) })
	taken := 0
	for ; i < len(d.expiring) && runs.Expired(d.expiring[i].at, now, runs.DurableRetention); i++ {
		if !s.isMasked(d.expiring[i].key) {
			taken++
		}
	}
	s.prunedAt, s.nRes = now, s.nRes-taken
	return taken > 0
}

// pruned reports whether s's prunes took a terminal start-up row updated at.
func (s *State) pruned(at float64) bool { return runs.Expired(at, s.prunedAt, runs.DurableRetention) }

// startup is start-up row r as s sees it: nil when there is none or s pruned
// it, else r with s's owner flags (local:false; alive false since the real
// restart, until a logical restart sets it).
func (s *State) startup(r *Reservation) *Reservation {
	if r == nil || r.Terminal && s.pruned(r.UpdatedAt) {
		return nil
	}
	if s.diskAlive {
		return r.withOwner(false, true)
	}
	return r
}

// Flatten makes s hold every reservation it sees in memory, without disk:
// for the operations that rewrite every reservation.
func (s *State) Flatten() {
	if s.disk == nil {
		return
	}
	d := s.disk
	d.all()
	for k, r := range d.orig {
		if r = s.startup(r); r != nil && !s.isMasked(k) {
			s.addRes(k, r)
		}
	}
	s.disk, s.masked, s.prunedAt, s.diskAlive = nil, nil, 0, false
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
// changed (unmasked, not pruned), with s's owner flags: orig's where orig
// holds its key — a key written since start-up was read first, so orig holds
// its start-up row if it had one — and otherwise stored's start-up rows, the
// store's rows as StartupRows read them (not kept). The control plane's run
// listing walks them (a file's runs are listed before anything read them).
func (s *State) EachStartupRow(stored []storage.Reservation, f func(r *Reservation)) {
	d := s.disk
	if d == nil {
		return
	}
	for k, r := range d.orig {
		if r = s.startup(r); r != nil && !s.isMasked(k) {
			f(r)
		}
	}
	if d.complete {
		return
	}
	for _, row := range stored {
		if k := resKey(row.Scope, row.Key); d.startupRow(k, row.RunN) && !s.isMasked(k) {
			if r := s.startup(diskRow(row)); r != nil {
				f(r)
			}
		}
	}
}

// diskOfRun returns the newest start-up row of run id that s still sees.
func (s *State) diskOfRun(id string) *Reservation {
	var best *Reservation
	_, known := s.runs.Get(id)
	for _, k := range s.disk.ofRun(id, known) {
		if r := s.startup(s.disk.orig[k]); r != nil && !s.isMasked(k) && (best == nil || r.RunN > best.RunN) {
			best = r
		}
	}
	return best
}

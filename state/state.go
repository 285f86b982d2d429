package state

import (
	"cmp"
	"slices"
	"strings"

	"github.com/benbjohnson/immutable"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// resKey identifies the reservation of (scope, key) in a namespace.
func resKey(scope, key string) storage.ReservationKey {
	return storage.ReservationKey{Scope: scope, Key: key}
}

// resHasher hashes reservation keys for the persistent maps (FNV-1a of
// scope, a NUL and key: deterministic, so iteration order is too).
type resHasher struct{}

func (resHasher) Hash(k storage.ReservationKey) uint32 {
	return fnv(fnv(fnv(2166136261, k.Scope), "\x00"), k.Key)
}

func fnv(h uint32, s string) uint32 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

func (resHasher) Equal(a, b storage.ReservationKey) bool { return a == b }

// aged is an entry of a retention index: a time, then a key (a run id or a
// reservation key), in that order.
type aged[K any] struct {
	at  float64
	key K
}

// agedComparer orders aged entries by time, then by key (compare).
type agedComparer[K any] struct{ compare func(a, b K) int }

func (c agedComparer[K]) Compare(a, b aged[K]) int {
	return cmp.Or(cmp.Compare(a.at, b.at), c.compare(a.key, b.key))
}

func compareRes(a, b storage.ReservationKey) int {
	return cmp.Or(strings.Compare(a.Scope, b.Scope), strings.Compare(a.Key, b.Key))
}

// expiredKeys returns the keys of index, oldest first, whose time expired
// reports true for: the walk stops at the first that is not expired.
func expiredKeys[K any](index *immutable.SortedMap[aged[K], struct{}], expired func(at float64) bool) []K {
	var out []K
	for it := index.Iterator(); !it.Done(); {
		k, _, _ := it.Next()
		if !expired(k.at) {
			break
		}
		out = append(out, k.key)
	}
	return out
}

// State is one namespace's state on one branch (controls §8.8, "restored").
// It is a value: copying it is an O(1) snapshot because every collection is a
// persistent map. Never change a map in place; every mutator returns a new map.
// The settings and counters are plain exported fields; the collections are
// reached through methods, which keep the indexes in step.
//
// Invariants (Check): every entry of runs has a cached run or a reservation
// key, and its keys are those of the reservations of its run id, ordered by N;
// nCached counts the cached runs; sweepable holds exactly the cached runs that
// are completed, failed or cancelled, by UpdatedAt; prunable exactly the
// terminal reservations, by UpdatedAt; a reservation is Terminal exactly when
// its status is; live counts the unfinished local runs;
// nApprovals and nSteers count the queued entries; without disk, nRes is the
// number of reservations in res; with disk, every key in res that has a
// start-up row is masked (so DelRes counts a start-up row once), and only
// those are.
type State struct {
	runs      *immutable.Map[string, entry]                        // run id → its cached run and reservation keys
	res       *immutable.Map[storage.ReservationKey, *Reservation] // (scope, key) → reservation
	approvals *immutable.Map[string, *immutable.List[*runs.Obj]]   // run id → pending approval events (FIFO; shared like steers)
	steers    *immutable.Map[string, *immutable.List[string]]      // run id → queued steer texts (shared by every copy: appending is O(log n))
	cursors   *immutable.Map[string, scenarios.Cursor]             // run id → its scenario position (main only; scenarios §5)

	sweepable *immutable.SortedMap[aged[string], struct{}]                 // cached completed/failed/cancelled runs by updated_at
	prunable  *immutable.SortedMap[aged[storage.ReservationKey], struct{}] // terminal reservations by durable updatedAt

	ScopeProfile, ScopeIdentity string // "" = default scope
	NextSweep                   float64
	HasSweep                    bool
	RunCounter, ApprovalCounter int64
	Draining                    bool

	nCached    int // entries of runs with a cached run
	live       int // unfinished runs with a local owner (capacity, runs-api §14.1)
	nApprovals int
	nSteers    int
	nRes       int // reservations seen: in res, and on disk unless masked

	// disk, when set, holds the reservations the store had at start-up
	// (disk.go); masked are the keys of those this State changed or removed.
	// prunedAt is the latest now this State's durable prune ran at (-Inf:
	// none): the terminal start-up rows expired at it are gone for it.
	// diskAlive is the alive flag of the owners of the start-up rows (false
	// after the real restart; a logical restart sets it).
	disk      *diskRows
	masked    *immutable.Map[storage.ReservationKey, struct{}]
	prunedAt  float64
	diskAlive bool
}

// New is an empty State: no run, reservation or queue, default scope, no
// sweep schedule, counters at zero.
func New() State {
	return State{
		runs:      immutable.NewMap[string, entry](nil),
		res:       immutable.NewMap[storage.ReservationKey, *Reservation](resHasher{}),
		approvals: immutable.NewMap[string, *immutable.List[*runs.Obj]](nil),
		steers:    immutable.NewMap[string, *immutable.List[string]](nil),
		cursors:   immutable.NewMap[string, scenarios.Cursor](nil),
		sweepable: immutable.NewSortedMap[aged[string], struct{}](agedComparer[string]{strings.Compare}),
		prunable:  immutable.NewSortedMap[aged[storage.ReservationKey], struct{}](agedComparer[storage.ReservationKey]{compareRes}),
	}
}

// Records is the number of state rows a checkpoint captures (controls §8.1):
// a run and its owner count two.
func (s *State) Records() int {
	n := 2*s.nCached + s.nRes + s.nApprovals + s.nSteers
	if s.ScopeProfile != "" {
		n++
	}
	if s.HasSweep {
		n++
	}
	if s.Draining {
		n++
	}
	return n
}

// entry is what runs holds for one run id: the cached run (nil when the
// cache does not hold it) and the keys of the run's reservations held in
// memory, ordered by N. One entry serves both layers, so a keyed admission
// changes one entry, not two.
type entry struct {
	cached *Cached
	res    []storage.ReservationKey
}

// setEntry stores e as run id's entry, or removes the entry when e holds
// nothing.
func (s *State) setEntry(id string, e entry) {
	if e.cached == nil && len(e.res) == 0 {
		s.runs = s.runs.Delete(id)
	} else {
		s.runs = s.runs.Set(id, e)
	}
}

// Run returns cached run id.
func (s *State) Run(id string) (*Cached, bool) {
	e, _ := s.runs.Get(id)
	return e.cached, e.cached != nil
}

// PutRun stores c as cached run id, replacing the one there, and keeps the
// live count and the sweep index in step.
func (s *State) PutRun(id string, c *Cached) {
	e, _ := s.runs.Get(id)
	s.setEntry(id, s.withRun(id, e, c))
}

// PutRunRes stores c as cached run id and r as a reservation of it: PutRun
// and PutRes with one change of the run's entry when r's key is new (a keyed
// admission); a replaced reservation's key leaves the entry first.
func (s *State) PutRunRes(id string, c *Cached, r *Reservation) {
	if r.RunID != id {
		panic("state: PutRunRes: reservation of run " + r.RunID + " put with run " + id)
	}
	s.DelRes(r.Scope, r.Key)
	e, _ := s.runs.Get(id)
	e = s.withRes(e, resKey(r.Scope, r.Key), r)
	s.nRes++
	s.setEntry(id, s.withRun(id, e, c))
}

// withRun is e with cached run c (nil: none), the counts and the sweep index
// kept in step.
func (s *State) withRun(id string, e entry, c *Cached) entry {
	if old := e.cached; old != nil {
		s.nCached--
		if IsLive(old) {
			s.live--
		}
		if isSweepable(old.Status) {
			s.sweepable = s.sweepable.Delete(aged[string]{old.UpdatedAt, id})
		}
	}
	if c != nil {
		s.nCached++
		if IsLive(c) {
			s.live++
		}
		if isSweepable(c.Status) {
			s.sweepable = s.sweepable.Set(aged[string]{c.UpdatedAt, id}, struct{}{})
		}
	}
	e.cached = c
	return e
}

// DelRun removes cached run id, if any.
func (s *State) DelRun(id string) {
	e, _ := s.runs.Get(id)
	if e.cached != nil {
		s.setEntry(id, s.withRun(id, e, nil))
	}
}

// Res returns the reservation of (scope, key).
func (s *State) Res(scope, key string) (*Reservation, bool) {
	k := resKey(scope, key)
	if r, ok := s.res.Get(k); ok {
		return r, true
	}
	if s.disk != nil && !s.isMasked(k) {
		if r := s.startup(s.disk.get(scope, key)); r != nil {
			return r, true
		}
	}
	return nil, false
}

// ResOfRun returns the reservation of run id: of two runs sharing the id
// (runs-api §12.1), the newer one's.
func (s *State) ResOfRun(id string) (*Reservation, bool) {
	var best *Reservation
	if e, _ := s.runs.Get(id); len(e.res) > 0 {
		best, _ = s.res.Get(e.res[len(e.res)-1])
	}
	if s.disk != nil {
		if r := s.diskOfRun(id); r != nil && (best == nil || r.RunN > best.RunN) {
			best = r
		}
	}
	return best, best != nil
}

// PutRes stores r, replacing the reservation of its (scope, key).
func (s *State) PutRes(r *Reservation) {
	s.DelRes(r.Scope, r.Key)
	s.addRes(resKey(r.Scope, r.Key), r)
	s.nRes++
}

// addRes puts r under k into the maps and indexes; k holds nothing.
func (s *State) addRes(k storage.ReservationKey, r *Reservation) {
	e, _ := s.runs.Get(r.RunID)
	s.setEntry(r.RunID, s.withRes(e, k, r))
}

// withRes puts r under k into res and the prune index and returns e, the
// entry of r's run, with k among its keys.
func (s *State) withRes(e entry, k storage.ReservationKey, r *Reservation) entry {
	i, _ := slices.BinarySearchFunc(e.res, r.RunN, func(k storage.ReservationKey, n int64) int {
		o, _ := s.res.Get(k)
		return cmp.Compare(o.RunN, n)
	})
	e.res = slices.Insert(slices.Clone(e.res), i, k)
	s.res = s.res.Set(k, r)
	if runs.IsTerminal(r.Status) {
		s.prunable = s.prunable.Set(aged[storage.ReservationKey]{r.UpdatedAt, k}, struct{}{})
	}
	return e
}

// DelRes removes the reservation of (scope, key), if any.
func (s *State) DelRes(scope, key string) {
	k := resKey(scope, key)
	old, ok := s.res.Get(k)
	if s.disk != nil && !ok && !s.isMasked(k) {
		// The start-up row is read before its key is first written, and
		// masked (disk.go); a key in res without a mask has none.
		if r := s.disk.get(scope, key); r != nil {
			if s.startup(r) != nil {
				s.nRes--
			}
			if s.masked == nil {
				s.masked = immutable.NewMap[storage.ReservationKey, struct{}](resHasher{})
			}
			s.masked = s.masked.Set(k, struct{}{})
		}
	}
	if !ok {
		return
	}
	s.nRes--
	if runs.IsTerminal(old.Status) {
		s.prunable = s.prunable.Delete(aged[storage.ReservationKey]{old.UpdatedAt, k})
	}
	s.res = s.res.Delete(k)
	e, _ := s.runs.Get(old.RunID)
	e.res = slices.DeleteFunc(slices.Clone(e.res), func(o storage.ReservationKey) bool { return o == k })
	s.setEntry(old.RunID, e)
}

// EachRes calls f with every reservation; s is flattened first (disk.go).
func (s *State) EachRes(f func(r *Reservation)) {
	s.Flatten()
	it := s.res.Iterator()
	for !it.Done() {
		_, r, _ := it.Next()
		f(r)
	}
}

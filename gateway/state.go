package gateway

import (
	"cmp"
	"slices"
	"strings"

	"github.com/benbjohnson/immutable"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// Owner is a run's ownership stamp (runs-api §9): local means the run's executor
// lives in this process; alive means the owning process still runs.
type Owner struct {
	Scope string
	Keyed bool
	Local bool
	Alive bool
}

// Cached is one run in the cache layer. Record is the vendor JSON rendering of
// the run record in its current key order; Status, CreatedAt and UpdatedAt are
// kept beside it so retention, capacity and listings never parse records.
type Cached struct {
	Record    []byte
	Status    string
	CreatedAt float64
	UpdatedAt float64
	Owner     Owner
}

// Reservation is the durable row of a keyed submission (runs-api §7) and the
// status its record holds. The row's Record is the durable copy of the run
// record, keys sorted at every level; its RunN is the run's counter: of two
// runs with one id, the greater answers for it (0: unknown). A Reservation is
// never changed once made (every change makes a new one), so the store's
// batches carry the row itself and the in-memory store keeps that very row.
type Reservation struct {
	storage.Reservation
	Status string
}

// newReservation is the reservation of a new keyed run: run id with counter n,
// admitted in scope at now with record rec, owned here (runs-api §7, §9).
func newReservation(scope, key, fingerprint, id string, n int64, rec *runs.Obj, now float64) *Reservation {
	return &Reservation{Status: runs.RecordStatus(rec), Reservation: storage.Reservation{Scope: scope, Key: key,
		Fingerprint: fingerprint, RunID: id, RunN: n, OwnerScope: scope, Keyed: true, Local: true, Alive: true,
		Record: encode(runs.SortedCopy(runs.ObjectValue(rec)).Obj), UpdatedAt: now}}
}

// owner is r's owner stamp.
func (r *Reservation) owner() Owner {
	return Owner{Scope: r.OwnerScope, Keyed: r.Keyed, Local: r.Local, Alive: r.Alive}
}

// withOwner is r with the owner flags local and alive.
func (r *Reservation) withOwner(local, alive bool) *Reservation {
	c := *r
	c.Local, c.Alive = local, alive
	return &c
}

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

// aged orders entries by time, then by key, for the retention indexes.
type aged struct {
	at  float64
	key string
}

type agedComparer struct{}

func (agedComparer) Compare(a, b aged) int {
	return cmp.Or(cmp.Compare(a.at, b.at), strings.Compare(a.key, b.key))
}

// agedRes orders reservations by time, then by key, for prunable.
type agedRes struct {
	at  float64
	key storage.ReservationKey
}

type agedResComparer struct{}

func (agedResComparer) Compare(a, b agedRes) int {
	return cmp.Or(cmp.Compare(a.at, b.at), strings.Compare(a.key.Scope, b.key.Scope), strings.Compare(a.key.Key, b.key.Key))
}

// State is one namespace's state on one branch (controls §8.8, "restored").
// It is a value: copying it is an O(1) snapshot because every collection is a
// persistent map. Never change a map in place; every mutator returns a new map.
//
// Invariants (check): sweepable holds exactly the cached runs that are
// completed, failed or cancelled, by UpdatedAt; prunable exactly the terminal
// reservations, by UpdatedAt; byRun lists, for every run id, the keys of the
// reservations of that id ordered by N; live counts the unfinished local
// runs; nApprovals and nSteers count the queued entries; without disk, nRes
// is the number of reservations in res.
type State struct {
	runs      *immutable.Map[string, *Cached]                      // run id → cached run
	res       *immutable.Map[storage.ReservationKey, *Reservation] // (scope, key) → reservation
	byRun     *immutable.Map[string, []storage.ReservationKey]     // run id → keys of its reservations, by N
	approvals *immutable.Map[string, []*runs.Obj]                  // run id → pending approval events (FIFO)
	steers    *immutable.Map[string, []string]                     // run id → queued steer texts
	cursors   *immutable.Map[string, scenarios.Cursor]             // run id → its scenario position (main only; docs/scenarios.md §5)

	sweepable *immutable.SortedMap[aged, struct{}]    // cached completed/failed/cancelled runs by updated_at
	prunable  *immutable.SortedMap[agedRes, struct{}] // terminal reservations by durable updatedAt

	scopeProfile, scopeIdentity string // "" = default scope
	nextSweep                   float64
	hasSweep                    bool
	runCounter, approvalCounter int64
	draining                    bool

	live       int // unfinished runs with a local owner (capacity, runs-api §14.1)
	nApprovals int
	nSteers    int
	nRes       int // reservations seen: in res, and on disk unless masked

	// disk, when set, holds the reservations the store had at start-up
	// (disk.go); masked are the keys of those this State changed or removed.
	disk   *diskRows
	masked *immutable.Map[storage.ReservationKey, struct{}]
}

func newState() State {
	return State{
		runs:      immutable.NewMap[string, *Cached](nil),
		res:       immutable.NewMap[storage.ReservationKey, *Reservation](resHasher{}),
		byRun:     immutable.NewMap[string, []storage.ReservationKey](nil),
		approvals: immutable.NewMap[string, []*runs.Obj](nil),
		steers:    immutable.NewMap[string, []string](nil),
		cursors:   immutable.NewMap[string, scenarios.Cursor](nil),
		sweepable: immutable.NewSortedMap[aged, struct{}](agedComparer{}),
		prunable:  immutable.NewSortedMap[agedRes, struct{}](agedResComparer{}),
	}
}

// Records is the number of state rows a checkpoint captures (controls §8.1):
// a run and its owner count two.
func (s *State) Records() int {
	n := 2*s.runs.Len() + s.nRes + s.nApprovals + s.nSteers
	if s.scopeProfile != "" {
		n++
	}
	if s.hasSweep {
		n++
	}
	if s.draining {
		n++
	}
	return n
}

func isLive(c *Cached) bool { return c != nil && !runs.IsTerminal(c.Status) && c.Owner.Local }

func isSweepable(status string) bool {
	return status == runs.Completed || status == runs.Failed || status == runs.Cancelled
}

func (s *State) getRun(id string) (*Cached, bool) { return s.runs.Get(id) }

func (s *State) putRun(id string, c *Cached) {
	old, _ := s.runs.Get(id)
	s.unindexRun(id, old)
	s.runs = s.runs.Set(id, c)
	if isLive(c) {
		s.live++
	}
	if isSweepable(c.Status) {
		s.sweepable = s.sweepable.Set(aged{c.UpdatedAt, id}, struct{}{})
	}
}

func (s *State) delRun(id string) {
	old, ok := s.runs.Get(id)
	if !ok {
		return
	}
	s.unindexRun(id, old)
	s.runs = s.runs.Delete(id)
}

func (s *State) unindexRun(id string, old *Cached) {
	if old == nil {
		return
	}
	if isLive(old) {
		s.live--
	}
	if isSweepable(old.Status) {
		s.sweepable = s.sweepable.Delete(aged{old.UpdatedAt, id})
	}
}

// getRes returns the reservation of (scope, key).
func (s *State) getRes(scope, key string) (*Reservation, bool) {
	k := resKey(scope, key)
	if r, ok := s.res.Get(k); ok {
		return r, true
	}
	if s.disk != nil && !s.isMasked(k) {
		if r := s.disk.get(scope, key); r != nil {
			return r, true
		}
	}
	return nil, false
}

// resOfRun returns the reservation of run id: of two runs sharing the id
// (runs-api §12.1), the newer one's.
func (s *State) resOfRun(id string) (*Reservation, bool) {
	var best *Reservation
	if ks, ok := s.byRun.Get(id); ok {
		best, _ = s.res.Get(ks[len(ks)-1])
	}
	if s.disk != nil {
		if r := s.diskOfRun(id); r != nil && (best == nil || r.RunN > best.RunN) {
			best = r
		}
	}
	return best, best != nil
}

// putRes stores r, replacing the reservation of its (scope, key).
func (s *State) putRes(r *Reservation) {
	s.delRes(r.Scope, r.Key)
	s.addRes(resKey(r.Scope, r.Key), r)
	s.nRes++
}

// addRes puts r under k into the maps and indexes; k holds nothing.
func (s *State) addRes(k storage.ReservationKey, r *Reservation) {
	ks, _ := s.byRun.Get(r.RunID)
	i, _ := slices.BinarySearchFunc(ks, r.RunN, func(k storage.ReservationKey, n int64) int {
		o, _ := s.res.Get(k)
		return cmp.Compare(o.RunN, n)
	})
	s.byRun = s.byRun.Set(r.RunID, slices.Insert(slices.Clone(ks), i, k))
	s.res = s.res.Set(k, r)
	if runs.IsTerminal(r.Status) {
		s.prunable = s.prunable.Set(agedRes{r.UpdatedAt, k}, struct{}{})
	}
}

// delRes removes the reservation of (scope, key), if any.
func (s *State) delRes(scope, key string) {
	k := resKey(scope, key)
	if s.disk != nil && !s.isMasked(k) {
		// The start-up row is read before its key is first written (disk.go).
		if s.disk.get(scope, key) != nil {
			s.nRes--
		}
		if s.masked == nil {
			s.masked = immutable.NewMap[storage.ReservationKey, struct{}](resHasher{})
		}
		s.masked = s.masked.Set(k, struct{}{})
	}
	old, ok := s.res.Get(k)
	if !ok {
		return
	}
	s.nRes--
	if runs.IsTerminal(old.Status) {
		s.prunable = s.prunable.Delete(agedRes{old.UpdatedAt, k})
	}
	s.res = s.res.Delete(k)
	ks, _ := s.byRun.Get(old.RunID)
	if ks = slices.DeleteFunc(slices.Clone(ks), func(o storage.ReservationKey) bool { return o == k }); len(ks) == 0 {
		s.byRun = s.byRun.Delete(old.RunID)
	} else {
		s.byRun = s.byRun.Set(old.RunID, ks)
	}
}

func (s *State) setApprovals(id string, q []*runs.Obj) {
	s.approvals = setQueue(s.approvals, &s.nApprovals, id, q)
}

func (s *State) setSteers(id string, q []string) { s.steers = setQueue(s.steers, &s.nSteers, id, q) }

// setQueue returns m with run id's queue replaced by q (removed when empty),
// keeping *n, the number of entries of every queue in m, in step.
func setQueue[T any](m *immutable.Map[string, []T], n *int, id string, q []T) *immutable.Map[string, []T] {
	old, _ := m.Get(id)
	*n += len(q) - len(old)
	if len(q) == 0 {
		return m.Delete(id)
	}
	return m.Set(id, q)
}

// eachRes calls f with every reservation; s is flattened first (disk.go).
func (s *State) eachRes(f func(r *Reservation)) {
	s.flatten()
	it := s.res.Iterator()
	for !it.Done() {
		_, r, _ := it.Next()
		f(r)
	}
}

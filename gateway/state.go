package gateway

import (
	"cmp"
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
// the run record in its current key order; Status and UpdatedAt are kept beside
// it so retention and capacity never parse records.
type Cached struct {
	Record    []byte
	Status    string
	UpdatedAt float64
	Owner     Owner
}

// Reservation is the durable row of a keyed submission (runs-api §7).
// Record is the durable copy of the run record, keys sorted at every level;
// nil while it is the admission record of a plain run (queued, default session
// and model, UpdatedAt its creation time), which durable renders.
type Reservation struct {
	Scope, Key  string
	Fingerprint string
	RunID       string
	N           int64 // the run's counter: of two runs with one id, the greater answers for it (0: unknown)
	Owner       Owner
	Record      []byte
	Status      string
	UpdatedAt   float64
}

// durable is the durable record copy.
func (r *Reservation) durable() []byte {
	if r.Record != nil {
		return r.Record
	}
	return plainRecord(r.RunID, r.UpdatedAt)
}

// plainRecord is the durable copy of the admission record of a plain run.
func plainRecord(id string, at float64) []byte {
	return runs.AppendPlainRecord(make([]byte, 0, 240), id, at, true)
}

// row is r as the store keeps it in namespace ns. The record of a plain
// reservation is left nil: the flusher renders it (renderPlain), off the
// gateway lock.
func (r *Reservation) row(ns string) storage.Reservation {
	return storage.Reservation{Namespace: ns, Scope: r.Scope, Key: r.Key, Fingerprint: r.Fingerprint,
		RunID: r.RunID, RunN: r.N, OwnerScope: r.Owner.Scope, Keyed: r.Owner.Keyed, Local: r.Owner.Local,
		Alive: r.Owner.Alive, Record: r.Record, UpdatedAt: r.UpdatedAt}
}

func resKey(scope, key string) string { return scope + "\x00" + key }

// aged orders entries by time, then by key, for the retention indexes.
type aged struct {
	at  float64
	key string
}

type agedComparer struct{}

func (agedComparer) Compare(a, b aged) int {
	if c := cmp.Compare(a.at, b.at); c != 0 {
		return c
	}
	return strings.Compare(a.key, b.key)
}

// State is one namespace's state on one branch (controls §8.8, "restored").
// It is a value: copying it is an O(1) snapshot because every collection is a
// persistent map. Never change a map in place; every mutator returns a new map.
type State struct {
	runs      runTable
	res       resTable
	approvals *immutable.Map[string, []*runs.Obj]      // run id → pending approval events (FIFO)
	steers    *immutable.Map[string, []string]         // run id → queued steer texts
	cursors   *immutable.Map[string, scenarios.Cursor] // run id → its scenario position (main only; docs/scenarios.md §5)

	sweepable *immutable.SortedMap[aged, struct{}] // cached completed/failed/cancelled runs by updated_at
	prunable  *immutable.SortedMap[aged, struct{}] // terminal reservations by durable updatedAt

	scopeProfile, scopeIdentity string // "" = default scope
	nextSweep                   float64
	hasSweep                    bool
	runCounter, approvalCounter int64
	draining                    bool

	live       int // unfinished runs with a local owner (capacity, runs-api §14.1)
	nApprovals int
	nSteers    int
}

func newState() State {
	return State{
		runs:      newRunTable(),
		res:       newResTable(),
		approvals: immutable.NewMap[string, []*runs.Obj](nil),
		steers:    immutable.NewMap[string, []string](nil),
		cursors:   immutable.NewMap[string, scenarios.Cursor](nil),
		sweepable: immutable.NewSortedMap[aged, struct{}](agedComparer{}),
		prunable:  immutable.NewSortedMap[aged, struct{}](agedComparer{}),
	}
}

// Records is the number of state rows a checkpoint captures (controls §8.1).
func (s *State) Records() int {
	n := 2*s.runs.len + s.res.len + s.nApprovals + s.nSteers
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

func (s *State) putRun(cat *catalog, id string, c *Cached) {
	old, _ := s.runs.get(cat, id)
	s.unindexRun(id, old)
	s.runs.put(cat, id, c)
	s.indexRun(id, c)
}

// admitRun stores the n-th run, admitted (queued) at at; nsI is the catalog
// index of its storage namespace (0: none). plain tells that its record has
// the default session and model; record builds it when it must be rendered.
func (s *State) admitRun(cat *catalog, id string, nsI uint32, n int64, at float64, plain bool, owner Owner, record func() *runs.Obj) {
	if s.runs.admit(cat, id, nsI, n, at, owner, plain) {
		s.indexRun(id, &Cached{Status: runs.Queued, UpdatedAt: at, Owner: owner})
		return
	}
	s.putRun(cat, id, &Cached{Record: encode(record()), Status: runs.Queued, UpdatedAt: at, Owner: owner})
}

func (s *State) indexRun(id string, c *Cached) {
	if isLive(c) {
		s.live++
	}
	if isSweepable(c.Status) {
		s.sweepable = s.sweepable.Set(aged{c.UpdatedAt, id}, struct{}{})
	}
}

func (s *State) delRun(cat *catalog, id string) {
	old, ok := s.runs.get(cat, id)
	if !ok {
		return
	}
	s.unindexRun(id, old)
	s.runs.del(cat, id)
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

func (s *State) putRes(cat *catalog, r *Reservation) {
	k := resKey(r.Scope, r.Key)
	if old, ok := s.res.get(cat, r.Scope, r.Key); ok && runs.IsTerminal(old.Status) {
		s.prunable = s.prunable.Delete(aged{old.UpdatedAt, k})
	}
	s.res.put(cat, r)
	if runs.IsTerminal(r.Status) {
		s.prunable = s.prunable.Set(aged{r.UpdatedAt, k}, struct{}{})
	}
}

func (s *State) delRes(cat *catalog, scope, key string) {
	old, ok := s.res.get(cat, scope, key)
	if !ok {
		return
	}
	if runs.IsTerminal(old.Status) {
		s.prunable = s.prunable.Delete(aged{old.UpdatedAt, resKey(scope, key)})
	}
	s.res.del(cat, scope, key)
}

func (s *State) setApprovals(id string, q []*runs.Obj) {
	old, _ := s.approvals.Get(id)
	s.nApprovals += len(q) - len(old)
	if len(q) == 0 {
		s.approvals = s.approvals.Delete(id)
		return
	}
	s.approvals = s.approvals.Set(id, q)
}

func (s *State) setSteers(id string, q []string) {
	old, _ := s.steers.Get(id)
	s.nSteers += len(q) - len(old)
	if len(q) == 0 {
		s.steers = s.steers.Delete(id)
		return
	}
	s.steers = s.steers.Set(id, q)
}

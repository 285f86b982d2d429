package state

import (
	"cmp"
	"math"
	"slices"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// Reads of a State's collections, and the walks the gateway's steps need.

// Len is the number of cached runs.
func (s *State) Len() int { return s.nCached }

// Live is the number of unfinished runs with a local owner (IsLive).
func (s *State) Live() int { return s.live }

// EachRun calls f with every cached run.
func (s *State) EachRun(f func(id string, c *Cached)) {
	for it := s.runs.Iterator(); !it.Done(); {
		id, e, _ := it.Next()
		if e.cached != nil {
			f(id, e.cached)
		}
	}
}

// EachReservedRun calls f with the id of every run that has a reservation in
// memory (start-up rows not yet read are not walked).
func (s *State) EachReservedRun(f func(id string)) {
	for it := s.runs.Iterator(); !it.Done(); {
		id, e, _ := it.Next()
		if len(e.res) > 0 {
			f(id)
		}
	}
}

// ReservationsOfRun returns the reservations of run id s sees, in memory and
// (disk.go) the start-up rows, by the run counter, oldest first.
func (s *State) ReservationsOfRun(id string) []*Reservation {
	e, known := s.runs.Get(id)
	out := make([]*Reservation, 0, len(e.res))
	for _, k := range e.res {
		r, _ := s.res.Get(k)
		out = append(out, r)
	}
	if s.disk != nil {
		for _, k := range s.disk.ofRun(id, known) {
			if r := s.startup(s.disk.orig[k]); r != nil && !s.isMasked(k) {
				out = append(out, r)
			}
		}
		slices.SortStableFunc(out, func(a, b *Reservation) int { return cmp.Compare(a.RunN, b.RunN) })
	}
	return out
}

// Sweepable returns the completed, failed and cancelled cached runs whose
// updated_at expired reports true for, oldest first: the walk stops at the
// first that is not expired.
func (s *State) Sweepable(expired func(updatedAt float64) bool) []string {
	return expiredKeys(s.sweepable, expired)
}

// Prunable returns the keys of the terminal reservations in memory whose
// durable updatedAt expired reports true for, oldest first: the walk stops at
// the first that is not expired. The start-up rows not in memory are
// PruneStartup's (disk.go).
func (s *State) Prunable(expired func(updatedAt float64) bool) []storage.ReservationKey {
	return expiredKeys(s.prunable, expired)
}

// Approvals returns a copy of run id's pending approval events, oldest first
// (nil: none); ApprovalCount counts them, ApprovalAt reads one, without a copy.
func (s *State) Approvals(id string) []*runs.Obj { return listSlice(s.approvals, id) }

// ApprovalCount is the number of run id's pending approval events.
func (s *State) ApprovalCount(id string) int { return listLen(s.approvals, id) }

// ApprovalAt is run id's pending approval event i (0 = oldest; i < ApprovalCount).
func (s *State) ApprovalAt(id string, i int) *runs.Obj {
	q, _ := s.approvals.Get(id)
	return q.Get(i)
}

// Steers returns a copy of run id's queued steer texts, oldest first (nil:
// none); SteerCount counts them without a copy.
func (s *State) Steers(id string) []string { return listSlice(s.steers, id) }

// SteerCount is the number of run id's queued steer texts.
func (s *State) SteerCount(id string) int { return listLen(s.steers, id) }

// Cursor returns run id's scenario position (scenarios §5).
func (s *State) Cursor(id string) (scenarios.Cursor, bool) { return s.cursors.Get(id) }

// SetCursor stores (live) or drops run id's scenario position.
func (s *State) SetCursor(id string, c scenarios.Cursor, live bool) {
	if live {
		s.cursors = s.cursors.Set(id, c)
	} else {
		s.cursors = s.cursors.Delete(id)
	}
}

// EachCursor calls f with every scenario position.
func (s *State) EachCursor(f func(id string, c scenarios.Cursor)) {
	for it := s.cursors.Iterator(); !it.Done(); {
		id, c, _ := it.Next()
		f(id, c)
	}
}

// Restarted is the State a logical restart leaves (runs-api §10.3): s's
// reservations, every owner made local:false and alive as given, its scope
// and counters; no cached run, queue or scenario position. The sweep
// schedule is the caller's to set. It costs what s holds in memory: the
// start-up rows s has not read (disk.go) stay unread, seen from now on with
// the new owner flags.
func (s *State) Restarted(alive bool) State {
	out := New()
	out.prunable, out.nRes = s.prunable, s.nRes
	out.disk, out.masked, out.prunedAt, out.diskAlive = s.disk, s.masked, s.prunedAt, alive
	for it := s.runs.Iterator(); !it.Done(); {
		id, e, _ := it.Next()
		if len(e.res) > 0 {
			out.runs = out.runs.Set(id, entry{res: e.res})
		}
	}
	for it := s.res.Iterator(); !it.Done(); {
		k, r, _ := it.Next()
		out.res = out.res.Set(k, r.withOwner(false, alive))
	}
	out.ScopeProfile, out.ScopeIdentity = s.ScopeProfile, s.ScopeIdentity
	out.RunCounter, out.ApprovalCounter = s.RunCounter, s.ApprovalCounter
	return out
}

// Reserved is the number of reservations s sees, in memory and on disk.
func (s *State) Reserved() int { return s.nRes }

// ReadOnDemand makes s read the reservations namespace ns has in store, count
// of them, when first asked for (disk.go): for a start-up with --db. runs is
// the namespace's stored run counter, at least the RunN of every row.
func (s *State) ReadOnDemand(store storage.Store, ns string, count int, runs int64) {
	if count > 0 {
		s.disk, s.nRes, s.prunedAt = newDiskRows(store, ns, runs), count, math.Inf(-1)
	}
}

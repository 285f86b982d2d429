package state

import (
	"fmt"
	"slices"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// Check verifies the invariants of s (see State's comment). It walks
// everything, so only tests call it: the model tests of this package and the
// gateway's, after every step.
func (s *State) Check() error {
	live, sweepable, cached, keys := 0, 0, 0, 0
	for it := s.runs.Iterator(); !it.Done(); {
		id, e, _ := it.Next()
		if e.cached == nil && len(e.res) == 0 {
			return fmt.Errorf("run %s has an empty entry", id)
		}
		keys += len(e.res)
		for i, k := range e.res {
			r, ok := s.res.Get(k)
			if !ok || r.RunID != id {
				return fmt.Errorf("run %s lists %q, not a reservation of it", id, k)
			}
			if prev, _ := s.res.Get(e.res[max(i-1, 0)]); i > 0 && prev.RunN > r.RunN {
				return fmt.Errorf("the reservations of run %s are not ordered by N", id)
			}
		}
		c := e.cached
		if c == nil {
			continue
		}
		if (c.text == nil) == (c.rec == nil) {
			return fmt.Errorf("run %s keeps its record as text (%v) and as a value (%v): one of the two", id, c.text != nil, c.rec != nil)
		}
		if c.rec != nil && len(runs.Rendered(c.rec)) < LargeRecord {
			return fmt.Errorf("run %s keeps a record of under %d bytes as a value", id, LargeRecord)
		}
		cached++
		if IsLive(c) {
			live++
		}
		if isSweepable(c.Status) {
			sweepable++
			if _, ok := s.sweepable.Get(aged[string]{c.UpdatedAt, id}); !ok {
				return fmt.Errorf("run %s (%s) is not in sweepable", id, c.Status)
			}
		}
	}
	if live != s.live || sweepable != s.sweepable.Len() || cached != s.nCached {
		return fmt.Errorf("live %d (counted %d), sweepable %d (counted %d), cached %d (counted %d)",
			s.live, live, s.sweepable.Len(), sweepable, s.nCached, cached)
	}
	if keys != s.res.Len() {
		return fmt.Errorf("the runs list %d reservation keys for %d reservations", keys, s.res.Len())
	}
	prunable := 0
	for it := s.res.Iterator(); !it.Done(); {
		k, r, _ := it.Next()
		if k != resKey(r.Scope, r.Key) {
			return fmt.Errorf("reservation under %q is (%q, %q)", k, r.Scope, r.Key)
		}
		if s.disk != nil && s.disk.orig[k] != nil && !s.isMasked(k) {
			return fmt.Errorf("reservation %q is in memory but its start-up row is not masked", k)
		}
		if r.Terminal != runs.IsTerminal(r.Status) {
			return fmt.Errorf("reservation %q (%s) says Terminal %v", k, r.Status, r.Terminal)
		}
		if runs.IsTerminal(r.Status) {
			prunable++
			if _, ok := s.prunable.Get(aged[storage.ReservationKey]{r.UpdatedAt, k}); !ok {
				return fmt.Errorf("reservation %q (%s) is not in prunable", k, r.Status)
			}
		}
		if e, _ := s.runs.Get(r.RunID); !slices.Contains(e.res, k) {
			return fmt.Errorf("reservation %q is not listed under its run %s", k, r.RunID)
		}
	}
	if s.disk == nil && s.nRes != s.res.Len() {
		return fmt.Errorf("nRes %d, %d reservations", s.nRes, s.res.Len())
	}
	if prunable != s.prunable.Len() {
		return fmt.Errorf("prunable %d, counted %d", s.prunable.Len(), prunable)
	}
	if d := s.disk; d != nil {
		if s.masked != nil {
			for it := s.masked.Iterator(); !it.Done(); {
				if k, _, _ := it.Next(); d.orig[k] == nil {
					return fmt.Errorf("%q is masked but has no start-up row", k)
				}
			}
		}
		c := agedComparer[storage.ReservationKey]{compareRes}
		for i, a := range d.expiring {
			if i > 0 && c.Compare(d.expiring[i-1], a) >= 0 || a.at >= d.scanned {
				return fmt.Errorf("expiring row %d (%v) is out of order or not before %v", i, a, d.scanned)
			}
		}
	}
	n := 0
	for it := s.approvals.Iterator(); !it.Done(); {
		id, q, _ := it.Next()
		if q.Len() == 0 {
			return fmt.Errorf("run %s keeps an empty approval queue", id)
		}
		n += q.Len()
	}
	if n != s.nApprovals {
		return fmt.Errorf("nApprovals %d, counted %d", s.nApprovals, n)
	}
	n = 0
	for it := s.steers.Iterator(); !it.Done(); {
		id, q, _ := it.Next()
		if q.Len() == 0 {
			return fmt.Errorf("run %s keeps an empty steer queue", id)
		}
		n += q.Len()
	}
	if n != s.nSteers {
		return fmt.Errorf("nSteers %d, counted %d", s.nSteers, n)
	}
	return nil
}

package gateway

import (
	"fmt"
	"slices"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

// The invariant checks of the gateway's structures (see the comments of
// State and package timeline). They walk everything, so only the tests call them,
// after every step of the model tests.

// check verifies the invariants of State (see its comment); the model tests
// call it after every step. It walks everything: tests only.
func (s *State) check() error {
	live, sweepable := 0, 0
	for it := s.runs.Iterator(); !it.Done(); {
		id, c, _ := it.Next()
		if isLive(c) {
			live++
		}
		if isSweepable(c.Status) {
			sweepable++
			if _, ok := s.sweepable.Get(aged{c.UpdatedAt, id}); !ok {
				return fmt.Errorf("run %s (%s) is not in sweepable", id, c.Status)
			}
		}
	}
	if live != s.live || sweepable != s.sweepable.Len() {
		return fmt.Errorf("live %d (counted %d), sweepable %d (counted %d)", s.live, live, s.sweepable.Len(), sweepable)
	}
	prunable, keys := 0, 0
	for it := s.res.Iterator(); !it.Done(); {
		k, r, _ := it.Next()
		if k != resKey(r.Scope, r.Key) {
			return fmt.Errorf("reservation under %q is (%q, %q)", k, r.Scope, r.Key)
		}
		if runs.IsTerminal(r.Status) {
			prunable++
			if _, ok := s.prunable.Get(agedRes{r.UpdatedAt, k}); !ok {
				return fmt.Errorf("reservation %q (%s) is not in prunable", k, r.Status)
			}
		}
		if ks, _ := s.byRun.Get(r.RunID); !slices.Contains(ks, k) {
			return fmt.Errorf("reservation %q is not listed under its run %s", k, r.RunID)
		}
	}
	if s.disk == nil && s.nRes != s.res.Len() {
		return fmt.Errorf("nRes %d, %d reservations", s.nRes, s.res.Len())
	}
	if prunable != s.prunable.Len() {
		return fmt.Errorf("prunable %d, counted %d", s.prunable.Len(), prunable)
	}
	for it := s.byRun.Iterator(); !it.Done(); {
		id, ks, _ := it.Next()
		keys += len(ks)
		for i, k := range ks {
			r, ok := s.res.Get(k)
			if !ok || r.RunID != id {
				return fmt.Errorf("byRun[%s] lists %q, not a reservation of it", id, k)
			}
			if prev, _ := s.res.Get(ks[max(i-1, 0)]); i > 0 && prev.N > r.N {
				return fmt.Errorf("byRun[%s] is not ordered by N", id)
			}
		}
	}
	if keys != s.res.Len() {
		return fmt.Errorf("byRun lists %d keys for %d reservations", keys, s.res.Len())
	}
	n := 0
	for it := s.approvals.Iterator(); !it.Done(); {
		_, q, _ := it.Next()
		n += len(q)
	}
	if n != s.nApprovals {
		return fmt.Errorf("nApprovals %d, counted %d", s.nApprovals, n)
	}
	n = 0
	for it := s.steers.Iterator(); !it.Done(); {
		_, q, _ := it.Next()
		n += len(q)
	}
	if n != s.nSteers {
		return fmt.Errorf("nSteers %d, counted %d", s.nSteers, n)
	}
	return nil
}

// checkTimelines verifies every namespace's timeline and the snapshots
// (timeline.Timeline.Check, timeline.Snapshots.Check). Callers hold g.mu.
func (g *Gateway) checkTimelines() error {
	for name, space := range g.spaces {
		if space.tl == nil {
			continue
		}
		if err := space.tl.Check(); err != nil {
			return fmt.Errorf("timeline of %s: %w", name, err)
		}
	}
	return g.snaps.Check()
}

// checkTransports verifies every transport's invariants: its buffered bytes
// are its frames' and stay within the bound; no branch keeps an empty map.
func (g *Gateway) checkTransports() error {
	for bk, m := range g.transports {
		if len(m) == 0 {
			return fmt.Errorf("branch %v keeps an empty transport map", bk)
		}
		for run, sl := range m {
			t := sl.t
			if t == nil {
				continue // never used: nothing buffered
			}
			n := 0
			for _, f := range t.frames {
				n += len(f)
			}
			if n != t.bytes || n > g.opts.SSEBufferBytes || t.subs < 0 {
				return fmt.Errorf("transport %s: %d bytes buffered, counted %d (bound %d), %d subscribers", run, t.bytes, n, g.opts.SSEBufferBytes, t.subs)
			}
		}
	}
	return nil
}

// checkAutopilot verifies that the queue holds exactly one entry per cursor
// that waits for no answer, on every namespace's main branch, equal to the
// cursor's, and that every cursor points into its list. The model test calls
// it after every step. Callers hold g.mu.
func (g *Gateway) checkAutopilot() error {
	want := map[scenarios.Key]scenarios.Entry{}
	for name, space := range g.spaces {
		it := space.branches["main"].st.cursors.Iterator()
		for !it.Done() {
			id, c, _ := it.Next()
			if n := len(c.List()); c.Next > n || (!c.Waiting && c.Next == n) {
				return fmt.Errorf("%s/%s: cursor at %s of %d steps", name, id, c.Path(), n)
			}
			k := scenarios.Key{NS: name, Run: id}
			if e, due := c.Entry(k); due {
				want[k] = e
			}
		}
	}
	got := g.auto.due.Entries()
	if len(got) != len(want) {
		return fmt.Errorf("queue holds %d entries, cursors %d", len(got), len(want))
	}
	for _, e := range got {
		if want[e.Key] != e {
			return fmt.Errorf("queue entry %+v, cursor %+v", e, want[e.Key])
		}
	}
	return nil
}

package gateway

import (
	"cmp"
	"fmt"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

// The invariant checks of the gateway's structures (see the comments of
// package state, package timeline and package transport). They walk
// everything, so only the tests call them: check, after every step of the
// model test (autopilot_test.go).

// check verifies everything the gateway holds: every branch's State
// (state.State.Check), the autopilot queue, the timelines and snapshots, and
// the transports. Callers hold g.mu.
func (g *Gateway) check() error {
	branches := 0
	for _, space := range g.spaces {
		branches += len(space.branches) - 1
	}
	if branches != g.nBranches {
		return fmt.Errorf("nBranches %d, counted %d", g.nBranches, branches)
	}
	for name, space := range g.spaces {
		for b, bs := range space.branches {
			if err := bs.st.Check(); err != nil {
				return fmt.Errorf("state of %s/%s: %w", name, b, err)
			}
		}
	}
	return cmp.Or(g.checkAutopilot(), g.checkTimelines(), g.checkTransports())
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

// checkTransports verifies every transport's invariants (transport.Set.Check):
// its buffered bytes are its frames' and stay within the bound; no branch
// keeps an empty map.
func (g *Gateway) checkTransports() error { return g.transports.Check() }

// checkAutopilot verifies that the queue holds exactly one entry per cursor
// that waits for no answer, on every namespace's main branch, equal to the
// cursor's, and, on every branch, that every cursor points into its list and
// that no cursor waits for the answer of a terminal run (Cursor.Finished).
// The model test calls it after every step. Callers hold g.mu.
func (g *Gateway) checkAutopilot() error {
	want := map[scenarios.Key]scenarios.Entry{}
	var bad error
	for name, space := range g.spaces {
		for b, bs := range space.branches {
			st := bs.st
			st.EachCursor(func(id string, c scenarios.Cursor) {
				if n := len(c.List()); c.Next > n || (!c.Waiting && c.Next == n) {
					bad = cmp.Or(bad, fmt.Errorf("%s/%s/%s: cursor at %s of %d steps", name, b, id, c.Path(), n))
				}
				if r, ok := st.Run(id); ok && c.Waiting && runs.IsTerminal(r.Status) {
					bad = cmp.Or(bad, fmt.Errorf("%s/%s/%s: cursor waits for an answer of a %s run", name, b, id, r.Status))
				}
				k := scenarios.Key{NS: name, Run: id}
				if e, due := c.Entry(k); due && b == "main" {
					want[k] = e
				}
			})
		}
	}
	if bad != nil {
		return bad
	}
	if err := g.auto.due.Check(); err != nil {
		return err
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

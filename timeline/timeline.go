// Package timeline keeps the history of one namespace (controls §8): a DAG of
// checkpoints with named branch heads, retained up to a maximum, and the
// snapshots that pin checkpoints across the process. It decides what each
// timeline route does (commit, branch, checkout, x-mockingbird-at, snapshot
// restore) and owns the checkpoint ids (runs.CheckpointID), parents, heads,
// pins, retention, lookups, listings and the refusals' statuses and messages
// ("no checkpoint …", "no snapshot …").
//
// It is generic over what a checkpoint captures (S) and never looks inside
// it: the owner of the branches, a Host (in the emulator a gateway namespace:
// a branch's state, the clock and the fault RNG), captures a branch's state
// into S and restores it.
//
// Files: timeline.go checkpoints, heads, lookups, listing; retain.go
// retention; routes.go the Host and the routes; snapshot.go Snapshots;
// check.go the invariant checks.
//
// Invariants (Timeline.Check, Snapshots.Check; the tests call them after every
// step):
//   - the retained checkpoints are exactly those listed in creation order that
//     are not evicted; ids are unique and never reused;
//   - every branch head is retained and counts that branch in its heads;
//   - a checkpoint's pins count the live snapshots pinning it, and a pinned
//     checkpoint is retained;
//   - every retained checkpoint that no head or pin protects waits in the
//     free list (in order in its queue), so retention evicts the oldest of
//     them without walking past protected ones: committing is O(1) amortised
//     whatever the number of snapshots and branches (hardening H7) while
//     checkpoints are released in the order they were made, as a branch's
//     commits release them; one released out of order costs O(log k).
package timeline

import (
	"sort"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Info describes one checkpoint (POST /__admin/checkpoints, GET /__admin/timeline).
type Info struct {
	ID, Branch, Parent string // Parent "" = null
	At                 float64
	Records            int
}

// Checkpoint is one captured state of a branch. Its Info and State are set
// at commit and never change.
type Checkpoint[S any] struct {
	Info
	State S

	seq         int64
	heads, pins int  // branches whose head it is; snapshots pinning it
	gone        bool // evicted
}

func (c *Checkpoint[S]) protected() bool { return c.heads > 0 || c.pins > 0 }

// Timeline is one namespace's checkpoints and branch heads. It is not safe
// for concurrent use: its owner serialises the calls (and those to its Host).
type Timeline[S any] struct {
	host  Host[S]
	max   int
	seq   int64
	cps   map[string]*Checkpoint[S]
	order []*Checkpoint[S]  // creation order, evicted ones included until compacted
	heads map[string]string // branch → head checkpoint id
	free  freeList[S]       // unprotected checkpoints, oldest first (stale entries skipped)
	seen  int               // checkpoints retention examined (the work of H7)
}

// New returns an empty timeline of host's branches that retains at most max
// checkpoints besides branch heads and pinned ones (--max-checkpoints,
// controls §8.1).
func New[S any](max int, host Host[S]) *Timeline[S] {
	return &Timeline[S]{host: host, max: max, cps: map[string]*Checkpoint[S]{}, heads: map[string]string{}}
}

// Commit captures branch (which exists) as a new checkpoint whose parent is
// the branch's head, makes it the head, evicts what retention no longer keeps
// and tells the host (Committed).
func (t *Timeline[S]) Commit(branch string) *Checkpoint[S] {
	s, at, records := t.host.Capture(branch)
	t.seq++
	c := &Checkpoint[S]{Info: Info{ID: runs.CheckpointID(t.seq), Branch: branch, Parent: t.heads[branch],
		At: at, Records: records}, State: s, seq: t.seq}
	t.cps[c.ID] = c
	t.order = append(t.order, c)
	t.setHead(branch, c)
	t.retain()
	t.host.Committed(branch, c.ID)
	return c
}

// get returns the retained checkpoint id: 409 "no checkpoint <id>" (the id
// quoted cut, hardening H9) when there is none.
func (t *Timeline[S]) get(id string) (*Checkpoint[S], *runs.Error) {
	if c := t.cps[id]; c != nil {
		return c, nil
	}
	return nil, runs.Admin(409, "no checkpoint "+runs.Echo(id))
}

// lookup is get for an optional id (x-mockingbird-at, a branch's "at"): ""
// names no checkpoint and answers nil.
func (t *Timeline[S]) lookup(id string) (*Checkpoint[S], *runs.Error) {
	if id == "" {
		return nil, nil
	}
	return t.get(id)
}

// Head returns branch's head checkpoint, nil when the branch has none.
func (t *Timeline[S]) Head(branch string) *Checkpoint[S] { return t.cps[t.heads[branch]] }

// setHead points branch at c, a retained checkpoint; the previous head, no
// longer protected by the branch, is evicted at once when retention no longer
// keeps it. c is protected first, so that this eviction never takes it.
func (t *Timeline[S]) setHead(branch string, c *Checkpoint[S]) {
	c.heads++
	old := t.cps[t.heads[branch]]
	t.heads[branch] = c.ID
	if old != nil {
		old.heads--
		t.release(old)
	}
}

// Listing is the timeline as GET /__admin/timeline shows it (controls §8.5).
type Listing struct {
	Branches    []BranchHead // sorted by name
	Checkpoints []Info       // retained, oldest first
}

// BranchHead names a branch and its head checkpoint.
type BranchHead struct{ Name, Head string }

// List returns the branch heads and the retained checkpoints.
func (t *Timeline[S]) List() Listing {
	var out Listing
	for name, head := range t.heads {
		out.Branches = append(out.Branches, BranchHead{name, head})
	}
	sort.Slice(out.Branches, func(i, j int) bool { return out.Branches[i].Name < out.Branches[j].Name })
	for _, c := range t.order {
		if !c.gone {
			out.Checkpoints = append(out.Checkpoints, c.Info)
		}
	}
	return out
}

// Examined is how many checkpoints retention has examined so far: the work
// hardening H7 bounds (benchmarks and tests read it).
func (t *Timeline[S]) Examined() int { return t.seen }

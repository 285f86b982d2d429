package gateway

import (
	"container/heap"
	"sort"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/state"
)

// The timeline (controls.md §8): one per namespace, a DAG of checkpoints with
// named branch heads. A checkpoint holds a State value (an O(1) snapshot), the
// global clock and the fault RNG.
//
// Committing a checkpoint is O(log n) whatever the number of snapshots and
// branches (hardening H7): a checkpoint counts the branches whose head it is
// and the snapshots pinning it, and the unprotected ones wait in a min-heap by
// age, so retention evicts the oldest without scanning past protected ones.

type checkpoint struct {
	id, branch, parent string
	seq                int64
	at                 float64 // clock ms at commit
	st                 state.State
	clock              runs.Clock
	rng                runs.RNG
	records            int
	heads, pins        int  // branches whose head it is; snapshots pinning it
	gone               bool // evicted
}

func (c *checkpoint) protected() bool { return c.heads > 0 || c.pins > 0 }

// timeline invariants (check): cps holds exactly the retained checkpoints;
// order lists them in creation order among evicted ones (gone) that a
// compaction removes; every retained unprotected checkpoint is in free;
// heads[b] is retained and counted in its heads.
type timeline struct {
	seq   int64
	cps   map[string]*checkpoint
	order []*checkpoint     // creation order, evicted ones included until compacted
	heads map[string]string // branch → head checkpoint id
	free  ageHeap           // unprotected checkpoints, oldest first (stale entries skipped)
	seen  int               // checkpoints retention examined (the work of H7, for tests)
}

// ageHeap is a min-heap of checkpoints by seq.
type ageHeap []*checkpoint

func (h ageHeap) Len() int           { return len(h) }
func (h ageHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h ageHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *ageHeap) Push(x any)        { *h = append(*h, x.(*checkpoint)) }
func (h *ageHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return c
}

// Checkpoint describes one checkpoint (POST /__admin/checkpoints, GET /__admin/timeline).
type Checkpoint struct {
	ID, Branch, Parent string // Parent "" = null
	At                 float64
	Records            int
}

func (c *checkpoint) info() Checkpoint {
	return Checkpoint{ID: c.id, Branch: c.branch, Parent: c.parent, At: c.at, Records: c.records}
}

// tl returns ns's timeline, creating it with an initial checkpoint of the main
// state on first use. Callers hold g.mu.
func (g *Gateway) tl(ns *namespace) *timeline {
	if ns.tl == nil {
		ns.tl = &timeline{cps: map[string]*checkpoint{}, heads: map[string]string{}}
		g.commitCheckpoint(ns, "main")
	}
	return ns.tl
}

// setHead points branch at c.
func (t *timeline) setHead(branch string, c *checkpoint) {
	if old := t.cps[t.heads[branch]]; old != nil {
		old.heads--
		t.release(old)
	}
	c.heads++
	t.heads[branch] = c.id
}

// release queues c for eviction once nothing protects it.
func (t *timeline) release(c *checkpoint) {
	if !c.protected() && !c.gone {
		heap.Push(&t.free, c)
	}
}

// commitCheckpoint captures branch's current state. Callers hold g.mu.
func (g *Gateway) commitCheckpoint(ns *namespace, branch string) string {
	t := g.tl(ns)
	bs := ns.branches[branch]
	t.seq++
	c := &checkpoint{id: runs.CheckpointID(t.seq), seq: t.seq, branch: branch, parent: t.heads[branch],
		at: g.nowMs(), st: bs.st, clock: g.clock, rng: g.rng, records: bs.st.Records()}
	t.cps[c.id] = c
	t.order = append(t.order, c)
	t.setHead(branch, c)
	bs.cpAt, bs.cpID = bs.version, c.id
	g.retain(t)
	if g.spaces[ns.name] == ns {
		g.changed(Change{Kind: "checkpoint", Namespace: ns.name, Branch: branch, Checkpoint: c.id})
	}
	return c.id
}

// retain discards the oldest checkpoints that are neither a branch head nor
// pinned by a snapshot, down to --max-checkpoints (controls §8.1).
func (g *Gateway) retain(t *timeline) {
	for len(t.cps) > g.opts.MaxCheckpoints && len(t.free) > 0 {
		c := heap.Pop(&t.free).(*checkpoint)
		t.seen++
		if c.gone || c.protected() {
			continue // stale: evicted already, or protected since (released again later)
		}
		c.gone = true
		delete(t.cps, c.id)
	}
	if n := len(t.order); n > 64 && n > 2*len(t.cps) {
		live := make([]*checkpoint, 0, len(t.cps))
		for _, c := range t.order {
			if !c.gone {
				live = append(live, c)
			}
		}
		t.order = live
	}
	if n := len(t.free); n > 64 && n > 2*len(t.cps) {
		t.free = t.free[:0]
		for _, c := range t.order {
			if !c.gone && !c.protected() {
				t.free = append(t.free, c)
			}
		}
		heap.Init(&t.free)
	}
}

// Finish is the finishing step of a vendor mutation answered 200–399 (runs-api
// §3 step 12): it commits a checkpoint, or reuses accepted when nothing changed
// since that accepted-mutation checkpoint. It answers "" when the namespace
// cannot be created (hardening H3).
func (g *Gateway) Finish(t Target, accepted string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	ns, err := g.create(t.NS)
	if err != nil {
		return ""
	}
	bs := ns.branches[t.Branch]
	if bs == nil {
		bs = g.createBranch(ns, t.Branch, "")
	}
	if accepted != "" && bs.cpID == accepted && bs.cpAt == bs.version {
		return accepted
	}
	return g.commitCheckpoint(ns, t.Branch)
}

// CommitCheckpoint is POST /__admin/checkpoints (controls §8.3).
func (g *Gateway) CommitCheckpoint(ns, branch string) (Checkpoint, *runs.Error) {
	if !runs.ValidName(branch) {
		return Checkpoint{}, runs.BadName("branch", 409)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	space, err := g.create(ns)
	if err != nil {
		return Checkpoint{}, err
	}
	g.tl(space)
	if space.branches[branch] == nil {
		g.createBranch(space, branch, "")
	}
	id := g.commitCheckpoint(space, branch)
	return space.tl.cps[id].info(), nil
}

// createBranch makes a new branch. With at == "" it starts at the current main
// state, first committed as a new main checkpoint; else at checkpoint at (which
// must exist). Callers hold g.mu.
func (g *Gateway) createBranch(ns *namespace, branch, at string) *branchState {
	t := g.tl(ns)
	if at == "" {
		at = g.commitCheckpoint(ns, "main")
	}
	c := t.cps[at]
	bs := &branchState{st: c.st}
	ns.branches[branch] = bs
	t.setHead(branch, c)
	bs.cpID = c.id
	return bs
}

// Branch is POST /__admin/branches/:name (controls §8.4).
func (g *Gateway) Branch(ns, branch, at string) (Checkpoint, *runs.Error) {
	if !runs.ValidName(branch) {
		return Checkpoint{}, runs.BadName("branch", 409)
	}
	defer g.unlockDurable(g.lock())
	space := g.space(ns)
	t := g.tl(space)
	if at != "" && t.cps[at] == nil {
		return Checkpoint{}, runs.Admin(409, "no checkpoint "+runs.Echo(at))
	}
	if err := g.register(space); err != nil {
		return Checkpoint{}, err
	}
	if space.branches[branch] == nil {
		g.createBranch(space, branch, at)
	} else if at != "" && t.heads[branch] != at {
		g.moveBranch(space, branch, t.cps[at], false)
	}
	info := t.cps[t.heads[branch]].info()
	info.Branch = branch
	return info, nil
}

// moveBranch points branch at c and restores its state; withClock also restores
// the global clock and fault RNG (checkout). Callers hold g.mu.
func (g *Gateway) moveBranch(ns *namespace, branch string, c *checkpoint, withClock bool) {
	bs := ns.branches[branch]
	if bs == nil {
		bs = &branchState{}
		ns.branches[branch] = bs
	}
	if branch == "main" {
		g.rewriteDurable(ns.name, c.st)
	}
	g.destroyTransports(ns.name, branch, true)
	bs.st = c.st
	bs.version++
	if branch == "main" {
		g.resyncCursors(ns.name, c.st) // scenario positions come back with the state
	}
	bs.cpAt, bs.cpID = bs.version, c.id
	ns.tl.setHead(branch, c)
	if withClock {
		g.clock, g.rng = c.clock, c.rng
		g.saveClock()
		g.auto.runner.Kick()
	}
}

// Checkout is POST /__admin/branches/:name/checkout (controls §8.5).
func (g *Gateway) Checkout(ns, branch, cp string) *runs.Error {
	if !runs.ValidName(branch) {
		return runs.BadName("branch", 409)
	}
	defer g.unlockDurable(g.lock())
	space := g.space(ns)
	c := g.tl(space).cps[cp]
	if c == nil {
		return runs.Admin(409, "no checkpoint "+runs.Echo(cp))
	}
	if err := g.register(space); err != nil {
		return err
	}
	g.moveBranch(space, branch, c, true)
	return nil
}

// Timeline is GET /__admin/timeline (controls §8.5).
type Timeline struct {
	Branches    []BranchHead
	Checkpoints []Checkpoint
}

// BranchHead names a branch and its head checkpoint.
type BranchHead struct{ Name, Head string }

// Timeline returns ns's timeline (that of an empty namespace when ns was not
// created; reading creates nothing).
func (g *Gateway) Timeline(ns string) Timeline {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.tl(g.space(ns))
	var out Timeline
	for name, head := range t.heads {
		out.Branches = append(out.Branches, BranchHead{name, head})
	}
	sort.Slice(out.Branches, func(i, j int) bool { return out.Branches[i].Name < out.Branches[j].Name })
	for _, c := range t.order {
		if !c.gone {
			out.Checkpoints = append(out.Checkpoints, c.info())
		}
	}
	return out
}

// Head returns the head checkpoint of ns's branch ("" when none).
func (g *Gateway) Head(ns, branch string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tl(g.space(ns)).heads[branch]
}

// Select resolves a vendor request's branch and x-mockingbird-at (controls §8.6)
// into the Target it runs on. mutating is true for POST/PUT/PATCH/DELETE.
// Errors are 409 admin envelopes, and 429 when the request would create a
// namespace past --max-namespaces.
//
// A mutating request on a namespace not yet created, when --max-namespaces
// exist, is refused here with that 429 (hardening H3), before the operation:
// it would create the namespace.
func (g *Gateway) Select(ns, branch, at string, mutating bool) (Target, *runs.Error) {
	defer g.unlockDurable(g.lock())
	space := g.space(ns)
	if mutating {
		if err := g.roomFor(space); err != nil {
			return Target{}, err
		}
	}
	t := g.tl(space)
	var c *checkpoint
	if at != "" {
		if c = t.cps[at]; c == nil {
			return Target{}, runs.Admin(409, "no checkpoint "+runs.Echo(at))
		}
	}
	target := Target{NS: ns, Branch: branch}
	if branch != "main" {
		switch {
		case space.branches[branch] == nil:
			if err := g.register(space); err != nil {
				return Target{}, err
			}
			g.createBranch(space, branch, at)
		case c != nil && t.heads[branch] != at:
			g.moveBranch(space, branch, c, false)
		}
		return target, nil
	}
	if c == nil {
		return target, nil
	}
	if mutating {
		if err := g.register(space); err != nil {
			return Target{}, err
		}
		g.moveBranch(space, "main", c, true)
		return target, nil
	}
	view := c.st
	target.view = &view
	return target, nil
}

package gateway

import (
	"sort"
	"strconv"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The timeline (controls.md §8): one per namespace, a DAG of checkpoints with
// named branch heads. A checkpoint holds a State value (an O(1) snapshot), the
// global clock and the fault RNG.

type checkpoint struct {
	id, branch, parent string
	at                 float64 // clock ms at commit
	st                 State
	clock              runs.Clock
	rng                runs.RNG
	records            int
}

type timeline struct {
	seq   int64
	cps   map[string]*checkpoint
	order []string          // retained checkpoints in creation order
	heads map[string]string // branch → head checkpoint id
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

// commitCheckpoint captures branch's current state. Callers hold g.mu.
func (g *Gateway) commitCheckpoint(ns *namespace, branch string) string {
	t := g.tl(ns)
	bs := ns.branches[branch]
	t.seq++
	c := &checkpoint{id: runs.CheckpointID(t.seq), branch: branch, parent: t.heads[branch],
		at: g.nowMs(), st: bs.st, clock: g.clock, rng: g.rng, records: bs.st.Records()}
	t.cps[c.id] = c
	t.order = append(t.order, c.id)
	t.heads[branch] = c.id
	bs.cpAt, bs.cpID = bs.version, c.id
	g.changed(Change{Kind: "checkpoint", Namespace: ns.name, Branch: branch, Checkpoint: c.id})
	g.retain(ns)
	return c.id
}

// retain discards the oldest checkpoints that are neither a branch head nor
// pinned by a snapshot, down to --max-checkpoints (controls §8.1).
func (g *Gateway) retain(ns *namespace) {
	t := ns.tl
	for i := 0; len(t.order) > g.opts.MaxCheckpoints && i < len(t.order); {
		id := t.order[i]
		if g.isHead(t, id) || g.pinned(ns.name, id) {
			i++
			continue
		}
		delete(t.cps, id)
		if i == 0 {
			// The usual case: the oldest goes. Reslicing keeps it O(1); the
			// backing array is compacted by append when it grows.
			t.order = t.order[1:]
			continue
		}
		t.order = append(t.order[:i], t.order[i+1:]...)
	}
}

func (g *Gateway) isHead(t *timeline, id string) bool {
	for _, h := range t.heads {
		if h == id {
			return true
		}
	}
	return false
}

// Finish is the finishing step of a vendor mutation answered 200–399 (runs-api
// §3 step 12): it commits a checkpoint, or reuses accepted when nothing changed
// since that accepted-mutation checkpoint.
func (g *Gateway) Finish(t Target, accepted string) string {
	defer g.fire()
	g.mu.Lock()
	defer g.mu.Unlock()
	ns := g.space(t.NS)
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
	if !NamePattern.MatchString(branch) {
		return Checkpoint{}, runs.Admin(409, "branch must match /^[A-Za-z0-9_.-]{1,64}$/")
	}
	defer g.fire()
	g.mu.Lock()
	defer g.mu.Unlock()
	space := g.space(ns)
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
	t.heads[branch] = c.id
	bs.cpID = c.id
	return bs
}

// Branch is POST /__admin/branches/:name (controls §8.4).
func (g *Gateway) Branch(ns, branch, at string) (Checkpoint, *runs.Error) {
	if !NamePattern.MatchString(branch) {
		return Checkpoint{}, runs.Admin(409, "branch must match /^[A-Za-z0-9_.-]{1,64}$/")
	}
	defer g.unlockDurable(g.lock())
	space := g.space(ns)
	t := g.tl(space)
	if at != "" && t.cps[at] == nil {
		return Checkpoint{}, runs.Admin(409, "no checkpoint "+at)
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
func (g *Gateway) moveBranch(ns *namespace, branch string, c *checkpoint, withClock bool) *runs.Error {
	bs := ns.branches[branch]
	if bs == nil {
		bs = &branchState{}
		ns.branches[branch] = bs
	}
	if branch == "main" {
		if err := g.rewriteDurable(ns.name, c.st); err != nil {
			return err
		}
	}
	g.destroyTransports(ns.name, branch, true)
	bs.st = c.st
	bs.version++
	bs.cpAt, bs.cpID = bs.version, c.id
	ns.tl.heads[branch] = c.id
	if withClock {
		g.clock, g.rng = c.clock, c.rng
		g.saveClock()
		g.changed(Change{Kind: "clock"})
	}
	return nil
}

// Checkout is POST /__admin/branches/:name/checkout (controls §8.5).
func (g *Gateway) Checkout(ns, branch, cp string) *runs.Error {
	if !NamePattern.MatchString(branch) {
		return runs.Admin(409, "branch must match /^[A-Za-z0-9_.-]{1,64}$/")
	}
	defer g.unlockDurable(g.lock())
	space := g.space(ns)
	c := g.tl(space).cps[cp]
	if c == nil {
		return runs.Admin(409, "no checkpoint "+cp)
	}
	return g.moveBranch(space, branch, c, true)
}

// Timeline is GET /__admin/timeline (controls §8.5).
type Timeline struct {
	Branches    []BranchHead
	Checkpoints []Checkpoint
}

// BranchHead names a branch and its head checkpoint.
type BranchHead struct{ Name, Head string }

// Timeline returns ns's timeline.
func (g *Gateway) Timeline(ns string) Timeline {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.tl(g.space(ns))
	var out Timeline
	for name, head := range t.heads {
		out.Branches = append(out.Branches, BranchHead{name, head})
	}
	sort.Slice(out.Branches, func(i, j int) bool { return out.Branches[i].Name < out.Branches[j].Name })
	for _, id := range t.order {
		out.Checkpoints = append(out.Checkpoints, t.cps[id].info())
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
// Errors are 409 admin envelopes.
func (g *Gateway) Select(ns, branch, at string, mutating bool) (Target, *runs.Error) {
	defer g.unlockDurable(g.lock())
	space := g.space(ns)
	t := g.tl(space)
	var c *checkpoint
	if at != "" {
		if c = t.cps[at]; c == nil {
			return Target{}, runs.Admin(409, "no checkpoint "+at)
		}
	}
	target := Target{NS: ns, Branch: branch}
	if branch != "main" {
		switch {
		case space.branches[branch] == nil:
			g.createBranch(space, branch, at)
		case c != nil && t.heads[branch] != at:
			if err := g.moveBranch(space, branch, c, false); err != nil {
				return Target{}, err
			}
		}
		return target, nil
	}
	if c == nil {
		return target, nil
	}
	if mutating {
		if err := g.moveBranch(space, "main", c, true); err != nil {
			return Target{}, err
		}
		return target, nil
	}
	view := c.st
	target.view = &view
	return target, nil
}

// Snapshots (controls §8.7): process-wide aliases pinning main checkpoints.

type snapshot struct{ ns, cp string }

// Snapshot pins a new main checkpoint of ns and returns its id and records.
func (g *Gateway) Snapshot(ns string) (string, int) {
	defer g.fire()
	g.mu.Lock()
	defer g.mu.Unlock()
	space := g.space(ns)
	g.tl(space)
	cp := g.commitCheckpoint(space, "main")
	g.snapSeq++
	id := "snap_" + strconv.Itoa(g.snapSeq)
	if g.snaps == nil {
		g.snaps = map[string]snapshot{}
	}
	g.snaps[id] = snapshot{ns, cp}
	return id, space.tl.cps[cp].records
}

// RestoreSnapshot checks out main of ns to the snapshot's checkpoint.
func (g *Gateway) RestoreSnapshot(ns, id string) *runs.Error {
	defer g.unlockDurable(g.lock())
	s, ok := g.snaps[id]
	if !ok {
		return runs.Admin(404, "no snapshot "+id)
	}
	if s.ns != ns {
		return runs.Admin(409, "snapshot "+id+" belongs to namespace "+s.ns)
	}
	space := g.space(ns)
	c := g.tl(space).cps[s.cp]
	if c == nil {
		return runs.Admin(409, "no checkpoint "+s.cp)
	}
	return g.moveBranch(space, "main", c, true)
}

// DeleteSnapshot unpins a snapshot.
func (g *Gateway) DeleteSnapshot(id string) *runs.Error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.snaps[id]; !ok {
		return runs.Admin(404, "no snapshot "+id)
	}
	delete(g.snaps, id)
	return nil
}

func (g *Gateway) pinned(ns, cp string) bool {
	for _, s := range g.snaps {
		if s.ns == ns && s.cp == cp {
			return true
		}
	}
	return false
}

package gateway

import (
	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/timeline"
)

// The timeline routes (controls §8) on package timeline, which keeps each
// namespace's checkpoints, heads and retention and the snapshots. This file
// captures a branch's state into a checkpoint and restores it, serves
// x-mockingbird-at views and tells Options.OnChange of every checkpoint.

// Checkpoint describes one checkpoint (POST /__admin/checkpoints, GET /__admin/timeline).
type Checkpoint = timeline.Info

// Timeline is GET /__admin/timeline (controls §8.5).
type Timeline = timeline.Listing

// BranchHead names a branch and its head checkpoint.
type BranchHead = timeline.BranchHead

// captured is what a checkpoint holds: a branch's State (an O(1) copy), the
// global clock and the fault RNG.
type captured struct {
	st    State
	clock runs.Clock
	rng   runs.RNG
}

type checkpoint = timeline.Checkpoint[captured]

// tl returns ns's timeline, creating it with an initial checkpoint of the main
// state on first use. Callers hold g.mu.
func (g *Gateway) tl(ns *namespace) *timeline.Timeline[captured] {
	if ns.tl == nil {
		ns.tl = timeline.New[captured](g.opts.MaxCheckpoints)
		g.commitCheckpoint(ns, "main")
	}
	return ns.tl
}

// commitCheckpoint captures branch's current state. Callers hold g.mu.
func (g *Gateway) commitCheckpoint(ns *namespace, branch string) *checkpoint {
	t, bs := g.tl(ns), ns.branches[branch]
	c := t.Commit(branch, g.nowMs(), captured{bs.st, g.clock, g.rng}, bs.st.Records())
	bs.cpAt = bs.version
	if g.spaces[ns.name] == ns {
		g.changed(Change{Kind: "checkpoint", Namespace: ns.name, Branch: branch, Checkpoint: c.ID})
	}
	return c
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
		bs = g.createBranch(ns, t.Branch, nil)
	}
	if accepted != "" && g.tl(ns).Head(t.Branch).ID == accepted && bs.cpAt == bs.version {
		return accepted
	}
	return g.commitCheckpoint(ns, t.Branch).ID
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
	if space.branches[branch] == nil {
		g.createBranch(space, branch, nil)
	}
	return g.commitCheckpoint(space, branch).Info, nil
}

// createBranch makes a new branch at checkpoint c or, when c is nil, at the
// current main state, first committed as a new main checkpoint. Callers hold g.mu.
func (g *Gateway) createBranch(ns *namespace, branch string, c *checkpoint) *branchState {
	if c == nil {
		c = g.commitCheckpoint(ns, "main")
	}
	bs := &branchState{st: c.State.st}
	ns.branches[branch] = bs
	ns.tl.SetHead(branch, c)
	return bs
}

// place puts branch at c (controls §8.4, §8.6): a new branch is created there
// (c nil: at the current main state); an existing one moves there unless c is
// nil or its head already. Callers hold g.mu.
func (g *Gateway) place(ns *namespace, branch string, c *checkpoint) {
	switch {
	case ns.branches[branch] == nil:
		g.createBranch(ns, branch, c)
	case c != nil && ns.tl.Head(branch) != c:
		g.moveBranch(ns, branch, c, false)
	}
}

// Branch is POST /__admin/branches/:name (controls §8.4).
func (g *Gateway) Branch(ns, branch, at string) (Checkpoint, *runs.Error) {
	if !runs.ValidName(branch) {
		return Checkpoint{}, runs.BadName("branch", 409)
	}
	defer g.unlockDurable(g.lock())
	space := g.space(ns)
	c, err := g.tl(space).At(at)
	if err == nil {
		err = g.register(space)
	}
	if err != nil {
		return Checkpoint{}, err
	}
	g.place(space, branch, c)
	info := space.tl.Head(branch).Info
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
		g.rewriteDurable(ns.name, c.State.st)
	}
	g.destroyTransports(ns.name, branch, true)
	bs.st = c.State.st
	bs.version++
	if branch == "main" {
		g.resyncCursors(ns.name, c.State.st) // scenario positions come back with the state
	}
	bs.cpAt = bs.version
	ns.tl.SetHead(branch, c)
	if withClock {
		g.clock, g.rng = c.State.clock, c.State.rng
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
	c, err := g.tl(space).Get(cp)
	if err == nil {
		err = g.register(space)
	}
	if err == nil {
		g.moveBranch(space, branch, c, true)
	}
	return err
}

// Timeline returns ns's timeline (that of an empty namespace when ns was not
// created; reading creates nothing).
func (g *Gateway) Timeline(ns string) Timeline {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tl(g.space(ns)).List()
}

// Head returns the head checkpoint of ns's branch ("" when none).
func (g *Gateway) Head(ns, branch string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c := g.tl(g.space(ns)).Head(branch); c != nil {
		return c.ID
	}
	return ""
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
	c, err := g.tl(space).At(at)
	if err != nil {
		return Target{}, err
	}
	target := Target{NS: ns, Branch: branch}
	if branch == "main" && c != nil && !mutating {
		view := c.State.st // a read-only view of the checkpoint
		target.view = &view
		return target, nil
	}
	if branch == "main" && c == nil {
		return target, nil
	}
	if err := g.register(space); err != nil {
		return Target{}, err
	}
	if branch == "main" {
		g.moveBranch(space, "main", c, true)
	} else {
		g.place(space, branch, c)
	}
	return target, nil
}

// Snapshot pins a new main checkpoint of ns (controls §8.7) and returns the
// snapshot's id and the checkpoint's records.
func (g *Gateway) Snapshot(ns string) (string, int, *runs.Error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	space, err := g.create(ns)
	if err != nil {
		return "", 0, err
	}
	c := g.commitCheckpoint(space, "main")
	return g.snaps.Pin(ns, space.tl, c), c.Records, nil
}

// RestoreSnapshot checks out main of ns to the snapshot's checkpoint.
func (g *Gateway) RestoreSnapshot(ns, id string) *runs.Error {
	defer g.unlockDurable(g.lock())
	space := g.spaces[ns]
	var t *timeline.Timeline[captured]
	if space != nil {
		t = space.tl
	}
	c, err := g.snaps.Find(ns, id, t)
	if err == nil {
		g.moveBranch(space, "main", c, true)
	}
	return err
}

// DeleteSnapshot unpins a snapshot.
func (g *Gateway) DeleteSnapshot(id string) *runs.Error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.snaps.Delete(id)
}

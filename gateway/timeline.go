package gateway

import (
	"strconv"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/state"
	"github.com/hermes-emulator/hermes-emulator/timeline"
)

// The timeline routes (controls §8) on package timeline, which keeps each
// namespace's checkpoints, heads, retention and snapshots and decides what
// each route does. The gateway is its Host: it captures a branch's state into
// a checkpoint and restores it, serves x-mockingbird-at views and tells
// Options.OnChange of every checkpoint.

// Checkpoint describes one checkpoint (POST /__admin/checkpoints, GET /__admin/timeline).
type Checkpoint = timeline.Info

// Timeline is GET /__admin/timeline (controls §8.5).
type Timeline = timeline.Listing

// captured is what a checkpoint holds: a branch's State (an O(1) copy), the
// global clock and the fault RNG.
type captured struct {
	st    state.State
	clock runs.Clock
	rng   runs.RNG
}

// tl returns ns's timeline, creating it with an initial checkpoint of the main
// state on first use. Callers hold g.mu.
func (g *Gateway) tl(ns *namespace) *timeline.Timeline[captured] {
	if ns.tl == nil {
		ns.tl = timeline.New[captured](g.opts.MaxCheckpoints, host{g, ns})
		ns.tl.Commit("main")
	}
	return ns.tl
}

// host is a namespace as its timeline sees it (timeline.Host).
type host struct {
	g  *Gateway
	ns *namespace
}

func (h host) Exists(branch string) bool { return h.ns.branches[branch] != nil }

func (h host) Create() *runs.Error { return h.g.register(h.ns) }

// MaxBranches is the most branches other than main the process holds, in all
// namespaces: a branch's head is never evicted, so each pins a checkpoint and
// its state (like a snapshot, timeline.MaxSnapshots). Reset releases a
// namespace's branches.
const MaxBranches = 10000

// Room answers 409 `too many branches (max 10000)` when the process holds
// MaxBranches branches besides the mains: a new one may not be created.
func (h host) Room() *runs.Error {
	if h.g.nBranches >= MaxBranches {
		return runs.Admin(409, "too many branches (max "+strconv.Itoa(MaxBranches)+")")
	}
	return nil
}

func (h host) Capture(branch string) (captured, float64, int) {
	st := h.ns.branches[branch].st
	clock := h.g.clock
	if h.g.auto.stepClock != nil { // a step fired by an advance of a live clock
		clock = *h.g.auto.stepClock
	}
	return captured{st, clock, h.g.rng}, h.g.nowMs(), st.Records()
}

// Committed notes that branch is at its head and tells Options.OnChange.
func (h host) Committed(branch, id string) {
	bs := h.ns.branches[branch]
	bs.cpAt = bs.version
	h.tell(Change{Kind: "checkpoint", Namespace: h.ns.name, Branch: branch, Checkpoint: id})
}

// tell hears c (Gateway.changed) once the namespace is created: what happens
// to one not yet created is thrown away unless the change creates it.
func (h host) tell(c Change) {
	if h.g.spaces[h.ns.name] == h.ns {
		h.g.changed(c)
	}
}

// Restore replaces branch's state by checkpoint id's, c: main's durable copy
// and scenario cursors follow, the branch's transports are destroyed and
// Options.OnChange hears it; a checkout also restores the global clock and
// fault RNG (a clock change follows).
func (h host) Restore(branch, id string, c captured, checkout bool) {
	g, ns := h.g, h.ns
	bs := ns.branches[branch]
	if bs == nil {
		bs = &branchState{}
		ns.branches[branch] = bs
		if g.spaces[ns.name] == ns { // never main: a namespace is made with it
			g.nBranches++
		}
	}
	if checkout && c.clock.Now(g.opts.Wall()) > g.nowMs() { // steps the clock passes fire, as at a set, but ns's (its timeline is busy)
		g.auto.due.RemoveNS(ns.name)
		g.advanceScenarios(true, c.clock)
		g.resyncCursors(ns.name, ns.branches["main"].st)
	}
	if branch == "main" {
		g.rewriteDurable(ns.name, c.st)
		g.resyncCursors(ns.name, c.st) // scenario positions come back with the state
	}
	g.transports.Destroy(ns.name, branch)
	bs.st = c.st
	bs.version++
	bs.cpAt = bs.version
	h.tell(Change{Kind: "branch.restored", Namespace: ns.name, Branch: branch, Checkpoint: id})
	if checkout {
		g.clock, g.rng = c.clock, c.rng
		g.saveClock()
		g.auto.runner.Kick()
	}
}

// branch returns ns's branch, created at a fresh checkpoint of main when it
// does not exist: 409 when MaxBranches exist. Callers hold g.mu.
func (g *Gateway) branch(ns *namespace, name string) (*branchState, *runs.Error) {
	if err := g.tl(ns).Place(name, nil); err != nil {
		return nil, err
	}
	return ns.branches[name], nil
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
	bs, err := g.branch(ns, t.Branch) // made by Select, unless a reset dropped it since
	if err != nil {
		return ""
	}
	if accepted != "" && ns.tl.Head(t.Branch).ID == accepted && bs.cpAt == bs.version {
		return accepted
	}
	return ns.tl.Commit(t.Branch).ID
}

// CommitCheckpoint is POST /__admin/checkpoints (controls §8.3).
func (g *Gateway) CommitCheckpoint(ns, branch string) (Checkpoint, *runs.Error) {
	if !runs.ValidName(branch) {
		return Checkpoint{}, runs.BadName("branch", 409)
	}
	var info Checkpoint
	err := g.locked(func() *runs.Error { // a namespace it creates is durable before the answer
		space, err := g.create(ns)
		if err != nil {
			return err
		}
		if _, err := g.branch(space, branch); err != nil {
			return err
		}
		info = space.tl.Commit(branch).Info
		return nil
	})
	return info, err
}

// Branch is POST /__admin/branches/:name (controls §8.4).
func (g *Gateway) Branch(ns, branch, at string) (Checkpoint, *runs.Error) {
	if !runs.ValidName(branch) {
		return Checkpoint{}, runs.BadName("branch", 409)
	}
	var info Checkpoint
	err := g.locked(func() (err *runs.Error) {
		info, err = g.tl(g.space(ns)).Branch(branch, at)
		return err
	})
	return info, err
}

// Checkout is POST /__admin/branches/:name/checkout (controls §8.5).
func (g *Gateway) Checkout(ns, branch, cp string) *runs.Error {
	if !runs.ValidName(branch) {
		return runs.BadName("branch", 409)
	}
	return g.locked(func() *runs.Error { return g.tl(g.space(ns)).Checkout(branch, cp) })
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
// A mutating request on a namespace not yet created is not refused here:
// only a change that creates it answers 429 (the operation's transaction, or
// a branch or move here), and one that fails creates nothing and answers as
// for an empty namespace (hardening H3).
func (g *Gateway) Select(ns, branch, at string, mutating bool) (Target, *runs.Error) {
	target := Target{NS: ns, Branch: branch}
	err := g.locked(func() *runs.Error {
		c, err := g.tl(g.space(ns)).Select(branch, at, mutating)
		if err == nil && c != nil {
			view := c.State.st // a read-only view of the checkpoint
			target.view = &view
		}
		return err
	})
	if err != nil {
		return Target{}, err
	}
	return target, nil
}

// Snapshot pins a new main checkpoint of ns (controls §8.7) and returns the
// snapshot's id and the checkpoint's records.
func (g *Gateway) Snapshot(ns string) (id string, records int, err *runs.Error) {
	err = g.locked(func() *runs.Error { // a namespace it creates is durable before the answer
		if err := g.snaps.Room(); err != nil {
			return err
		}
		space, err := g.create(ns)
		if err != nil {
			return err
		}
		c := g.tl(space).Commit("main")
		id, records = g.snaps.Pin(ns, space.tl, c), c.Records
		return nil
	})
	return id, records, err
}

// RestoreSnapshot checks out main of ns to the snapshot's checkpoint.
func (g *Gateway) RestoreSnapshot(ns, id string) *runs.Error {
	return g.locked(func() *runs.Error {
		space := g.space(ns)
		c, err := g.snaps.Find(ns, id, space.tl)
		if err == nil {
			space.tl.Move("main", c, true)
		}
		return err
	})
}

// DeleteSnapshot unpins a snapshot.
func (g *Gateway) DeleteSnapshot(id string) *runs.Error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.snaps.Delete(id)
}

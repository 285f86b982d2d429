package gateway

import (
	"fmt"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/state"
	"github.com/hermes-emulator/hermes-emulator/storage"
	"github.com/hermes-emulator/hermes-emulator/transport"
)

// Target addresses the state one request works on: a namespace, a branch, and
// for read-only history views a scratch state that is thrown away.
type Target struct {
	NS     string
	Branch string
	view   *state.State
}

// Main is the target of the main branch of ns (the Hermes controls act there).
func Main(ns string) Target { return Target{NS: ns, Branch: "main"} }

// tx is one serialised change to one branch's state. It works on a copy of
// the branch's State (st) and replaces the branch's state with it on commit.
type tx struct {
	g       *Gateway
	ns      *namespace
	branch  string
	bs      *branchState
	st      state.State
	view    bool // a history view: commit keeps and publishes nothing
	durable bool
	batch   storage.Batch
	dirty   bool // st changed
	meta    bool // counters or scope changed
	emits   []emission
	ends    []string  // runs whose stream ends (terminal)
	opened  []opening // transports created by admissions
	changes []Change  // for Options.OnChange

	cursorIDs []string // runs whose scenario cursor changed (the queue follows on commit)
	resync    bool     // the state was replaced: the queue follows all its cursors

	buffered *int // when set, publish counts here the emitted frames a transport took (controls §11.2)

	accept     bool // an accepted mutation (runs-api §6.1 step 14): checkpoint now
	checkpoint bool // a Hermes control: checkpoint after success (controls §11)
}

type opening struct {
	run     string
	created float64
}

type emission struct {
	runID string
	frame []byte
}

// update runs fn in a transaction on t's state. Whatever fn changed is kept even
// when it returns an error (a sweep tick or hydration before a failing step
// stays, controls §11). The change is made in memory at once; its durable part
// is written by the store writer (with --db before update returns), and a storage failure
// answers 500 (the change then stays in memory but may be lost by a restart).
//
// When fn marks the change accepted (x.accept) or asks for a checkpoint
// (x.checkpoint) and succeeds, a checkpoint is committed at once and its id is
// returned (controls §8.2). That is also what creates a namespace
// (hardening H3): anything else on a namespace not yet created is thrown away.
func (g *Gateway) update(t Target, fn func(x *tx) *runs.Error) (cp string, err *runs.Error) {
	err = g.locked(func() *runs.Error {
		x, berr := g.begin(t)
		if berr != nil {
			return berr
		}
		ferr := fn(x)
		creates := ferr == nil && !x.view && (x.accept || x.checkpoint)
		if g.spaces[x.ns.name] != x.ns {
			if !creates {
				return ferr
			}
			if rerr := g.register(x.ns); rerr != nil {
				return rerr
			}
		}
		g.commit(x)
		if creates {
			cp = g.tl(x.ns).Commit(x.branch).ID
		}
		return ferr
	})
	return cp, err
}

// locked runs fn under the gateway lock, then — without the lock — waits until
// every durable change committed so far is written (with --db only). A
// storage failure answers 500 when fn itself succeeded.
//
// A panic in fn (a bug, or a failed store read) releases the lock and answers
// 500 instead of leaving every later request waiting for the lock.
func (g *Gateway) locked(fn func() *runs.Error) *runs.Error {
	before, seq, err := g.lockedRun(fn)
	if !g.waits() || seq == before {
		return err
	}
	if werr := g.q.Wait(before, seq); werr != nil && err == nil {
		return runs.Storage(werr)
	}
	return err
}

func (g *Gateway) lockedRun(fn func() *runs.Error) (before, seq uint64, err *runs.Error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.q.NeedsRepair() {
		g.repair()
	}
	before = g.q.Last()
	defer func() {
		switch p := recover().(type) {
		case nil:
		case *runs.Error: // a failed store read (state.disk), answered as it is
			err = p
		default: // a bug
			err = runs.Internal(fmt.Sprintf("internal error: %v", p))
		}
		seq = g.q.Last()
	}()
	return before, 0, fn()
}

// waits tells whether requests wait for their durable batches: with --db they
// do; in memory the store is written at once (storage.Writer).
func (g *Gateway) waits() bool { return g.db.Path() != "" }

// repair rewrites every namespace's durable state and the clock from memory
// after a failed write, so the store never lags what clients were told
// (counters included: ids must never repeat after a restart). Callers hold g.mu.
func (g *Gateway) repair() {
	for name, space := range g.spaces {
		g.rewriteDurable(name, space.branches["main"].st)
	}
	g.saveClock()
}

// begin starts a transaction on t. Callers hold g.mu. The namespace's
// timeline exists before anything changes: its first checkpoint is the
// state before the first change. The branch was made by Select; one a reset
// dropped since is made again, or refused at MaxBranches.
func (g *Gateway) begin(t Target) (*tx, *runs.Error) {
	ns := g.space(t.NS)
	g.tl(ns)
	x := &tx{g: g, ns: ns, branch: t.Branch}
	if t.view != nil {
		x.st = *t.view
		x.view = true
		return x, nil
	}
	bs, err := g.branch(ns, t.Branch)
	if err != nil {
		return nil, err
	}
	x.bs = bs
	x.st = bs.st
	x.durable = t.Branch == "main"
	x.batch.Namespace = t.NS
	return x, nil
}

func (g *Gateway) commit(x *tx) {
	if x.view {
		return
	}
	if !x.dirty {
		// No state changed, but a message.delta (which changes no record,
		// runs-api §6.4.3) is still delivered.
		g.publish(x)
		return
	}
	if x.durable {
		// The store holds the counters' high-water marks (runs.CounterMark),
		// so the namespace row is written once per block of ids.
		nRuns := runs.CounterMark(x.st.RunCounter, x.ns.durRuns)
		nApprovals := runs.CounterMark(x.st.ApprovalCounter, x.ns.durApprovals)
		if x.meta || nRuns != x.ns.durRuns || nApprovals != x.ns.durApprovals {
			x.batch.Meta = &storage.Namespace{Name: x.ns.name, RunCounter: nRuns, ApprovalCounter: nApprovals,
				ScopeProfile: x.st.ScopeProfile, ScopeIdentity: x.st.ScopeIdentity}
		}
		if x.batch.Touches() {
			g.q.Enqueue(x.batch)
			x.ns.durRuns, x.ns.durApprovals = nRuns, nApprovals
		}
	}
	x.bs.st = x.st
	x.bs.version++
	g.syncCursors(x)
	g.publish(x)
}

// publish opens the transports of x's admissions, delivers its emissions,
// ends the streams of runs that became terminal and queues its changes.
func (g *Gateway) publish(x *tx) {
	for _, o := range x.opened {
		g.transports.Open(transport.Key{NS: x.ns.name, Branch: x.branch, Run: o.run}, o.created)
	}
	for _, e := range x.emits {
		if g.transports.Deliver(transport.Key{NS: x.ns.name, Branch: x.branch, Run: e.runID}, e.frame) && x.buffered != nil {
			*x.buffered++
		}
	}
	for _, id := range x.ends {
		g.transports.End(transport.Key{NS: x.ns.name, Branch: x.branch, Run: id})
	}
	for _, c := range x.changes {
		g.changed(c)
	}
}

// storageNS is the id salt of the tx's branch (runs-api §12.1).
func (x *tx) storageNS() string { return runs.BranchStorageNS(x.ns.name, x.branch) }

func (x *tx) now() float64 { return x.g.nowS() }

func (x *tx) scope() string {
	if x.st.ScopeProfile == "" {
		return x.g.defScope
	}
	return runs.ScopeHash(x.st.ScopeProfile, x.st.ScopeIdentity)
}

// Change is one state change, for the control-plane stream. Kind is
// "run.created", "run.changed", "run.removed", "run.event", "checkpoint",
// "branch.restored" (the branch's state was replaced by that of Checkpoint),
// "namespace.reset" (Namespace only) or "clock" (Clock only).
type Change struct {
	Kind                                         string
	Namespace, Branch, RunID, Status, Checkpoint string
	Frame                                        []byte      // for run.event: the SSE frame bytes emitted
	Clock                                        *ClockState // for clock: the clock after the move
}

// changed tells Options.OnChange of c, under the gateway lock, so listeners
// hear changes in commit order and before the request that made them
// answers. Callers hold g.mu.
func (g *Gateway) changed(c Change) {
	if g.listening() {
		g.opts.OnChange(c)
	}
}

// listening reports whether changes are wanted: an OnChange is set and, with
// Options.Listening, someone is there to hear them.
func (g *Gateway) listening() bool {
	return g.opts.OnChange != nil && (g.opts.Listening == nil || g.opts.Listening())
}

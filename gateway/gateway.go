package gateway

import (
	"fmt"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// Options configure a Gateway. The zero value is valid.
type Options struct {
	APIKey            string         // --api-key: changes the default scope identity (runs-api §9)
	MaxConcurrentRuns int            // --max-concurrent-runs; 0 = no limit
	MaxCheckpoints    int            // --max-checkpoints; 0 = 1000
	SubscribeWait     time.Duration  // --sse-subscribe-wait; 0 = 1s
	Seed              string         // --seed
	Wall              func() float64 // wall clock in epoch ms; nil = time.Now
	// OnStorageError, when set, hears of every failed durable write (the
	// request that made it answers 500 with --db; in memory none waits).
	OnStorageError func(error)
	// OnChange, when set, hears every committed change (view.go), outside the
	// gateway lock.
	OnChange func(Change)
}

// Gateway holds all emulator state. All methods are safe for concurrent use.
type Gateway struct {
	mu       sync.Mutex
	opts     Options
	db       *storage.DB
	clock    runs.Clock
	rng      runs.RNG
	defScope string
	spaces   map[string]*namespace
	started  float64 // wall ms at start

	transports transportSet
	cat        *catalog      // slot namespaces, scopes and run ids of the cache layers
	q          *flusher      // durable batches, written in order by one goroutine
	down       chan struct{} // closed by Shutdown: every stream ends
	downOnce   sync.Once
	snaps      map[string]snapshot
	snapSeq    int
	tx         tx       // the transaction in progress, under mu (see begin)
	changes    []Change // for OnChange, handed over after the lock (view.go)
}

type namespace struct {
	name     string
	branches map[string]*branchState
	tl       *timeline

	// durRuns and durApprovals are the counters the store holds for main:
	// high-water marks at or above every id handed out.
	durRuns, durApprovals int64
}

// counterBlock is how many ids one durable counter write reserves.
const counterBlock = 1024

func errStorage(err error) *runs.Error { return runs.Internal(fmt.Sprintf("storage: %v", err)) }

// branchState is the current state of one branch plus its change counter,
// which tells whether a checkpoint is needed.
type branchState struct {
	st      State
	version uint64
	cpAt    uint64 // version of the last checkpoint committed on this branch
	cpID    string // that checkpoint
}

// NamePattern is the namespace and branch pattern (runs-api §3).
var NamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// New opens a gateway on db. When db already held state (a real restart), every
// namespace found performs a stale restart (runs-api §10.4).
func New(db *storage.DB, opts Options) (*Gateway, error) {
	if opts.Wall == nil {
		// The live clock source is integer epoch milliseconds (runs-api §13).
		opts.Wall = func() float64 { return float64(time.Now().UnixMilli()) }
	}
	if opts.MaxCheckpoints <= 0 {
		opts.MaxCheckpoints = 1000
	}
	if opts.SubscribeWait <= 0 {
		opts.SubscribeWait = time.Second
	}
	if opts.MaxConcurrentRuns < 0 {
		opts.MaxConcurrentRuns = 0
	}
	identity := runs.DefaultIdentity
	if opts.APIKey != "" {
		identity = opts.APIKey
	}
	g := &Gateway{
		opts:       opts,
		db:         db,
		rng:        runs.RNG{State: runs.SeedFromString(opts.Seed)},
		defScope:   runs.ScopeHash(runs.DefaultProfile, identity),
		spaces:     map[string]*namespace{},
		started:    opts.Wall(),
		transports: transportSet{},
		cat:        newCatalog(),
		down:       make(chan struct{}),
	}
	if err := g.load(); err != nil {
		return nil, err
	}
	g.q = newFlusher(db, opts.OnStorageError)
	return g, nil
}

// nowMs is the controlled clock; callers hold g.mu.
func (g *Gateway) nowMs() float64 { return g.clock.Now(g.opts.Wall()) }

func (g *Gateway) nowS() float64 { return runs.Seconds(g.nowMs()) }

// Now returns the controlled clock in epoch milliseconds.
func (g *Gateway) Now() float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.nowMs()
}

// Uptime is the wall-clock milliseconds since the gateway started.
func (g *Gateway) Uptime() float64 { return g.opts.Wall() - g.started }

// ClockState is the clock as GET /__admin/clock shows it (controls §5).
type ClockState struct {
	Now      float64
	Frozen   bool
	OffsetMs float64
}

// Clock returns the clock state.
func (g *Gateway) Clock() ClockState {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.clockState()
}

func (g *Gateway) clockState() ClockState {
	// offsetMs is the live offset; a frozen clock keeps the offset it had
	// (recomputed on unfreeze), so the state reads the same on every call.
	return ClockState{Now: g.nowMs(), Frozen: g.clock.Frozen, OffsetMs: g.clock.OffsetMs}
}

// SetClock applies a POST /__admin/clock body (controls §5). Fields applied before
// an error stay applied; the state is returned either way.
func (g *Gateway) SetClock(body runs.Value) (ClockState, *runs.Error) {
	defer g.unlockDurable(g.lock())
	c, err := g.clock.ApplyRequest(body, g.opts.Wall())
	g.clock = c
	g.saveClock()
	g.changed(Change{Kind: "clock"})
	return g.clockState(), err
}

func (g *Gateway) saveClock() {
	// The clock is durable with --db (runs-api §10.4), written in order with
	// the other durable changes.
	g.q.enqueue(storage.Batch{Clock: &storage.Clock{Frozen: g.clock.Frozen, FrozenMs: g.clock.FrozenMs, OffsetMs: g.clock.OffsetMs}})
}

// Draw returns the next value of the fault RNG (controls §6.7).
func (g *Gateway) Draw() float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rng.Next()
}

// Namespaces lists the created namespaces, sorted.
func (g *Gateway) Namespaces() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	names := make([]string, 0, len(g.spaces))
	for n := range g.spaces {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NamespaceCount is the number of created namespaces (GET /health).
func (g *Gateway) NamespaceCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.spaces)
}

// space returns the namespace, creating it (with its timeline and durable row)
// on first use. Callers hold g.mu.
func (g *Gateway) space(name string) *namespace {
	if ns, ok := g.spaces[name]; ok {
		return ns
	}
	ns := &namespace{name: name, branches: map[string]*branchState{"main": {st: newState()}}}
	g.spaces[name] = ns
	g.q.enqueue(storage.Batch{Namespace: name, Meta: &storage.Namespace{Name: name}})
	return ns
}

// Target addresses the state one request works on: a namespace, a branch, and
// for read-only history views a scratch state that is thrown away.
type Target struct {
	NS     string
	Branch string
	view   *State
}

// Main is the target of the main branch of ns (the Hermes controls act there).
func Main(ns string) Target { return Target{NS: ns, Branch: "main"} }

// tx is one serialised change to one branch's state.
type tx struct {
	g       *Gateway
	ns      *namespace
	name    string
	branch  string
	bs      *branchState
	st      State
	view    bool
	durable bool
	batch   storage.Batch
	dirty   bool // st changed
	meta    bool // counters or scope changed
	emits   []emission
	ends    []string  // runs whose stream ends (terminal)
	opened  []opening // transports created by admissions
	created float64   // their creation time

	accept     bool // an accepted mutation (runs-api §6.1 step 14): checkpoint now
	checkpoint bool // a Hermes control: checkpoint after success (controls §11)
}

type opening struct {
	k  tkey
	ns uint32 // catalog index of the run's storage namespace; 0 = none
	n  int64
}

type emission struct {
	runID string
	frame []byte
}

// update runs fn in a transaction on t's state. Whatever fn changed is kept even
// when it returns an error (a sweep tick or hydration before a failing step
// stays, controls §11). The change is made in memory at once; its durable part
// is written by the flusher before update returns, and a storage failure
// answers 500 (the change then stays in memory but may be lost by a restart).
//
// When fn marks the change accepted (x.accept) or asks for a checkpoint
// (x.checkpoint) and succeeds, a checkpoint is committed at once and its id is
// returned (controls §8.2).
func (g *Gateway) update(t Target, fn func(x *tx) *runs.Error) (cp string, err *runs.Error) {
	err = g.locked(func() *runs.Error {
		x := g.begin(t)
		ferr := fn(x)
		g.commit(x)
		if ferr == nil && !x.view && (x.accept || x.checkpoint) {
			cp = g.commitCheckpoint(x.ns, x.branch)
		}
		return ferr
	})
	return cp, err
}

// locked runs fn under the gateway lock, then — without the lock — waits until
// every durable change committed so far is written (see flusher; with --db
// only, see waits). A storage failure answers 500 when fn itself succeeded.
//
// A panic in fn (a bug) releases the lock and answers 500 instead of leaving
// every later request waiting for the lock.
func (g *Gateway) locked(fn func() *runs.Error) *runs.Error {
	defer g.fire()
	before, seq, err := g.lockedRun(fn)
	if !g.waits() && (seq == before || !g.q.behind()) {
		return err
	}
	if werr := g.q.wait(before, seq); werr != nil && err == nil {
		return werr
	}
	return err
}

func (g *Gateway) lockedRun(fn func() *runs.Error) (before, seq uint64, err *runs.Error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.q.needsRepair() {
		g.repair()
	}
	before = g.q.last()
	defer func() {
		if p := recover(); p != nil {
			err = runs.Internal(fmt.Sprintf("internal error: %v", p))
		}
		seq = g.q.last()
	}()
	return before, 0, fn()
}

// waits tells whether requests wait for their durable batches: with --db they
// do; the private in-memory store is written all the same, but nothing in it
// outlives the process, so no answer waits for it (a failed write there is
// repaired by the next transaction like any other) — unless the flusher falls
// behind (flusher.behind), which bounds the batches waiting in memory.
func (g *Gateway) waits() bool { return g.db.Path() != "" }

// repair rewrites every namespace's durable state and the clock from memory
// after a failed write, so the store never lags what clients were told
// (counters included: ids must never repeat after a restart). Callers hold g.mu.
func (g *Gateway) repair() {
	for name, space := range g.spaces {
		_ = g.rewriteDurable(name, space.branches["main"].st)
	}
	g.saveClock()
}

// begin starts a transaction on t. Callers hold g.mu, and a transaction ends
// before the lock is released, so one tx value serves them all (its scratch
// lists keep their capacity); the durable batch is always new, since the
// flusher keeps it.
func (g *Gateway) begin(t Target) *tx {
	ns := g.space(t.NS)
	x := &g.tx
	clear(x.emits)
	clear(x.ends)
	clear(x.opened)
	*x = tx{g: g, ns: ns, name: t.NS, branch: t.Branch, emits: x.emits[:0], ends: x.ends[:0], opened: x.opened[:0]}
	if t.view != nil {
		x.st = *t.view
		x.view = true
		return x
	}
	bs := ns.branches[t.Branch]
	if bs == nil {
		bs = g.createBranch(ns, t.Branch, "")
	}
	x.bs = bs
	x.st = bs.st
	x.durable = t.Branch == "main"
	x.batch.Namespace = t.NS
	return x
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
		// The store holds counter high-water marks reserved a block at a time,
		// so an admission writes the namespace row once per counterBlock ids,
		// not once per run; a real restart continues after the mark, and ids
		// never repeat (runs-api §10.4).
		runs, approvals := x.ns.durRuns, x.ns.durApprovals
		if x.st.runCounter > runs {
			runs = x.st.runCounter + counterBlock
		}
		if x.st.approvalCounter > approvals {
			approvals = x.st.approvalCounter + counterBlock
		}
		if x.meta || runs != x.ns.durRuns || approvals != x.ns.durApprovals {
			x.batch.Meta = &storage.Namespace{Name: x.name, RunCounter: runs, ApprovalCounter: approvals,
				ScopeProfile: x.st.scopeProfile, ScopeIdentity: x.st.scopeIdentity}
		}
		if x.batch.Clear || x.batch.Meta != nil || len(x.batch.Upsert) > 0 || len(x.batch.Delete) > 0 || x.batch.SetOwners != nil {
			g.q.enqueue(x.batch)
			x.ns.durRuns, x.ns.durApprovals = runs, approvals
		}
	}
	x.bs.st = x.st
	x.bs.version++
	g.publish(x)
}

// publish opens the transports of x's admissions, delivers its emissions and
// ends the streams of runs that became terminal.
func (g *Gateway) publish(x *tx) {
	for _, o := range x.opened {
		g.openTransport(o, x.created)
	}
	for _, e := range x.emits {
		g.deliver(tkey{x.name, x.branch, e.runID}, e.frame)
	}
	for _, id := range x.ends {
		g.endStream(tkey{x.name, x.branch, id})
	}
}

// storageNS is the id salt of the tx's branch (runs-api §12.1).
func (x *tx) storageNS() string { return runs.BranchStorageNS(x.name, x.branch) }

func (x *tx) now() float64 { return x.g.nowS() }

func (x *tx) scope() string {
	if x.st.scopeProfile == "" {
		return x.g.defScope
	}
	return runs.ScopeHash(x.st.scopeProfile, x.st.scopeIdentity)
}

// SetClockJSON applies a clock request given as JSON text (emulator options).
func (g *Gateway) SetClockJSON(body []byte) (ClockState, error) {
	v, err := runs.Parse(body)
	if err != nil {
		return ClockState{}, err
	}
	st, cerr := g.SetClock(v)
	if cerr != nil {
		return st, cerr
	}
	return st, nil
}

// Shutdown ends every open stream at once (graceful shutdown, issue 6): the
// transports are destroyed as by a restart, so subscribers return.
func (g *Gateway) Shutdown() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.downOnce.Do(func() { close(g.down) })
	for bk := range g.transports {
		g.destroyTransports(bk.ns, bk.branch, true)
	}
}

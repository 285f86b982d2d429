package gateway

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
	"github.com/hermes-emulator/hermes-emulator/state"
	"github.com/hermes-emulator/hermes-emulator/storage"
	"github.com/hermes-emulator/hermes-emulator/timeline"
	"github.com/hermes-emulator/hermes-emulator/transport"
)

// Options configure a Gateway. The zero value is valid.
type Options struct {
	APIKey            string         // --api-key: changes the default scope identity (runs-api §9)
	MaxConcurrentRuns int            // --max-concurrent-runs; ≤ 0 = no limit (runs.Decide)
	MaxCheckpoints    int            // --max-checkpoints; 0 = 1000
	MaxNamespaces     int            // --max-namespaces; 0 = DefaultMaxNamespaces (hardening H3)
	SSEBufferBytes    int            // --sse-buffer-bytes; 0 = DefaultSSEBufferBytes (hardening H5)
	SubscribeWait     time.Duration  // --sse-subscribe-wait; 0 = 1s
	Seed              string         // --seed
	Wall              func() float64 // wall clock in epoch ms; nil = time.Now
	Logger            *slog.Logger   // WARN lines (a closed SSE stream); nil = discard
	// OnStorageError, when set, hears of every failed durable write (the
	// request that made it answers 500 with --db; in memory none waits). It
	// must not block nor call the Gateway: in memory it is called under the
	// gateway lock, with --db from the store writer's goroutine.
	OnStorageError func(error)
	// OnChange, when set, hears every change as it is committed, in commit
	// order, under the gateway lock: it must not block nor call the Gateway
	// (admin.Hub.Change buffers per subscriber and drops a slow one).
	OnChange func(Change)
	// Listening, when set, says whether OnChange has anyone to tell: while it
	// answers false no Change is made at all.
	Listening func() bool
	// Scenarios is every namespace's default scenario set (serve --scenarios,
	// docs/scenarios.md); nil = none.
	Scenarios *scenarios.Set
	// OnScenarioStep, when set, hears of every fired scenario step (metrics),
	// under the gateway lock: it must not block.
	OnScenarioStep func(scenario string)
}

// The defaults of the bounds of hardening H3 and H5.
const (
	DefaultMaxNamespaces  = 10000
	DefaultSSEBufferBytes = 8 << 20
)

// Gateway holds all emulator state. All methods are safe for concurrent use.
type Gateway struct {
	mu       sync.Mutex
	opts     Options
	db       storage.Store
	clock    runs.Clock
	rng      runs.RNG
	defScope string
	spaces   map[string]*namespace // created namespaces (hardening H3)
	started  float64               // wall ms at start
	// nBranches counts the branches of the created namespaces other than
	// their mains (at most MaxBranches).
	nBranches int

	transports *transport.Set  // SSE transports; its own lock, taken after g.mu
	q          *storage.Writer // durable batches, written in order
	snaps      timeline.Snapshots[captured]
	auto       autopilot // scenarios (autopilot.go)
}

// namespace is one namespace: its branches and its timeline.
type namespace struct {
	name     string
	branches map[string]*branchState
	tl       *timeline.Timeline[captured]

	// durRuns and durApprovals are the counters the store holds for main:
	// high-water marks at or above every id handed out.
	durRuns, durApprovals int64
}

func newNamespace(name string) *namespace {
	return &namespace{name: name, branches: map[string]*branchState{"main": {st: state.New()}}}
}

// branchState is the current state of one branch plus its change counter,
// which tells whether a checkpoint is needed.
type branchState struct {
	st      state.State
	version uint64
	cpAt    uint64 // version at which the branch's head checkpoint was its state
}

// New opens a gateway on db. When db already held state (a real restart), every
// namespace found performs a stale restart (runs-api §10.4).
func New(db storage.Store, opts Options) (*Gateway, error) {
	if opts.Wall == nil {
		// The live clock source is integer epoch milliseconds (runs-api §13).
		opts.Wall = func() float64 { return float64(time.Now().UnixMilli()) }
	}
	if opts.MaxCheckpoints <= 0 {
		opts.MaxCheckpoints = 1000
	}
	if opts.MaxNamespaces <= 0 {
		opts.MaxNamespaces = DefaultMaxNamespaces
	}
	if opts.SSEBufferBytes <= 0 {
		opts.SSEBufferBytes = DefaultSSEBufferBytes
	}
	if opts.SubscribeWait <= 0 {
		opts.SubscribeWait = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
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
		transports: transport.New(transport.Options{BufferBytes: opts.SSEBufferBytes, Wait: opts.SubscribeWait, Logger: opts.Logger}),
	}
	if err := g.load(); err != nil {
		return nil, err
	}
	g.q = storage.NewWriter(db, opts.OnStorageError)
	g.startAutopilot()
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
	var st ClockState
	err := g.locked(func() *runs.Error {
		c, moved, err := g.clock.ApplyRequest(body, g.opts.Wall())
		g.advanceScenarios(moved, c)
		g.clock = c
		g.saveClock()
		g.auto.runner.Kick()
		st = g.clockState()
		return err
	})
	return st, err
}

func (g *Gateway) saveClock() {
	// The clock is durable with --db (runs-api §10.4), written in order with
	// the other durable changes.
	g.q.Enqueue(storage.Batch{Clock: &storage.Clock{Frozen: g.clock.Frozen, FrozenMs: g.clock.FrozenMs, OffsetMs: g.clock.OffsetMs}})
	cs := g.clockState()
	g.changed(Change{Kind: "clock", Clock: &cs})
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
	return slices.Sorted(maps.Keys(g.spaces))
}

// NamespaceCount is the number of created namespaces (GET /health).
func (g *Gateway) NamespaceCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.spaces)
}

// space returns namespace name for reading: the created one, or an empty one
// that is not created (hardening H3: reads create nothing). Callers hold g.mu.
func (g *Gateway) space(name string) *namespace {
	if ns, ok := g.spaces[name]; ok {
		return ns
	}
	return newNamespace(name)
}

// create returns namespace name, creating it (with its durable row) when
// needed: 429 once --max-namespaces exist. Callers hold g.mu.
func (g *Gateway) create(name string) (*namespace, *runs.Error) {
	ns := g.space(name)
	return ns, g.register(ns)
}

// register makes ns, from space, a created namespace (a no-op when it is one).
func (g *Gateway) register(ns *namespace) *runs.Error {
	if err := g.roomFor(ns); err != nil || g.spaces[ns.name] == ns {
		return err
	}
	g.spaces[ns.name] = ns
	g.q.Enqueue(storage.Batch{Namespace: ns.name, Meta: &storage.Namespace{Name: ns.name}})
	return nil
}

// roomFor answers 429 when ns is not created and --max-namespaces are.
func (g *Gateway) roomFor(ns *namespace) *runs.Error {
	if g.spaces[ns.name] != ns && len(g.spaces) >= g.opts.MaxNamespaces {
		return runs.Admin(429, "too many namespaces (max "+strconv.Itoa(g.opts.MaxNamespaces)+")")
	}
	return nil
}

// Subscribe performs RunEvents steps 2–4 (runs-api §6.4.2): sweep tick,
// visibility without hydration, then the transport — waiting up to the
// subscribe wait before answering 404 when there is none. With probe (HEAD)
// it checks only and returns a nil Subscription.
func (g *Gateway) Subscribe(ctx context.Context, t Target, id string, probe bool) (*transport.Subscription, *runs.Error) {
	visible := false
	if _, err := g.update(t, func(x *tx) *runs.Error {
		x.sweepTick()
		visible = x.visible(id, x.scope())
		return nil
	}); err != nil {
		return nil, err
	}
	if !visible {
		return nil, runs.RunNotFound(id)
	}
	if t.view != nil { // a history view has no transports (controls §8.6)
		g.transports.Wait(ctx)
		return nil, runs.RunNotFound(id)
	}
	sub, ok := g.transports.Subscribe(ctx, transport.Key{NS: t.NS, Branch: t.Branch, Run: id}, probe)
	if !ok {
		return nil, runs.RunNotFound(id)
	}
	return sub, nil
}

// Shutdown ends every open stream at once (graceful shutdown, issue 6): the
// transports are destroyed as by a restart, so subscribers return.
func (g *Gateway) Shutdown() { g.transports.Shutdown() }

// Package gateway is the stateful core of the emulator: every namespace's runs,
// reservations, scope, counters, queues and timeline, the global controlled clock
// and fault RNG; it drives the SSE transports (package transport).
//
// Each namespace branch's state is a state.State value (package state: plain
// records in persistent maps), so copying it is a snapshot: a checkpoint
// costs what changed since the previous one, not the size of the namespace.
// All changes go through one serialised transaction (tx) that also hands what
// upstream keeps durable (reservations, counters, scope, clock) to the store
// (storage.Store: in memory, or SQLite with --db).
//
// The rules of the run lifecycle live in package runs; this package applies them
// to state and never speaks HTTP.
//
// Files, their job and their invariants:
//
//	gateway.go   Gateway, Options, New; the clock; which namespaces exist.
//	             A namespace is created only by a change (hardening H3): space
//	             answers an uncreated one as empty, register creates it, at most
//	             Options.MaxNamespaces (429 "too many namespaces (max N)").
//	tx.go        the transaction: begin on a copy of a branch's State, commit
//	             it back, enqueue its durable batch, publish its frames and
//	             changes. A change that writes durable batches (through
//	             storage.Writer, in commit order) waits for them with --db,
//	             outside the lock. Every operation takes the lock through
//	             locked, which turns a panic (a bug, a failed store read) into
//	             a 500 and releases the lock. Change, told to
//	             Options.OnChange under the lock, in commit order (the listener
//	             must not block: admin.Hub buffers).
//	mutate.go    the tx mutators and shared lifecycle steps (hydration, the
//	             sweep tick, retention sweep and prune). Every change goes
//	             through them, so the batch and the indexes stay in step.
//	runops.go    the vendor operations (admit, get, stop, approve, steer).
//	controls.go  the Hermes controls (observe, events, deliver, drain,
//	             restart, scope, sweep, reset).
//	timeline.go  the timeline routes on package timeline (checkpoints, heads,
//	             retention, snapshots; O(1) amortised commits, H7): a
//	             namespace is its Host, capturing a branch's State, clock and
//	             RNG and restoring them; x-mockingbird-at views; a
//	             "checkpoint" Change per commit, a "branch.restored" one per
//	             restore (controls.go's Reset tells "namespace.reset").
//	(transports) package transport (its doc.go lists the invariants:
//	             the H5 buffer bound, expiry). Gateway.Subscribe (RunEvents
//	             steps 2–4) and Shutdown are in gateway.go; tx.publish feeds
//	             the transports under the lock, in commit order.
//	durable.go   start-up load (a stale restart of every stored namespace),
//	             rewriting a namespace's durable copy, Close.
//	view.go      the control plane's read views (Runs, RunView); they read
//	             main under the lock and create nothing. The listing order
//	             and its cursor are runs.PageKey.
//	autopilot.go the autopilot applied to state: each scenario-driven run's
//	             cursor in main's State, the due-step queue (scenarios.Queue)
//	             following them on commit, each due step applied as its
//	             control under the lock; the sets, matching and queue are
//	             package scenarios. Invariant (checkAutopilot): the queue
//	             holds exactly one entry per cursor that waits for no answer,
//	             equal to the cursor's.
//
// The invariant checks live in check_test.go: check walks everything the
// gateway holds (state.State.Check of every branch, checkAutopilot,
// checkTimelines, checkTransports) and the model test (TestAutopilotModel in
// autopilot_test.go, keyed and keyless admissions, controls, checkpoints,
// checkouts, restarts, resets) calls it after every step; bounds_test.go and
// gateway_test.go call the timeline and transport checks after their steps.
package gateway

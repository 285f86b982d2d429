// Package gateway is the stateful core of the emulator: every namespace's runs,
// reservations, scope, counters, queues and timeline, the global controlled clock
// and fault RNG, and the SSE transports.
//
// Each namespace branch's state is a State value built from persistent maps
// (github.com/benbjohnson/immutable), so copying it is a snapshot: a checkpoint
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
//	state.go     State: runs, reservations (by key and by run id), approval and
//	             steer queues, retention indexes, counters. State.check lists
//	             and verifies its invariants; the model tests call it each step.
//	tx.go        the transaction: begin on a copy of a branch's State, commit
//	             it back, enqueue its durable batch, publish its frames and changes.
//	mutate.go    the tx mutators and shared lifecycle steps (hydration, the
//	             sweep tick, retention sweep and prune). Every change goes
//	             through them, so the batch and the indexes stay in step.
//	runops.go    the vendor operations (admit, get, stop, approve, steer).
//	controls.go  the Hermes controls (observe, events, deliver, drain,
//	             restart, scope, sweep, reset).
//	timeline.go  the timeline routes on package timeline (checkpoints, heads,
//	             retention, snapshots; O(log n) commits, H7): a namespace is its
//	             Host, capturing a branch's State, clock and RNG and restoring
//	             them; x-mockingbird-at views; a "checkpoint" Change per commit.
//	transport.go SSE transports: a plain map per branch of slots (creation
//	             time; the transport is made on first use). A transport's buffered
//	             bytes never pass Options.SSEBufferBytes (H5): past it the
//	             stream closes with a WARN and later frames are undelivered.
//	flush.go     lock/unlockDurable: a change that writes durable batches
//	             (through storage.Writer, in commit order) waits for them
//	             with --db, outside the lock.
//	durable.go   start-up load (a stale restart of every stored namespace),
//	             rewriting a namespace's durable copy, Close.
//	disk.go      with --db, the reservations the file held at start-up, read
//	             on demand. Invariant: a key not yet read has, in the store,
//	             its start-up row (every key is read before it is written).
//	change.go    Change and the queue that hands them to Options.OnChange
//	             outside the lock, in commit order.
//	view.go      the control plane's read views (Runs, RunView); they read
//	             main under the lock and create nothing. The listing order
//	             and its cursor are runs.PageKey.
//	autopilot.go scenario sets per namespace, each scenario-driven run's
//	             cursor in main's State, and the queue of due steps. Invariant
//	             (checkAutopilot): the queue holds exactly one entry per cursor
//	             that waits for no answer, equal to the cursor's.
//
// The invariant checks (State.check, checkTimelines, checkAutopilot) live in
// check_test.go: they walk everything, and the model tests (state_test.go,
// disk_test.go, autopilot_test.go, FuzzStateModel) call them after every step.
package gateway

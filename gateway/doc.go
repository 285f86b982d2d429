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
// Its files, their job and their invariants are listed in docs/design.md
// ("The gateway's files").
package gateway

// Package gateway is the stateful core of the emulator: every namespace's runs,
// reservations, scope, counters, queues and timeline, the global controlled clock
// and fault RNG, and the SSE transports.
//
// Each namespace branch's state is a State value built from persistent maps, so
// copying it is a snapshot: a checkpoint costs what changed since the previous
// one, not the size of the namespace. All changes go through one serialised
// transaction (tx) that also writes what upstream keeps durable (reservations,
// counters, scope, clock) to storage in one immediate SQLite transaction.
//
// The rules of the run lifecycle live in package runs; this package applies them
// to state and never speaks HTTP.
package gateway

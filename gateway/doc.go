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
// The cache layer keeps every unfinished run for good (runs-api §11.2), so it
// is kept small: a run as admitted is a slot in an append-only log (4 bytes of
// time, its class shared with its neighbours), its untouched SSE transport
// costs nothing (a counter range over those slots), and a catalog maps run ids
// back to their counters by the hash their token encodes, 4 bytes a run
// (runtable.go, transport.go).
//
// The rules of the run lifecycle live in package runs; this package applies them
// to state and never speaks HTTP.
package gateway

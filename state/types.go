package state

import (
	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// Owner is a run's ownership stamp (runs-api §9): local means the run's executor
// lives in this process; alive means the owning process still runs.
type Owner struct {
	Scope string
	Keyed bool
	Local bool
	Alive bool
}

// Cached is one run in the cache layer. Record is the vendor JSON rendering of
// the run record in its current key order; Status, CreatedAt and UpdatedAt are
// kept beside it so retention, capacity and listings never parse records.
type Cached struct {
	Record    []byte
	Status    string
	CreatedAt float64
	UpdatedAt float64
	Owner     Owner
}

// Reservation is the durable row of a keyed submission (runs-api §7) and the
// status its record holds. The row's Record is the durable copy of the run
// record: with --db its text with keys sorted at every level, as the SQLite
// file holds it like upstream; in memory it may share the cached record's
// bytes in their vendor order. Hydration sorts the keys either way. Its RunN is the run's counter: of two runs with one id, the
// greater answers for it (0: unknown). A Reservation is never changed once
// made (every change makes a new one), so the store's batches carry the row
// itself and the in-memory store keeps that very row.
type Reservation struct {
	storage.Reservation
	Status string
}

// OwnerStamp is r's owner stamp.
func (r *Reservation) OwnerStamp() Owner {
	return Owner{Scope: r.OwnerScope, Keyed: r.Keyed, Local: r.Local, Alive: r.Alive}
}

// withOwner is a copy of r with the owner flags local and alive (a
// Reservation is never changed once made).
func (r *Reservation) withOwner(local, alive bool) *Reservation {
	c := *r
	c.Local, c.Alive = local, alive
	return &c
}

// IsLive reports whether c is an unfinished run with a local owner: what
// --max-concurrent-runs counts (runs-api §14.1).
func IsLive(c *Cached) bool { return c != nil && !runs.IsTerminal(c.Status) && c.Owner.Local }

// isSweepable reports whether a cached run of status may be swept (runs-api §11.2).
func isSweepable(status string) bool {
	return status == runs.Completed || status == runs.Failed || status == runs.Cancelled
}

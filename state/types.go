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

// Cached is one run in the cache layer: its record (Text, Value) and, beside
// it so that retention, capacity and listings never look inside records, its
// Status, CreatedAt and UpdatedAt. A Cached is never changed once stored.
//
// The record is kept as its vendor rendering (text), or, from LargeRecord
// bytes on, as the record itself (rec): exactly one of the two is set. A
// change of a large record then shares the values it does not rewrite — a
// large session_id or model echoed from the submission — with the versions
// retained checkpoints hold, instead of copying the whole text each time.
type Cached struct {
	Status    string
	CreatedAt float64
	UpdatedAt float64
	Owner     Owner

	text []byte
	rec  *runs.Obj
}

// LargeRecord is the rendered size from which a cached run keeps its record
// as a value rather than its text (Cached).
const LargeRecord = 64 << 10

// WithRecord is c holding record rec, whose vendor rendering is text (nil:
// rendered here).
func (c Cached) WithRecord(rec *runs.Obj, text []byte) *Cached {
	if text == nil {
		text = runs.Rendered(rec)
	}
	c.text, c.rec = text, nil
	if len(text) >= LargeRecord {
		c.text, c.rec = nil, rec
	}
	return &c
}

// Text is the vendor rendering of the record: shared, never to be changed.
func (c *Cached) Text() []byte {
	if c.rec != nil {
		return runs.Rendered(c.rec)
	}
	return c.text
}

// Value is the record, for a change to start from: shared when large, never
// to be changed (the transitions of runs return a new record).
func (c *Cached) Value() *runs.Obj {
	if c.rec != nil {
		return c.rec
	}
	return runs.StoredRecord(c.text)
}

// Reservation is the durable row of a keyed submission (runs-api §7) and the
// status its record holds (the row's Terminal follows it). The row's Record is the durable copy of the run
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

// Rewritten is a copy of r holding record, of status, written at at (a
// Reservation is never changed once made); Terminal follows status.
func (r *Reservation) Rewritten(record []byte, status string, at float64) *Reservation {
	c := *r
	c.Record, c.Status, c.UpdatedAt, c.Terminal = record, status, at, runs.IsTerminal(status)
	return &c
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

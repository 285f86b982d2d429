// Package storage is the durable store of the emulator: SQLite through sqlx and
// modernc.org/sqlite (pure Go, driver name "sqlite").
//
// The emulator keeps each namespace's live state in memory and mirrors into
// SQLite only what upstream keeps durable (runs-api §10.4): idempotency
// reservations with their durable record copy (§7, §10.1–§10.2), each
// namespace's run-id and approval-id counters and scope setting (§12,
// controls.md §11.6), and the global clock (controls.md §5). The cache layer,
// keyless runs, sweep schedules, faults, journal, timelines and transports are
// never stored.
//
// Every change is a write-through transaction: Apply performs one Batch — one
// namespace's change, e.g. "advance the run counter and reserve the key" or a
// reset — atomically, in an immediate transaction (_txlock=immediate) that takes
// the write lock when it begins. Load reads everything back at start-up.
//
// Open("") gives a private in-memory database per instance; Open(path) a file in
// WAL mode that survives a real process restart (Existed reports one). The schema
// comes from the numbered files in migrations/ (embedded), versioned by PRAGMA
// user_version and marked with PRAGMA application_id. Row types with db tags are
// private to this package; SQLite errors become storage errors in one place
// (translate), by result code.
//
// This package imports no HTTP and nothing of the domain: records are opaque
// JSON bytes here.
package storage

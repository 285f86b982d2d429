// Package storage is the durable layer of the emulator: one Store interface
// with two implementations held to one contract test (contract_test.go) —
// Memory (plain maps, the default: nothing outlives the process, and no SQLite
// runs without --db) and DB (SQLite through sqlx and modernc.org/sqlite, pure
// Go, driver name "sqlite", for --db).
//
// The emulator keeps each namespace's live state in memory and writes through
// the store only what upstream keeps durable (runs-api §10.4): idempotency
// reservations with their durable record copy (§7, §10.1–§10.2), each
// namespace's run-id and approval-id counters and scope setting (§12,
// controls.md §11.6), and the global clock (controls.md §5). The cache layer,
// keyless runs, sweep schedules, faults, journal, timelines and transports are
// never stored.
//
// Every change is one Batch — one namespace's change, e.g. "advance the run
// counter and reserve the key" or a reset — applied atomically (DB: an
// immediate transaction, _txlock=immediate). Writer applies batches in order:
// in memory at once, to a file by one goroutine, several batches a
// transaction (group commit). Start-up reads only the namespace rows and the
// clock (LoadMeta); reservations are read on demand (Reservation,
// ReservationsOfRun), so start-up does not grow with the file. A durable
// prune is one statement (Expiry) that marks the expired terminal rows
// without reading them; reads still return a marked row (a checkpoint from
// before the prune may see it) until the next start-up deletes it
// (DropExpired).
//
// Open(path) opens a file in WAL mode that survives a real process restart
// (Existed reports one); SQLite is used only for --db. A second connection
// checkpoints the WAL in the background (checkpoint.go), so that no commit,
// and no request waiting for one, waits for a whole checkpoint. The schema comes from
// the numbered files in migrations/ (embedded), versioned by PRAGMA
// user_version and marked with PRAGMA application_id. Row types with db tags
// are private to this package; SQLite errors become storage errors in one
// place (translate), by result code.
//
// This package imports no HTTP and nothing of the domain: records are opaque
// JSON bytes here.
package storage

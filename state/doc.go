// Package state holds one namespace branch's state as plain values: the
// cached runs, the reservations (the durable rows of keyed submissions), the
// approval and steer queues, the scenario positions, the scope, the counters
// and the sweep schedule. It knows no HTTP, no lock and no timeline; package
// gateway applies the rules of package runs to it under its lock.
//
// A State is a value built from persistent maps
// (github.com/benbjohnson/immutable): copying it is an O(1) snapshot, so a
// checkpoint costs what changed since the previous one, not the size of the
// namespace. Nothing changes a map in place.
//
// Files, their job and their invariants:
//
//	types.go   Owner, Cached (a run in the cache layer: its vendor record —
//	           its text, or from LargeRecord bytes on its value, exactly one
//	           of the two, so that versions share a large echoed field — and
//	           the fields retention and listings read without parsing it),
//	           Reservation (the storage row and its record's status — the
//	           row's Terminal follows it; never changed once made: the
//	           in-memory store keeps the very row).
//	state.go   State, its maps and the run and reservation mutators, which
//	           keep the indexes in step: a run id's entry holds its cached
//	           run and the keys of its reservations ordered by the run
//	           counter (never neither); sweepable holds exactly the cached
//	           completed/failed/cancelled runs, prunable exactly the terminal
//	           reservations; nCached, live, nApprovals, nSteers and (without
//	           disk) nRes count what they name.
//	queues.go  a run's pending approvals and queued steers: persistent
//	           lists every copy shares (adding costs O(log n)); nApprovals
//	           and nSteers follow them.
//	access.go  reads and walks (queues, scenario positions, what is due for
//	           the sweep and the prune), the logical restart's State, and
//	           reading start-up rows on demand.
//	disk.go    with --db, the reservations the file held at start-up, read
//	           when first asked for. Invariant: a key not yet read has, in the
//	           store, its start-up row, none, or a row of a run admitted
//	           since, told by its run counter (above the namespace's at
//	           start-up); every key is read before it is written, and only
//	           keys with a start-up row are kept and masked, so the keys a
//	           process writes hold no memory once pruned; a durable prune
//	           marks rows, it does not delete them; a logical restart leaves
//	           them unread, seen with its owner.
//	           The durable prune reads none of them: a State's prune time
//	           (prunedAt) hides the terminal ones expired at it, and it counts
//	           them from the keys and ages of the terminal start-up rows
//	           (expiring, read from the store's index once per range of time).
//	check.go   Check: walks everything and verifies the invariants of
//	           state.go; the model tests (state_test.go, disk_test.go,
//	           FuzzStateModel) and the gateway's (TestAutopilotModel) call it
//	           after every step. disk.go's invariant needs the store: the disk
//	           model (TestDiskModel) checks it by comparing every read with a
//	           State that loaded every row at start-up, also after durable
//	           prunes, logical and real restarts, and what the store holds.
package state

package storage

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// Reservation is one idempotency reservation with its durable record copy
// (runs-api §7, §10). Identity: (Namespace, Scope, Key). A row given to Apply
// is never changed afterwards: Memory keeps the very row it was given.
type Reservation struct {
	Namespace, Scope, Key string
	Fingerprint, RunID    string
	// RunN is the run's counter n (runs-api §12.1); 0 in rows written before
	// it was kept.
	RunN int64
	// OwnerScope, Keyed, Local and Alive are the run's owner (runs-api §9)
	// when the row was written: a real restart reads every owner stale
	// (§10.4), so a logical restart (§10.3) changes no stored row.
	OwnerScope          string
	Keyed, Local, Alive bool
	// Record is the durable record copy, JSON text, stored byte for byte.
	Record []byte
	// UpdatedAt is the durable updatedAt, binary64 seconds, stored exactly.
	UpdatedAt float64
	// Terminal tells that Record's status is terminal: only a terminal row
	// expires (Expiry). The writer keeps it in step with Record.
	Terminal bool
}

// Aged is a reservation's key, durable UpdatedAt and run counter (RunN).
type Aged struct {
	Key       ReservationKey
	UpdatedAt float64
	RunN      int64
}

// Namespace is a namespace's durable settings (runs-api §12, controls.md §4, §11.6).
// A namespace exists after a real restart iff it has this row. Its RunCounter
// is at least the RunN of each of its reservations — the gateway raises it in
// the batch that writes a greater one — so that a restarted process tells the
// rows it writes from those the file held (package state).
type Namespace struct {
	Name                        string
	RunCounter, ApprovalCounter int64  // last used n / k (0 = none yet)
	ScopeProfile, ScopeIdentity string // both "" = default scope
}

// Clock is the persisted state of the one global clock (controls.md §5).
type Clock struct {
	Frozen             bool
	FrozenMs, OffsetMs float64
}

// ReservationKey identifies a reservation within a namespace.
type ReservationKey struct{ Scope, Key string }

// Expiry is a durable prune (runs-api §11.3) made in one statement: it marks
// every terminal reservation of the namespace whose Now − UpdatedAt > Age
// (runs.Expired) without reading it. Reads return a marked row as before —
// the process that marked it may hold checkpoints from before the prune that
// still see it (package state reads a restart's rows on demand) — until
// DropExpired deletes it; an Upsert of its key unmarks it.
type Expiry struct{ Now, Age float64 }

// Batch is one atomic change to one namespace's durable state. Apply performs
// its parts in this order: Clear, Meta, Delete, Expire, Upsert — so
// a batch can prune a key and reserve it again (runs-api §11.3), and a reset batch is
// Clear plus a Meta with zero counters, which keeps the namespace existing
// (controls.md §4.1: reset does not un-create it).
type Batch struct {
	Namespace string
	Clear     bool             // delete every reservation and the namespace row first (reset)
	Meta      *Namespace       // upsert the namespace row when non-nil; Name "" means Namespace
	Upsert    []*Reservation   // insert or replace by (namespace, scope, key); Namespace "" means the batch's
	Delete    []ReservationKey // delete by (namespace, scope, key); a missing key is not an error
	Expire    *Expiry          // when non-nil: mark the expired terminal rows (a durable prune)
	Clock     *Clock           // when non-nil: replace the stored clock state (global, not the namespace's)
}

// reservationRow is the storage-private row of the reservations table.
type reservationRow struct {
	Namespace   string  `db:"namespace"`
	Scope       string  `db:"scope"`
	Key         string  `db:"idem_key"`
	Fingerprint string  `db:"fingerprint"`
	RunID       string  `db:"run_id"`
	RunN        int64   `db:"run_n"`
	OwnerScope  string  `db:"owner_scope"`
	Keyed       bool    `db:"keyed"`
	Local       bool    `db:"local"`
	Alive       bool    `db:"alive"`
	Record      []byte  `db:"record"`
	UpdatedAt   float64 `db:"updated_at"`
	Terminal    bool    `db:"terminal"`
}

// namespaceRow is the storage-private row of the namespaces table.
type namespaceRow struct {
	Name            string `db:"name"`
	RunCounter      int64  `db:"run_counter"`
	ApprovalCounter int64  `db:"approval_counter"`
	ScopeProfile    string `db:"scope_profile"`
	ScopeIdentity   string `db:"scope_identity"`
}

// clockRow is the storage-private row of the clock table (always id 1).
type clockRow struct {
	ID       int64   `db:"id"`
	Frozen   bool    `db:"frozen"`
	FrozenMs float64 `db:"frozen_ms"`
	OffsetMs float64 `db:"offset_ms"`
}

const (
	sqlClearReservations = `DELETE FROM reservations WHERE namespace = ?`
	sqlClearNamespace    = `DELETE FROM namespaces WHERE name = ?`
	sqlUpsertNamespace   = `INSERT INTO namespaces (name, run_counter, approval_counter, scope_profile, scope_identity)
		VALUES (:name, :run_counter, :approval_counter, :scope_profile, :scope_identity)
		ON CONFLICT (name) DO UPDATE SET
			run_counter = excluded.run_counter, approval_counter = excluded.approval_counter,
			scope_profile = excluded.scope_profile, scope_identity = excluded.scope_identity`
	// ensureNamespace keeps a reservation from existing without its namespace row.
	sqlEnsureNamespace = `INSERT INTO namespaces (name, run_counter, approval_counter, scope_profile, scope_identity)
		VALUES (?, 0, 0, '', '') ON CONFLICT (name) DO NOTHING`
	sqlDeleteReservation = `DELETE FROM reservations WHERE namespace = ? AND scope = ? AND idem_key = ?`
	sqlUpsertReservation = `INSERT INTO reservations
		(namespace, scope, idem_key, fingerprint, run_id, run_n, owner_scope, keyed, local, alive, record, updated_at, terminal)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (namespace, scope, idem_key) DO UPDATE SET
			fingerprint = excluded.fingerprint, run_id = excluded.run_id, run_n = excluded.run_n,
			owner_scope = excluded.owner_scope,
			keyed = excluded.keyed, local = excluded.local, alive = excluded.alive,
			record = excluded.record, updated_at = excluded.updated_at, terminal = excluded.terminal, expired = 0`
	// sqlExpire marks the rows of an Expiry: the bound on updated_at (now −
	// age + 1, past any rounding of the subtraction) lets the index of 0006
	// skip the younger rows; the exact test follows it.
	sqlExpire = `UPDATE reservations SET expired = 1
		WHERE namespace = ? AND terminal = 1 AND expired = 0 AND updated_at < ? AND ? - updated_at > ?`
	sqlSaveClock = `INSERT INTO clock (id, frozen, frozen_ms, offset_ms) VALUES (:id, :frozen, :frozen_ms, :offset_ms)
		ON CONFLICT (id) DO UPDATE SET
			frozen = excluded.frozen, frozen_ms = excluded.frozen_ms, offset_ms = excluded.offset_ms`
	sqlLoadNamespaces = `SELECT name, run_counter, approval_counter, scope_profile, scope_identity
		FROM namespaces ORDER BY name`
	sqlLoadReservations = `SELECT ` + sqlReservationCols + `
		FROM reservations ORDER BY namespace, scope, idem_key`
	sqlLoadClock = `SELECT id, frozen, frozen_ms, offset_ms FROM clock WHERE id = 1`
)

// Apply performs the batch in ONE immediate transaction: all of it or nothing.
// A malformed batch fails with ErrBatch before the transaction; a constraint
// violation (e.g. an empty key or record) fails with ErrConstraint and leaves the database as it was.
//
// Several batches given at once are applied in order in that one transaction
// (group commit): all of them or none.
func (db *DB) Apply(ctx context.Context, bs ...Batch) error {
	for i := range bs {
		if err := bs[i].check(); err != nil {
			return err
		}
	}
	err := inTx(ctx, db.x, "apply", func(tx *sqlx.Tx) error {
		a := applier{db: db, tx: tx, ensured: map[string]bool{}}
		for i := range bs {
			if err := a.apply(ctx, &bs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && db.ckpt != nil {
		db.ckpt.committed(len(bs))
	}
	return err
}

// applier applies batches within one transaction; the hot statements are bound
// to it once, and each namespace row is ensured once.
type applier struct {
	db      *DB
	tx      *sqlx.Tx
	ensure  *sqlx.Stmt
	upsert  *sqlx.Stmt
	ensured map[string]bool
}

func (a *applier) apply(ctx context.Context, b *Batch) error {
	db, tx := a.db, a.tx
	if b.Clear {
		if _, err := tx.ExecContext(ctx, sqlClearReservations, b.Namespace); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, sqlClearNamespace, b.Namespace); err != nil {
			return err
		}
	}
	if m := b.Meta; m != nil {
		row := namespaceRow{b.Namespace, m.RunCounter, m.ApprovalCounter, m.ScopeProfile, m.ScopeIdentity}
		if _, err := tx.NamedStmtContext(ctx, db.stmts.upsertNamespace).ExecContext(ctx, row); err != nil {
			return err
		}
	}
	for _, k := range b.Delete {
		if _, err := tx.StmtxContext(ctx, db.stmts.deleteReservation).ExecContext(ctx, b.Namespace, k.Scope, k.Key); err != nil {
			return err
		}
	}
	if e := b.Expire; e != nil {
		if _, err := tx.ExecContext(ctx, sqlExpire, b.Namespace, e.Now-e.Age+1, e.Now, e.Age); err != nil {
			return err
		}
	}
	if b.Meta != nil || b.Clear {
		a.ensured[b.Namespace] = b.Meta != nil
	}
	if len(b.Upsert) > 0 && !a.ensured[b.Namespace] {
		if a.ensure == nil {
			a.ensure = tx.StmtxContext(ctx, db.stmts.ensureNamespace)
		}
		if _, err := a.ensure.ExecContext(ctx, b.Namespace); err != nil {
			return err
		}
		a.ensured[b.Namespace] = true
	}
	for _, r := range b.Upsert {
		record := r.Record
		if record == nil {
			record = []byte{} // NULL would read as a NOT NULL failure; report it as the length CHECK
		}
		if a.upsert == nil {
			a.upsert = tx.StmtxContext(ctx, db.stmts.upsertReservation)
		}
		if _, err := a.upsert.ExecContext(ctx, b.Namespace, r.Scope, r.Key, r.Fingerprint, r.RunID, r.RunN, r.OwnerScope,
			r.Keyed, r.Local, r.Alive, record, r.UpdatedAt, r.Terminal); err != nil {
			return fmt.Errorf("reservation (%q, %q): %w", r.Scope, r.Key, err)
		}
	}
	if c := b.Clock; c != nil {
		if _, err := tx.NamedExecContext(ctx, sqlSaveClock, clockRow{1, c.Frozen, c.FrozenMs, c.OffsetMs}); err != nil {
			return err
		}
	}
	return nil
}

// Touches reports whether b changes anything of its namespace (anything but
// the Clock).
func (b *Batch) Touches() bool {
	return b.Clear || b.Meta != nil || len(b.Delete) > 0 || b.Expire != nil || len(b.Upsert) > 0
}

// check rejects a batch that does not name exactly one namespace.
func (b *Batch) check() error {
	if b.Namespace == "" && b.Clock != nil && !b.Touches() {
		return nil // a clock-only batch
	}
	if b.Namespace == "" {
		return fmt.Errorf("storage: apply: %w: no namespace", ErrBatch)
	}
	if b.Meta != nil && b.Meta.Name != "" && b.Meta.Name != b.Namespace {
		return fmt.Errorf("storage: apply: %w: meta of namespace %q in a batch of %q", ErrBatch, b.Meta.Name, b.Namespace)
	}
	for _, r := range b.Upsert {
		if r.Namespace != "" && r.Namespace != b.Namespace {
			return fmt.Errorf("storage: apply: %w: reservation of namespace %q in a batch of %q", ErrBatch, r.Namespace, b.Namespace)
		}
	}
	return nil
}

// SaveClock stores the clock state (controls.md §5), replacing the previous one.
func (db *DB) SaveClock(ctx context.Context, c Clock) error {
	return inTx(ctx, db.x, "save clock", func(tx *sqlx.Tx) error {
		_, err := tx.NamedExecContext(ctx, sqlSaveClock, clockRow{1, c.Frozen, c.FrozenMs, c.OffsetMs})
		return err
	})
}

// Load reads everything durable from one consistent snapshot: namespaces
// sorted by name, reservations sorted by (namespace, scope, key), and the clock
// (nil when never saved). Reservations of a namespace always come with its row.
// Floats come back exactly as stored. Start-up reads only LoadMeta; Load serves
// tools and tests that want the whole file at once.
func (db *DB) Load(ctx context.Context) (namespaces []Namespace, reservations []Reservation, clock *Clock, err error) {
	err = readTx(ctx, db.x, "load", func(tx *sqlx.Tx) error {
		var rs []reservationRow
		if err := tx.SelectContext(ctx, &rs, sqlLoadReservations); err != nil {
			return err
		}
		for i := range rs {
			reservations = append(reservations, rs[i].reservation())
		}
		namespaces, clock, err = readMeta(ctx, tx)
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return namespaces, reservations, clock, nil
}

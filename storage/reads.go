package storage

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jmoiron/sqlx"
)

// The on-demand reads of DB (Store): start-up reads only the namespace rows
// and the clock; a reservation is read when first asked for.

const (
	sqlReservationCols  = `namespace, scope, idem_key, fingerprint, run_id, run_n, owner_scope, keyed, local, alive, record, updated_at, terminal`
	sqlReservationByKey = `SELECT ` + sqlReservationCols + ` FROM reservations
		WHERE namespace = ? AND scope = ? AND idem_key = ?`
	sqlReservationsByRun = `SELECT ` + sqlReservationCols + ` FROM reservations
		WHERE namespace = ? AND run_id = ? ORDER BY run_n DESC`
	sqlCountReservations = `SELECT count(*) FROM reservations WHERE namespace = ?`
	sqlReservationsOf    = `SELECT ` + sqlReservationCols + ` FROM reservations
		WHERE namespace = ? ORDER BY scope, idem_key`
	sqlTerminalIn = `SELECT scope, idem_key, updated_at, run_n FROM reservations
		WHERE namespace = ? AND terminal = 1 AND expired = 0 AND updated_at >= ? AND updated_at < ?
		ORDER BY updated_at, scope, idem_key`
	sqlDropExpired = `DELETE FROM reservations WHERE expired = 1`
)

func (r *reservationRow) reservation() Reservation {
	return Reservation{r.Namespace, r.Scope, r.Key, r.Fingerprint, r.RunID, r.RunN, r.OwnerScope,
		r.Keyed, r.Local, r.Alive, r.Record, r.UpdatedAt, r.Terminal}
}

// LoadMeta implements Store: the namespace rows sorted by name and the clock.
func (db *DB) LoadMeta(ctx context.Context) (namespaces []Namespace, clock *Clock, err error) {
	err = readTx(ctx, db.x, "load", func(tx *sqlx.Tx) error {
		namespaces, clock, err = readMeta(ctx, tx)
		return err
	})
	return namespaces, clock, err
}

// readMeta reads the namespace rows sorted by name and the clock (nil when
// never saved) inside tx.
func readMeta(ctx context.Context, tx *sqlx.Tx) ([]Namespace, *Clock, error) {
	var ns []namespaceRow
	if err := tx.SelectContext(ctx, &ns, sqlLoadNamespaces); err != nil {
		return nil, nil, err
	}
	var cs []clockRow
	if err := tx.SelectContext(ctx, &cs, sqlLoadClock); err != nil {
		return nil, nil, err
	}
	var namespaces []Namespace
	for _, n := range ns {
		namespaces = append(namespaces, Namespace(n))
	}
	var clock *Clock
	if len(cs) == 1 {
		clock = &Clock{cs[0].Frozen, cs[0].FrozenMs, cs[0].OffsetMs}
	}
	return namespaces, clock, nil
}

// one reads at most one reservation row.
func (db *DB) one(ctx context.Context, query string, args ...any) (Reservation, bool, error) {
	var row reservationRow
	err := db.x.GetContext(ctx, &row, query, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return Reservation{}, false, nil
	}
	if err != nil {
		return Reservation{}, false, translate("read reservation", err)
	}
	return row.reservation(), true, nil
}

// Reservation implements Store.
func (db *DB) Reservation(ctx context.Context, ns, scope, key string) (Reservation, bool, error) {
	return db.one(ctx, sqlReservationByKey, ns, scope, key)
}

// ReservationsOfRun implements Store.
func (db *DB) ReservationsOfRun(ctx context.Context, ns, id string) ([]Reservation, error) {
	return db.many(ctx, sqlReservationsByRun, ns, id)
}

// CountReservations implements Store.
func (db *DB) CountReservations(ctx context.Context, ns string) (int, error) {
	var n int
	if err := db.x.GetContext(ctx, &n, sqlCountReservations, ns); err != nil {
		return 0, translate("count reservations", err)
	}
	return n, nil
}

// Reservations implements Store.
func (db *DB) Reservations(ctx context.Context, ns string) ([]Reservation, error) {
	return db.many(ctx, sqlReservationsOf, ns)
}

// TerminalIn implements Store (from the index of 0006 alone).
func (db *DB) TerminalIn(ctx context.Context, ns string, from, to float64) ([]Aged, error) {
	var rows []struct {
		Scope     string  `db:"scope"`
		Key       string  `db:"idem_key"`
		UpdatedAt float64 `db:"updated_at"`
		RunN      int64   `db:"run_n"`
	}
	if err := db.x.SelectContext(ctx, &rows, sqlTerminalIn, ns, from, to); err != nil {
		return nil, translate("read reservations", err)
	}
	out := make([]Aged, len(rows))
	for i, r := range rows {
		out[i] = Aged{ReservationKey{r.Scope, r.Key}, r.UpdatedAt, r.RunN}
	}
	return out, nil
}

// DropExpired implements Store.
func (db *DB) DropExpired(ctx context.Context) error {
	return inTx(ctx, db.x, "drop expired", func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, sqlDropExpired)
		return err
	})
}

// many reads reservation rows.
func (db *DB) many(ctx context.Context, query string, args ...any) ([]Reservation, error) {
	var rows []reservationRow
	if err := db.x.SelectContext(ctx, &rows, query, args...); err != nil {
		return nil, translate("read reservations", err)
	}
	out := make([]Reservation, len(rows))
	for i := range rows {
		out[i] = rows[i].reservation()
	}
	return out, nil
}

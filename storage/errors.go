package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Errors of the store. Callers test them with errors.Is; any storage error is an
// internal failure to the contract (a 500, runs.Internal), never a client error.
var (
	// ErrConstraint: a write broke a schema constraint (CHECK, NOT NULL or
	// primary key). The transaction was rolled back; nothing of the batch was
	// written.
	ErrConstraint = errors.New("constraint violated")
	// ErrBatch: a Batch is malformed (no namespace, or a row of another namespace).
	// It is rejected before any transaction begins.
	ErrBatch = errors.New("invalid batch")
	// ErrForeign: the file is a SQLite database that is not a hermes-emulator one;
	// Open refuses it and leaves it untouched.
	ErrForeign = errors.New("not a hermes-emulator database")
)

// translate is the one place where SQLite errors become storage errors. It
// matches the SQLite result code (modernc.org/sqlite reports extended codes,
// e.g. SQLITE_CONSTRAINT_CHECK; the low byte is the primary code), never the
// message text.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT {
		return fmt.Errorf("storage: %s: %w: %w", op, ErrConstraint, err)
	}
	return fmt.Errorf("storage: %s: %w", op, err)
}

// inTx runs fn in one transaction and commits it, or rolls it back when fn or
// the commit fails; the result passes through translate. Every DSN of this
// package sets _txlock=immediate, so the transaction takes the write lock when
// it begins (runs-api §10.4): a read-then-write unit cannot lose an update, and
// waiting for the lock is bounded by busy_timeout instead of failing midway.
func inTx(ctx context.Context, x *sqlx.DB, op string, fn func(*sqlx.Tx) error) (err error) {
	return runTx(ctx, x, nil, op, fn)
}

// readTx is inTx for a pure read: a deferred (read-only) transaction, which in
// WAL mode is one consistent snapshot and takes no write lock.
func readTx(ctx context.Context, x *sqlx.DB, op string, fn func(*sqlx.Tx) error) (err error) {
	return runTx(ctx, x, &sql.TxOptions{ReadOnly: true}, op, fn)
}

func runTx(ctx context.Context, x *sqlx.DB, opts *sql.TxOptions, op string, fn func(*sqlx.Tx) error) (err error) {
	tx, err := x.BeginTxx(ctx, opts)
	if err != nil {
		return translate(op, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback() // the error that matters is fn's or Commit's
		}
	}()
	if err = fn(tx); err != nil {
		return translate(op, err)
	}
	if err = tx.Commit(); err != nil {
		return translate(op, err)
	}
	return nil
}

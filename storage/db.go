package storage

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // the "sqlite" driver
)

// busyTimeoutMs bounds how long a transaction waits for the write lock held by
// another connection to the same file (another handle or process) before
// failing with SQLITE_BUSY.
const busyTimeoutMs = 10000

// DB is an open SQLite store: the file of --db, in WAL mode.
// It is safe for concurrent use; every method runs in its own transaction.
type DB struct {
	x        *sqlx.DB
	ckpt     *checkpointer
	path     string
	existed  bool
	once     sync.Once
	closeErr error
	stmts    stmts
}

// stmts are the statements of the per-request write path, prepared once: the
// driver would otherwise parse and plan them on every transaction.
type stmts struct {
	upsertNamespace   *sqlx.NamedStmt
	upsertReservation *sqlx.Stmt
	ensureNamespace   *sqlx.Stmt
	deleteReservation *sqlx.Stmt
}

func (s *stmts) close() (errs []error) {
	if s.upsertNamespace != nil {
		errs = append(errs, s.upsertNamespace.Close())
	}
	if s.upsertReservation != nil {
		errs = append(errs, s.upsertReservation.Close())
	}
	if s.ensureNamespace != nil {
		errs = append(errs, s.ensureNamespace.Close())
	}
	if s.deleteReservation != nil {
		errs = append(errs, s.deleteReservation.Close())
	}
	return errs
}

func (db *DB) prepare() (err error) {
	s := &db.stmts
	if s.upsertNamespace, err = db.x.PrepareNamed(sqlUpsertNamespace); err != nil {
		return err
	}
	if s.upsertReservation, err = db.x.Preparex(sqlUpsertReservation); err != nil {
		return err
	}
	if s.ensureNamespace, err = db.x.Preparex(sqlEnsureNamespace); err != nil {
		return err
	}
	s.deleteReservation, err = db.x.Preparex(sqlDeleteReservation)
	return err
}

// cacheKiB is the page cache of the connection. SQLite's default
// (2,000 KiB) cost ~3–4 MB more process memory under a keyed load than 512
// KiB — each 4 KiB page plus its header takes an 8 KiB slot of the allocator —
// at a throughput within the noise of the default (scripts/bench): the pages
// a load writes are mostly the rightmost ones, and what the cache misses is
// read from the OS page cache (the database file and WAL).
const cacheKiB = 512

// Open opens the SQLite file at path (--db), created when missing, in WAL mode
// with synchronous=NORMAL (a committed transaction survives a process crash,
// kill -9 included, though not necessarily a power loss), with busy_timeout set
// and the embedded migrations applied. A file holding another application's
// database is refused (ErrForeign) by Preflight, before SQLite opens it: the
// file is never written to. Without --db the emulator uses Memory, not SQLite.
//
// Connections: exactly one pooled connection (SetMaxOpenConns(1)): the caller
// serialises its calls and only reads at start-up and on demand, so more
// connections would buy nothing; one connection makes database/sql queue
// concurrent callers in the process, so they never meet SQLITE_BUSY.
// Immediate transactions and busy_timeout still protect the file against
// another handle or process.
func Open(path string) (*DB, error) {
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, errors.New("storage: open: no file given (without --db, use NewMemory)")
	}
	if err := Preflight(path); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	db := &DB{path: path}
	// A file: URI with an escaped path, so '?', '#' and '%' in the path stay
	// part of the name; busy_timeout is applied before journal_mode.
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), OmitHost: true}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMs))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", cacheKiB))
	q.Set("_txlock", "immediate")
	dsn := u.String() + "?" + q.Encode()
	// The writes' connection checkpoints the WAL itself only at 64 MiB, where
	// it starts the WAL over; the checkpointer's own connection copies the
	// pages in the background before then (checkpoint.go), so that commit
	// finds little left to copy.
	if db.x, err = sqlx.Open("sqlite", dsn+"&_pragma=wal_autocheckpoint(16384)"); err != nil {
		db.Close()
		return nil, fmt.Errorf("storage: open: %w", err)
	}
	db.x.SetMaxOpenConns(1)
	db.x.SetMaxIdleConns(1)
	db.x.SetConnMaxLifetime(0)
	db.x.SetConnMaxIdleTime(0)
	if db.existed, err = migrate(context.Background(), db.x, ms); err != nil {
		db.Close()
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	if err := db.prepare(); err != nil {
		db.Close()
		return nil, fmt.Errorf("storage: prepare: %w", err)
	}
	if db.ckpt, err = startCheckpointer(dsn); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the database. Calling Close again returns the first result.
func (db *DB) Close() error {
	db.once.Do(func() {
		var errs []error
		if db.ckpt != nil {
			errs = append(errs, db.ckpt.close())
		}
		errs = append(errs, db.stmts.close()...)
		if db.x != nil {
			errs = append(errs, db.x.Close())
		}
		db.closeErr = errors.Join(errs...)
	})
	return db.closeErr
}

// Path is the file given to Open.
func (db *DB) Path() string { return db.path }

// Existed reports whether Open found a file that already carried the schema: a
// real restart (runs-api §10.4), after which the caller performs a stale logical
// restart of every namespace Load returns.
func (db *DB) Existed() bool { return db.existed }

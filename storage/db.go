package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"
)

// busyTimeoutMs bounds how long a transaction waits for the write lock held by
// another connection to the same file (another handle or process) before
// failing with SQLITE_BUSY.
const busyTimeoutMs = 10000

// DB is an open store: a file database (--db, WAL) or a private one.
// It is safe for concurrent use; every method runs in its own transaction.
type DB struct {
	x        *sqlx.DB
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

// cacheKiB is the page cache of a connection, in both modes. SQLite's default
// (2,000 KiB) cost ~3–4 MB more process memory under a keyed load than 512
// KiB — each 4 KiB page plus its header takes an 8 KiB slot of the allocator —
// at a throughput within the noise of the default (scripts/bench): the pages
// a load writes are mostly the rightmost ones, and what the cache misses is
// read from the OS page cache (the spill file, or the database file and WAL).
const cacheKiB = 512

// Open opens the store. path "" gives a private database that lives until
// Close and is never shared with another DB, even in the same process
// (runs-api §10.4: two embedded instances never share state). Any other path is
// a SQLite file, created when missing, in WAL mode with synchronous=NORMAL (a
// committed transaction survives a process crash, kill -9 included, though not
// necessarily a power loss), with busy_timeout set and the embedded migrations
// applied. A file holding another application's database is refused (ErrForeign)
// by Preflight, before SQLite opens it: the file is never written to.
//
// The private database is a SQLite temporary database (file name ""): its
// pages live in the connection's page cache, and once they outgrow it (512 KiB:
// cacheKiB) they spill to an anonymous file that SQLite deletes as it creates it, so a
// long load keeps the process small; nothing of it outlives Close or the
// process. Where SQLite finds no writable directory for that file, it stays
// in memory whole (tempStore). Its rollback journal is kept in memory (journal_mode=MEMORY): a
// transaction still rolls back, and there is no crash to recover from. Such a database belongs to the one connection that opened it, so the
// pool holds exactly one connection for the life of the DB, and a second
// connection is refused (errLost) rather than silently starting empty.
//
// Connections. Both modes use exactly one pooled connection (SetMaxOpenConns(1)):
// on a file, the caller serialises its calls and only reads at start-up (Load),
// so more connections would buy nothing; one connection makes database/sql
// queue concurrent callers in the process, so they never meet SQLITE_BUSY.
// Immediate transactions and busy_timeout still protect the file against
// another handle or process.
func Open(path string) (*DB, error) {
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		return nil, err
	}
	if path != "" {
		if err := Preflight(path); err != nil {
			return nil, err
		}
	}
	db := &DB{path: path}
	if path == "" {
		dsn := fmt.Sprintf("file:?_pragma=busy_timeout(%d)&_pragma=temp_store(%d)&_pragma=journal_mode(MEMORY)&_pragma=cache_size(-%d)&_txlock=immediate",
			busyTimeoutMs, tempStore(), cacheKiB)
		db.x = sqlx.NewDb(sql.OpenDB(&oneConn{dsn: dsn}), "sqlite")
	} else {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("storage: open %s: %w", path, err)
		}
		// A file: URI with an escaped path, so '?', '#' and '%' in the path stay
		// part of the name; busy_timeout is applied before journal_mode.
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), OmitHost: true}
		q := url.Values{}
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMs))
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", cacheKiB))
		// Checkpoint the WAL every 64 MiB rather than 4 MiB: each checkpoint
		// syncs the database file, and fewer of them raise keyed throughput
		// (~18% measured); a crash still loses no committed transaction.
		q.Add("_pragma", "wal_autocheckpoint(16384)")
		q.Set("_txlock", "immediate")
		if db.x, err = sqlx.Open("sqlite", u.String()+"?"+q.Encode()); err != nil {
			db.Close()
			return nil, fmt.Errorf("storage: open: %w", err)
		}
	}
	db.x.SetMaxOpenConns(1)
	db.x.SetMaxIdleConns(1)
	db.x.SetConnMaxLifetime(0)
	db.x.SetConnMaxIdleTime(0)
	if db.existed, err = migrate(context.Background(), db.x, ms); err != nil {
		db.Close()
		if path != "" {
			return nil, fmt.Errorf("%w (file %s)", err, path)
		}
		return nil, err
	}
	if err := db.prepare(); err != nil {
		db.Close()
		return nil, fmt.Errorf("storage: prepare: %w", err)
	}
	return db, nil
}

// Close closes the database; an in-memory database is gone afterwards. Calling
// Close again returns the first result.
func (db *DB) Close() error {
	db.once.Do(func() {
		var errs []error
		errs = append(errs, db.stmts.close()...)
		if db.x != nil {
			errs = append(errs, db.x.Close())
		}
		db.closeErr = errors.Join(errs...)
	})
	return db.closeErr
}

// Path is the file given to Open, "" for in-memory.
func (db *DB) Path() string { return db.path }

// Existed reports whether Open found a file that already carried the schema: a
// real restart (runs-api §10.4), after which the caller performs a stale logical
// restart of every namespace Load returns. Always false in memory.
func (db *DB) Existed() bool { return db.existed }

// errLost is what a private database answers once its connection is gone: the
// data went with it, and an empty database in its place would hide that.
var errLost = errors.New("storage: the private database's connection was closed; its data is gone")

// oneConn connects to a private database once; a second connection would be a
// different, empty database.
type oneConn struct {
	dsn    string
	opened atomic.Bool
}

func (c *oneConn) Connect(context.Context) (driver.Conn, error) {
	if c.opened.Swap(true) {
		return nil, errLost
	}
	return c.Driver().Open(c.dsn)
}

func (c *oneConn) Driver() driver.Driver { return &sqlite.Driver{} }

// tempStore is the temp_store of a private database: FILE (1) when SQLite will
// find a writable directory for its spill file, else MEMORY (2), so that a
// read-only system keeps the database in memory rather than failing to spill.
var tempStore = sync.OnceValue(func() int {
	// The directories SQLite's unix VFS tries, in its order.
	return tempStoreFor([]string{os.Getenv("SQLITE_TMPDIR"), os.Getenv("TMPDIR"), "/var/tmp", "/usr/tmp", "/tmp", "."})
})

func tempStoreFor(dirs []string) int {
	for _, d := range dirs {
		if fi, err := os.Stat(d); d == "" || err != nil || !fi.IsDir() {
			continue
		}
		f, err := os.CreateTemp(d, ".hermes-emulator-probe-*")
		if err != nil {
			continue
		}
		f.Close()
		os.Remove(f.Name())
		return 1
	}
	return 2
}

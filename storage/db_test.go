package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jmoiron/sqlx"
	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind (e.g. a DB
// that was not closed, or a Close that does not release the pool).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// openFile opens a file database in a fresh temporary directory.
func openFile(t testing.TB) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hermes.db")
	db, err := Open(path)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// openDB opens a database in a new file.
func openDB(t testing.TB) *DB {
	t.Helper()
	db, _ := openFile(t)
	return db
}

// pragma reads one integer or text pragma through the store's own pool.
func pragma[T any](t *testing.T, db *DB, name string) T {
	t.Helper()
	var v T
	if err := db.x.Get(&v, "PRAGMA "+name); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func TestOpenFileReopen(t *testing.T) {
	ctx := context.Background()
	db, path := openFile(t)
	if db.Path() != path || db.Existed() {
		t.Fatalf("fresh file: Path()=%q Existed()=%v, want %q false", db.Path(), db.Existed(), path)
	}
	if got := pragma[string](t, db, "journal_mode"); got != "wal" {
		t.Errorf("journal_mode = %q, want wal", got)
	}
	if got := pragma[int](t, db, "synchronous"); got != 1 { // NORMAL
		t.Errorf("synchronous = %d, want 1 (NORMAL)", got)
	}
	if got := pragma[int](t, db, "busy_timeout"); got != busyTimeoutMs {
		t.Errorf("busy_timeout = %d, want %d", got, busyTimeoutMs)
	}
	if got := pragma[int](t, db, "cache_size"); got != -cacheKiB {
		t.Errorf("cache_size = %d, want %d (KiB)", got, -cacheKiB)
	}
	if got := pragma[int](t, db, "user_version"); got != 6 {
		t.Errorf("user_version = %d, want 6", got)
	}
	if got := pragma[int](t, db, "application_id"); got != applicationID {
		t.Errorf("application_id = %#x, want %#x", got, applicationID)
	}
	r := res("default", "s1", "k1", "run_1", 1700000000.125)
	if err := db.Apply(ctx, Batch{Namespace: "default", Meta: &Namespace{RunCounter: 1}, Upsert: rows(r)}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveClock(ctx, Clock{Frozen: true, FrozenMs: 1700000000000, OffsetMs: 0}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	db2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if !db2.Existed() || db2.Path() != path {
		t.Fatalf("reopen: Existed()=%v Path()=%q, want true %q", db2.Existed(), db2.Path(), path)
	}
	want := state{
		ns:    []Namespace{{Name: "default", RunCounter: 1}},
		res:   []Reservation{r},
		clock: &Clock{Frozen: true, FrozenMs: 1700000000000},
	}
	assertState(t, db2, want)
}

// A path that needs escaping in a file: URI still names exactly that file.
func TestOpenPathSpecialCharacters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a?b#c%20d&e=f.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Apply(context.Background(), Batch{Namespace: "x", Meta: &Namespace{}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not at the given path: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "a?b#c%20d&e=f.db") {
			t.Errorf("stray file %q", e.Name())
		}
	}
}

func TestOpenRefusesOtherDatabases(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.db")
	newer := filepath.Join(dir, "newer.db")
	text := filepath.Join(dir, "text.db")
	empty := filepath.Join(dir, "empty.db")
	raw := func(path, stmt string) {
		t.Helper()
		x, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		if _, err := x.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	raw(foreign, "CREATE TABLE t (a); INSERT INTO t VALUES (1)")
	db, _ := Open(newer)
	db.Close()
	raw(newer, "PRAGMA user_version = 99")
	if err := os.WriteFile(text, []byte("this is not a database, just some text that is long enough to fill a header"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path    string
		foreign bool
		msg     string // the error text must contain this
	}{
		{foreign, true, "storage: open " + foreign + ": not a hermes-emulator database: a non-empty database without the hermes-emulator mark"},
		{newer, false, "storage: open " + newer + ": database schema version 99 is newer than this build (6)"},
		{text, true, "storage: open " + text + ": not a hermes-emulator database: not a SQLite database file"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			db, err := Open(tt.path)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			if errors.Is(err, ErrForeign) != tt.foreign || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %q (ErrForeign %v), want containing %q (ErrForeign %v)", err, errors.Is(err, ErrForeign), tt.msg, tt.foreign)
			}
		})
	}
	// The foreign file is left untouched: no mark, no schema.
	x, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	var appID, tables int
	if err := x.QueryRow("PRAGMA application_id").Scan(&appID); err != nil || appID != 0 {
		t.Errorf("foreign application_id = %d (%v), want 0", appID, err)
	}
	if err := x.QueryRow("SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil || tables != 1 {
		t.Errorf("foreign schema objects = %d (%v), want 1", tables, err)
	}
	// An existing empty file is a new database, not a restart.
	db, err = Open(empty)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Existed() {
		t.Error("empty file: Existed() = true")
	}
}

func TestLoadMigrations(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name     string
		fs       fstest.MapFS
		versions []int
		err      string
	}{
		{"ordered", fstest.MapFS{"migrations/0002_b.sql": file("B"), "migrations/0001_a.sql": file("A")}, []int{1, 2}, ""},
		{"gap", fstest.MapFS{"migrations/0001_a.sql": file("A"), "migrations/0003_c.sql": file("C")}, nil,
			"storage: migration 0003_c.sql: want version 2"},
		{"repeat", fstest.MapFS{"migrations/0001_a.sql": file("A"), "migrations/0001_b.sql": file("B")}, nil,
			"storage: migration 0001_b.sql: want version 2"},
		{"bad name", fstest.MapFS{"migrations/1_a.sql": file("A")}, nil,
			`storage: bad migration name "1_a.sql" (want NNNN_name.sql)`},
		{"none", fstest.MapFS{"migrations/.keep": nil}, nil, `storage: bad migration name ".keep" (want NNNN_name.sql)`},
		{"empty dir", fstest.MapFS{"migrations": &fstest.MapFile{Mode: os.ModeDir}}, nil, "storage: no migrations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := loadMigrations(tt.fs)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, m := range ms {
				got = append(got, m.version)
			}
			if !slices.Equal(got, tt.versions) {
				t.Fatalf("versions = %v, want %v", got, tt.versions)
			}
		})
	}
	// The embedded set itself is valid.
	if _, err := loadMigrations(migrationFS); err != nil {
		t.Fatal(err)
	}
}

// A file of schema version 1 (a unique run-id index, no run counter) opens at
// the latest version: its reservation keeps everything with RunN 0, and two
// reservations may then share a run id (runs-api §12.1: ids repeat).
func TestMigrateFromVersion1(t *testing.T) {
	path, x, ms := fileAtVersion(t, 1)
	if _, err := x.Exec(`INSERT INTO namespaces VALUES ('n', 3, 0, '', '');
		INSERT INTO reservations (namespace, scope, idem_key, fingerprint, run_id, owner_scope, keyed, local, alive, record, updated_at)
		VALUES ('n', 's', 'k1', 'fp', 'run_x', 's', 1, 1, 1, '{"a":1}', 1.5)`); err != nil {
		t.Fatal(err)
	}
	x.Close()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := pragma[int](t, db, "user_version"); got != len(ms) {
		t.Fatalf("user_version = %d, want %d", got, len(ms))
	}
	ctx := context.Background()
	old := Reservation{Namespace: "n", Scope: "s", Key: "k1", Fingerprint: "fp", RunID: "run_x", OwnerScope: "s",
		Keyed: true, Local: true, Alive: true, Record: []byte(`{"a":1}`), UpdatedAt: 1.5}
	newer := res("n", "s", "k2", "run_x", 2)
	newer.RunN = 7
	if err := db.Apply(ctx, Batch{Namespace: "n", Upsert: rows(newer)}); err != nil {
		t.Fatal(err)
	}
	assertState(t, db, state{ns: []Namespace{{Name: "n", RunCounter: 3}}, res: []Reservation{old, newer}})
}

// A file of schema version 5 opens with every row's Terminal taken from its
// record's status — with the bare Infinity tokens of wire.md §3 too — and a
// durable prune (Expiry) then takes the old terminal rows, not the unfinished
// one.
func TestMigrateTerminalFromRecords(t *testing.T) {
	path, x, _ := fileAtVersion(t, 5)
	records := map[string]string{
		"completed":   `{"run_id":"run_a","session_id":Infinity,"status":"completed","updated_at":1.0}`,
		"failed":      `{"run_id":"run_b","status":"failed","usage":{"status":"queued"}}`,
		"cancelled":   `{"run_id":"run_c","status":"cancelled"}`,
		"interrupted": `{"model":-Infinity,"run_id":"run_d","status":"interrupted"}`,
		"queued":      `{"run_id":"run_e","session_id":{"status":"completed"},"status":"queued"}`,
		"running":     `{"run_id":"run_f","status":"running"}`,
	}
	for key, rec := range records {
		if _, err := x.Exec(`INSERT INTO reservations (namespace, scope, idem_key, fingerprint, run_id, run_n, owner_scope, keyed, local, alive, record, updated_at)
			VALUES ('n', 's', ?, 'fp', 'run', 1, 's', 1, 1, 1, ?, 1.5)`, key, rec); err != nil {
			t.Fatal(err)
		}
	}
	x.Close()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for key := range records {
		r, ok, err := db.Reservation(ctx, "n", "s", key)
		if want := key != "queued" && key != "running"; err != nil || !ok || r.Terminal != want || string(r.Record) != records[key] {
			t.Errorf("%s: Terminal %v (want %v), record %s, %v %v", key, r.Terminal, want, r.Record, ok, err)
		}
	}
	if err := db.Apply(ctx, Batch{Namespace: "n", Expire: &Expiry{Now: 86402, Age: 86400}}); err != nil {
		t.Fatal(err)
	}
	if err := db.DropExpired(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := db.CountReservations(ctx, "n"); err != nil || n != 2 {
		t.Fatalf("%d rows after the prune (%v), want the 2 unfinished", n, err)
	}
}

// Open needs a file: without --db the emulator uses Memory, never SQLite.
func TestOpenNeedsAFile(t *testing.T) {
	if db, err := Open(""); db != nil || err == nil || err.Error() != "storage: open: no file given (without --db, use NewMemory)" {
		t.Fatalf(`Open("") = %v, %v`, db, err)
	}
}

// The checkpointer copies committed pages into the database file after
// checkpointEvery batches, well before the WAL reaches wal_autocheckpoint
// (64 MiB): the file grows without any commit having checkpointed.
func TestCheckpointerCopiesTheWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ck.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	ctx := context.Background()
	for i := range checkpointEvery {
		r := &Reservation{Scope: "s", Key: fmt.Sprintf("k%d", i), Fingerprint: "f", RunID: fmt.Sprintf("run_%d", i),
			RunN: int64(i + 1), OwnerScope: "s", Keyed: true, Record: []byte(`{"status":"queued"}`), UpdatedAt: 1}
		if err := db.Apply(ctx, Batch{Namespace: "default", Upsert: []*Reservation{r}}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for size() == before {
		if time.Now().After(deadline) {
			t.Fatalf("database file still %d bytes 10 s after %d commits: no checkpoint ran", before, checkpointEvery)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
}

// A failed checkpoint loses nothing and the next one makes it good, so only
// the last checkpoint's failure is Close's error: the first failure was kept
// for ever, and hermes-emulator exited 1 with "close: storage: checkpoint:
// database or disk is full (13)" after the disk had been freed and every
// later checkpoint had succeeded.
func TestCheckpointerReportsOnlyTheLastFailure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		results []error
		fails   bool
	}{
		{"failed then succeeded", []error{errors.New("disk full"), nil}, false},
		{"succeeded then failed", []error{nil, errors.New("disk full")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := sqlx.Open("sqlite", filepath.Join(t.TempDir(), "ck.db"))
			if err != nil {
				t.Fatal(err)
			}
			ran := make(chan struct{})
			i := 0
			c := newCheckpointer(x, func() error {
				defer func() { ran <- struct{}{} }()
				i++
				return tc.results[i-1]
			})
			for range tc.results {
				c.committed(checkpointEvery)
				<-ran
			}
			if err := c.close(); (err != nil) != tc.fails {
				t.Fatalf("close = %v, want an error: %v", err, tc.fails)
			}
		})
	}
}

// fileAtVersion is a new file migrated to schema version v only, open with
// sqlx (the caller closes it), and every migration of this build.
func fileAtVersion(t *testing.T, v int) (string, *sqlx.DB, []migration) {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("v%d.db", v))
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatal(err)
	}
	x, err := sqlx.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate(context.Background(), x, ms[:v]); err != nil {
		t.Fatal(err)
	}
	return path, x, ms
}

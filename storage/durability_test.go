package storage

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Every transaction of a file DB takes the write lock when it begins
// (_txlock=immediate, runs-api §10.4): while one is open, even before its first
// statement, no other connection can start writing.
func TestTransactionsAreImmediate(t *testing.T) {
	db, path := openFile(t)
	other, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	tryWrite := func() error {
		tx, err := other.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		_, err = tx.Exec(`INSERT INTO namespaces (name, run_counter, approval_counter, scope_profile, scope_identity) VALUES ('x', 0, 0, '', '')`)
		return err
	}
	err = inTx(ctx, db.x, "probe", func(*sqlx.Tx) error {
		err := tryWrite()
		var se *sqlite.Error
		if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY {
			t.Errorf("write during an open store transaction: err = %v, want SQLITE_BUSY", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tryWrite(); err != nil {
		t.Errorf("write after the store transaction ended: %v", err)
	}
}

// childEnv names the database file a re-executed test binary writes before it
// kills itself.
const childEnv = "HERMES_STORAGE_KILL_CHILD"

// A committed transaction survives kill -9 of the process (WAL with
// synchronous=NORMAL): the test re-executes itself, the child commits and sends
// itself SIGKILL, and the parent finds the data on reopening (runs-api §10.4).
func TestCommittedSurvivesKill(t *testing.T) {
	if path := os.Getenv(childEnv); path != "" {
		db, err := Open(path)
		if err != nil {
			os.Exit(3)
		}
		ctx := context.Background()
		if err := db.Apply(ctx, Batch{Namespace: "default", Meta: &Namespace{RunCounter: 1},
			Upsert: rows(res("default", "s", "k", "run_1", 1700000000.125))}); err != nil {
			os.Exit(4)
		}
		if err := db.SaveClock(ctx, Clock{Frozen: true, FrozenMs: 1700000000000}); err != nil {
			os.Exit(5)
		}
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // never reached
	}
	path := filepath.Join(t.TempDir(), "killed.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCommittedSurvivesKill$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child: %v, want killed", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want SIGKILL", ee)
	}
	// The commit is still in the write-ahead log: no clean close checkpointed it.
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("WAL after kill: %v (size %v), want a non-empty file", err, fi)
	}
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !db.Existed() {
		t.Error("Existed() = false after a real restart")
	}
	assertState(t, db, state{
		ns:    []Namespace{{Name: "default", RunCounter: 1}},
		res:   []Reservation{res("default", "s", "k", "run_1", 1700000000.125)},
		clock: &Clock{Frozen: true, FrozenMs: 1700000000000},
	})
}

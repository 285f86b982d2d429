package storage

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// dirState is every file of dir with its bytes.
func dirState(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func names(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Hardening H8: a file that is not a hermes-emulator database is refused
// before anything is written — not one byte of it changes and no -wal, -shm
// (or other) file appears beside it.
func TestPreflightRefusesWithoutWriting(t *testing.T) {
	sqliteFile := func(t *testing.T, path string, stmts ...string) {
		t.Helper()
		x, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		for _, s := range stmts {
			if _, err := x.Exec(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name    string
		make    func(t *testing.T, path string)
		foreign bool
		msg     string // after "storage: open <path>: "
	}{
		{"another application's database", func(t *testing.T, p string) {
			sqliteFile(t, p, "CREATE TABLE t (a)", "INSERT INTO t VALUES (1)")
		}, true, "not a hermes-emulator database: a non-empty database without the hermes-emulator mark"},
		{"another application's marked database", func(t *testing.T, p string) {
			sqliteFile(t, p, "PRAGMA application_id = 1234")
		}, true, "not a hermes-emulator database: application_id 0x4d2"},
		{"another application's WAL database, log left beside it", func(t *testing.T, p string) {
			// A copy taken while the other application runs: its tables are
			// only in the write-ahead log.
			x, err := sql.Open("sqlite", p+".live")
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			x.SetMaxOpenConns(1)
			for _, s := range []string{"PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0", "CREATE TABLE t (a)", "INSERT INTO t VALUES (1)"} {
				if _, err := x.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			for _, suffix := range []string{"", "-wal"} {
				b, err := os.ReadFile(p + ".live" + suffix)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p+suffix, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}, true, "not a hermes-emulator database: a non-empty database without the hermes-emulator mark"},
		{"a text file", func(t *testing.T, p string) {
			if err := os.WriteFile(p, bytes.Repeat([]byte("not a database "), 20), 0o600); err != nil {
				t.Fatal(err)
			}
		}, true, "not a hermes-emulator database: not a SQLite database file"},
		{"a short file", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte("SQLite format 3\x00"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, true, "not a hermes-emulator database: not a SQLite database file"},
		{"a newer schema of ours", func(t *testing.T, p string) {
			db, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			sqliteFile(t, p, "PRAGMA user_version = 99")
		}, false, "database schema version 99 is newer than this build (4)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "x.db")
			tt.make(t, path)
			os.Remove(path + ".live")
			os.Remove(path + ".live-wal")
			os.Remove(path + ".live-shm")
			before := dirState(t, dir)
			db, err := Open(path)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			if want := "storage: open " + path + ": " + tt.msg; err.Error() != want || errors.Is(err, ErrForeign) != tt.foreign {
				t.Fatalf("err = %q (ErrForeign %v)\nwant  %q (ErrForeign %v)", err, errors.Is(err, ErrForeign), want, tt.foreign)
			}
			after := dirState(t, dir)
			if len(after) != len(before) {
				t.Fatalf("files %v, were %v", names(after), names(before))
			}
			for name, b := range before {
				if !bytes.Equal(after[name], b) {
					t.Fatalf("%s changed", name)
				}
			}
		})
	}
}

// Issue 15 item 5: a missing directory is named as such.
func TestPreflightMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	path := filepath.Join(dir, "x.db")
	_, err := Open(path)
	if want := "storage: open " + path + ": the directory " + dir + " does not exist"; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

// Our own database is accepted, also when its first transactions are only in
// the write-ahead log (a crash before any checkpoint) or the log ends in a torn
// frame (a crash while writing it), and an empty SQLite database becomes ours.
func TestPreflightAcceptsOurs(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.db")
	db, err := Open(live)
	if err != nil {
		t.Fatal(err)
	}
	crashed := filepath.Join(dir, "crashed.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(live + suffix)
		if err != nil && suffix == "" {
			t.Fatal(err)
		}
		if err := os.WriteFile(crashed+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	// kill -9 in the middle of writing page 1 into the log: the frame has the
	// log's salts, a commit mark and half a page (here: another application
	// id), but its checksum does not continue the log's — SQLite stops there.
	torn := filepath.Join(dir, "torn.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(crashed + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if suffix == "-wal" {
			if len(b) < 32 {
				t.Fatalf("the live database left no log (%d bytes)", len(b))
			}
			pageSize := int(binary.BigEndian.Uint32(b[8:12]))
			frame := make([]byte, 24+pageSize)
			binary.BigEndian.PutUint32(frame[0:4], 1) // page 1
			binary.BigEndian.PutUint32(frame[4:8], 1) // a commit frame
			copy(frame[8:16], b[16:24])               // the log's salts
			copy(frame[24:], "SQLite format 3\x00")   // half of page 1
			binary.BigEndian.PutUint32(frame[24+68:], 0xb940b3d)
			b = append(b, frame...)
		}
		if err := os.WriteFile(torn+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	empty := filepath.Join(dir, "empty.db")
	x, err := sql.Open("sqlite", empty)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Exec("PRAGMA user_version = 0; VACUUM"); err != nil {
		t.Fatal(err)
	}
	x.Close()
	for _, p := range []string{live, crashed, torn, empty, filepath.Join(dir, "new.db")} {
		if err := Preflight(p); err != nil {
			t.Fatalf("Preflight(%s): %v", filepath.Base(p), err)
		}
		db, err := Open(p)
		if err != nil {
			t.Fatalf("Open(%s): %v", filepath.Base(p), err)
		}
		db.Close()
	}
}

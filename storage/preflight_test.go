package storage

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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
		}, false, "database schema version 99 is newer than this build (6)"},
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
	// kill -9 in the middle of writing page 1 into the log (withTornPage1).
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
			b = withTornPage1(b)
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

// withTornPage1 is wal with a frame appended as kill -9 in the middle of
// writing page 1 leaves it: the log's salts, a commit mark and half a page
// (here: another application id), but a checksum that does not continue the
// log's — SQLite's log ends before it.
func withTornPage1(wal []byte) []byte {
	pageSize := int(binary.BigEndian.Uint32(wal[8:12]))
	frame := make([]byte, 24+pageSize)
	binary.BigEndian.PutUint32(frame[0:4], 1) // page 1
	binary.BigEndian.PutUint32(frame[4:8], 1) // a commit frame
	copy(frame[8:16], wal[16:24])             // the log's salts
	copy(frame[24:], "SQLite format 3\x00")
	binary.BigEndian.PutUint32(frame[24+68:], 0xb940b3d)
	return append(slices.Clone(wal), frame...)
}

// rechained is wal changed by change (header or frame fields) with its
// checksums computed again, so that only the change tells it apart.
func rechained(wal []byte, change func(log []byte)) []byte {
	be := binary.BigEndian
	log := slices.Clone(wal)
	pageSize := int(be.Uint32(log[8:12]))
	change(log)
	var order binary.ByteOrder = binary.LittleEndian
	if be.Uint32(log[0:4]) == 0x377f0683 {
		order = be
	}
	s0, s1 := walChecksum(order, 0, 0, log[:24])
	be.PutUint32(log[24:], s0)
	be.PutUint32(log[28:], s1)
	for off := 32; off+24+pageSize <= len(log); off += 24 + pageSize {
		f := log[off : off+24+pageSize]
		s0, s1 = walChecksum(order, s0, s1, f[:8])
		s0, s1 = walChecksum(order, s0, s1, f[24:])
		be.PutUint32(f[16:], s0)
		be.PutUint32(f[20:], s1)
	}
	return log
}

// liveCopy returns the database file and write-ahead log of a database built
// by stmts while it is still open (its tables only in the log, as a copy
// taken by a crash leaves them).
func liveCopy(t testing.TB, stmts ...string) (main, wal []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "live.db")
	x, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	x.SetMaxOpenConns(1)
	for _, s := range append([]string{"PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0"}, stmts...) {
		if _, err := x.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if main, err = os.ReadFile(p); err != nil {
		t.Fatal(err)
	}
	if wal, err = os.ReadFile(p + "-wal"); err != nil {
		t.Fatal(err)
	}
	return main, wal
}

// TestPreflightAgreesWithSQLite checks Preflight's reading of a write-ahead
// log against SQLite's own: for a database file and a log beside it, Preflight
// accepts exactly when SQLite, opening the same two files, sees our mark (or
// an empty unmarked database) and a schema this build knows. The logs: ours,
// another application's (its mark only in the log), and another's whose mark
// and pages are one transaction; each cut at ~150 points (torn frames, lost
// commits), with a torn page 1 appended, with a page size field of 1 or 3000,
// another magic or a frame of page 0 (checksums made to hold), with a wrong
// header checksum, and with single bytes flipped.
func TestPreflightAgreesWithSQLite(t *testing.T) {
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatal(err)
	}
	type db struct{ main, wal []byte }
	var dbs [3]db
	dbs[0].main, dbs[0].wal = liveCopy(t, "PRAGMA application_id = "+fmt.Sprint(applicationID), "PRAGMA user_version = 1",
		"CREATE TABLE t (a)", "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)")
	dbs[1].main, dbs[1].wal = liveCopy(t, "PRAGMA application_id = 1234", "CREATE TABLE t (a)")
	// The mark and several pages in one transaction: a log cut before its
	// commit frame holds page 1 with the mark, uncommitted.
	dbs[2].main, dbs[2].wal = liveCopy(t, "BEGIN", "PRAGMA application_id = 1234", "CREATE TABLE t (a)",
		"INSERT INTO t VALUES (randomblob(20000))", "COMMIT")
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	n, agreed := 0, map[bool]int{}
	check := func(d db, log []byte, what string) {
		t.Helper()
		n++
		p, q := filepath.Join(dir, fmt.Sprint(n, ".db")), filepath.Join(dir, fmt.Sprint(n, "-sqlite.db"))
		for _, path := range []string{p, q} {
			if os.WriteFile(path, d.main, 0o600) != nil || os.WriteFile(path+"-wal", log, 0o600) != nil {
				t.Fatal("cannot write the files")
			}
		}
		perr := Preflight(p)
		x, err := sql.Open("sqlite", q)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		var appID uint32
		var version, tables int
		if x.QueryRow("PRAGMA application_id").Scan(&appID) != nil || x.QueryRow("PRAGMA user_version").Scan(&version) != nil ||
			x.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&tables) != nil {
			return // SQLite cannot read these files either
		}
		ours := (appID == applicationID || (appID == 0 && version == 0 && tables == 0)) && version <= len(ms)
		if (perr == nil) != ours {
			t.Fatalf("%s: Preflight: %v; SQLite sees application_id %#x, user_version %d, %d tables", what, perr, appID, version, tables)
		}
		agreed[ours]++
	}
	for i, d := range dbs {
		for cut := 0; cut <= len(d.wal); cut += max(61, len(d.wal)/150) {
			check(d, d.wal[:cut], fmt.Sprintf("database %d, log cut at %d", i, cut))
		}
		check(d, withTornPage1(d.wal), fmt.Sprintf("database %d, torn page 1", i))
		check(d, rechained(d.wal, func(log []byte) { binary.BigEndian.PutUint32(log[8:12], 1) }),
			fmt.Sprintf("database %d, page size field 1", i))
		check(d, rechained(d.wal, func(log []byte) { binary.BigEndian.PutUint32(log[32:36], 0) }),
			fmt.Sprintf("database %d, first frame of page 0", i))
		check(d, rechained(d.wal, func(log []byte) { binary.BigEndian.PutUint32(log[8:12], 3000) }),
			fmt.Sprintf("database %d, page size field 3000", i))
		check(d, rechained(d.wal, func(log []byte) { log[3] ^= 4 }), fmt.Sprintf("database %d, another magic", i))
		header := slices.Clone(d.wal)
		header[24] ^= 1
		check(d, header, fmt.Sprintf("database %d, header checksum wrong", i))
		for range 60 {
			log := slices.Clone(d.wal)
			at := rng.IntN(len(log))
			log[at] ^= byte(1 + rng.IntN(255))
			check(d, log, fmt.Sprintf("database %d, byte %d flipped", i, at))
		}
	}
	if agreed[true] == 0 || agreed[false] == 0 {
		t.Fatalf("agreed on %d accepted and %d refused: the cases do not cover both", agreed[true], agreed[false])
	}
}

// A log whose page size field is a power of two past SQLite's largest page
// (65536) is no log, as SQLite reads it, and walPage1 allocates no frame of
// that size for it: a field of 2^31 would otherwise cost 2 GiB.
func TestWALPageSizeBound(t *testing.T) {
	_, wal := liveCopy(t, "CREATE TABLE t (a)")
	for _, size := range []uint32{131072, 1 << 31} {
		p := filepath.Join(t.TempDir(), "x.db-wal")
		log := rechained(wal, func(log []byte) { binary.BigEndian.PutUint32(log[8:12], size) })
		if err := os.WriteFile(p, log, 0o600); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		page1, err := walPage1(p)
		runtime.ReadMemStats(&after)
		if page1 != nil || err != nil {
			t.Fatalf("page size %d: walPage1 = %q, %v; want no log", size, page1, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Fatalf("page size %d: walPage1 allocated %d bytes", size, n)
		}
	}
}

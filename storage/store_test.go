package storage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// res builds a valid reservation; the record embeds the run id.
func res(ns, scope, key, runID string, updatedAt float64) Reservation {
	return Reservation{
		Namespace: ns, Scope: scope, Key: key,
		Fingerprint: "fp-" + key, RunID: runID, OwnerScope: scope,
		Keyed: true, Local: true, Alive: true,
		Record:    []byte(`{"run_id":"` + runID + `","status":"running"}`),
		UpdatedAt: updatedAt,
	}
}

// with returns r changed by f.
func with(r Reservation, f func(*Reservation)) Reservation { f(&r); return r }

// state is everything Load returns.
type state struct {
	ns    []Namespace
	res   []Reservation
	clock *Clock
}

func assertState(t *testing.T, db *DB, want state) {
	t.Helper()
	ns, rs, clock, err := db.Load(context.Background())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !reflect.DeepEqual(ns, want.ns) {
		t.Errorf("namespaces:\n got %+v\nwant %+v", ns, want.ns)
	}
	if len(rs) != len(want.res) {
		t.Errorf("reservations: got %d, want %d:\n got %+v\nwant %+v", len(rs), len(want.res), rs, want.res)
	} else {
		for i := range rs {
			if !reflect.DeepEqual(rs[i], want.res[i]) {
				t.Errorf("reservation %d:\n got %+v\nwant %+v", i, rs[i], want.res[i])
			}
		}
	}
	if !reflect.DeepEqual(clock, want.clock) {
		t.Errorf("clock: got %+v, want %+v", clock, want.clock)
	}
}

// seed is the state every Apply case starts from: two namespaces with two
// reservations each.
func seed(t *testing.T, db *DB) {
	t.Helper()
	for _, b := range []Batch{
		{Namespace: "a", Meta: &Namespace{RunCounter: 2, ApprovalCounter: 1, ScopeProfile: "p", ScopeIdentity: "i"},
			Upsert: rows(res("a", "s1", "k1", "run_a1", 10), res("a", "s2", "k2", "run_a2", 20))},
		{Namespace: "b", Meta: &Namespace{RunCounter: 2},
			Upsert: rows(res("b", "s1", "k1", "run_b1", 30), res("", "s1", "k2", "run_b2", 40))},
	} {
		if err := db.Apply(context.Background(), b); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
}

var (
	seedNS = []Namespace{
		{Name: "a", RunCounter: 2, ApprovalCounter: 1, ScopeProfile: "p", ScopeIdentity: "i"},
		{Name: "b", RunCounter: 2},
	}
	a1, a2 = res("a", "s1", "k1", "run_a1", 10), res("a", "s2", "k2", "run_a2", 20)
	b1, b2 = res("b", "s1", "k1", "run_b1", 30), res("b", "s1", "k2", "run_b2", 40)
)

func TestApply(t *testing.T) {
	tests := []struct {
		name  string
		batch Batch
		want  state
	}{
		{"nothing", Batch{Namespace: "a"}, state{ns: seedNS, res: []Reservation{a1, a2, b1, b2}}},
		{"insert", Batch{Namespace: "a", Meta: &Namespace{Name: "a", RunCounter: 3, ApprovalCounter: 1, ScopeProfile: "p", ScopeIdentity: "i"},
			Upsert: rows(res("a", "s1", "k3", "run_a3", 50))},
			state{ns: seedNS[:0:0], res: nil}}, // filled below
		{"replace by key", Batch{Namespace: "a", Upsert: rows(with(a1, func(r *Reservation) {
			r.Record, r.UpdatedAt, r.Alive, r.Fingerprint = []byte(`{"status":"interrupted"}`), 99.5, false, "fp-new"
		}))}, state{ns: seedNS, res: []Reservation{
			with(a1, func(r *Reservation) {
				r.Record, r.UpdatedAt, r.Alive, r.Fingerprint = []byte(`{"status":"interrupted"}`), 99.5, false, "fp-new"
			}), a2, b1, b2}}},
		{"delete", Batch{Namespace: "a", Delete: []ReservationKey{{"s1", "k1"}, {"s1", "k2"}, {"nope", "nope"}}},
			state{ns: seedNS, res: []Reservation{a2, b1, b2}}},
		{"prune and reserve the same key", Batch{Namespace: "b", Delete: []ReservationKey{{"s1", "k1"}},
			Upsert: rows(res("b", "s1", "k1", "run_b3", 60))},
			state{ns: seedNS, res: []Reservation{a1, a2, res("b", "s1", "k1", "run_b3", 60), b2}}},
		{"clear", Batch{Namespace: "a", Clear: true}, state{ns: seedNS[1:], res: []Reservation{b1, b2}}},
		{"reset keeps the namespace", Batch{Namespace: "a", Clear: true, Meta: &Namespace{}},
			state{ns: []Namespace{{Name: "a"}, seedNS[1]}, res: []Reservation{b1, b2}}},
		{"clear then reserve", Batch{Namespace: "b", Clear: true, Meta: &Namespace{RunCounter: 1},
			Upsert: rows(res("b", "s9", "k9", "run_b1", 70))},
			state{ns: []Namespace{seedNS[0], {Name: "b", RunCounter: 1}}, res: []Reservation{a1, a2, res("b", "s9", "k9", "run_b1", 70)}}},
		{"scope set", Batch{Namespace: "b", Meta: &Namespace{RunCounter: 2, ScopeProfile: "p2", ScopeIdentity: "i2"}},
			state{ns: []Namespace{seedNS[0], {Name: "b", RunCounter: 2, ScopeProfile: "p2", ScopeIdentity: "i2"}}, res: []Reservation{a1, a2, b1, b2}}},
		{"upsert creates the namespace row", Batch{Namespace: "c", Upsert: rows(res("c", "s", "k", "run_c1", 1))},
			state{ns: append(seedNS[:2:2], Namespace{Name: "c"}), res: []Reservation{a1, a2, b1, b2, res("c", "s", "k", "run_c1", 1)}}},
		{"same run id in the same namespace (ids are 32-bit hashes, runs-api §12.1)", Batch{Namespace: "a",
			Upsert: rows(res("a", "s1", "k9", "run_a1", 90))},
			state{ns: seedNS, res: []Reservation{a1, res("a", "s1", "k9", "run_a1", 90), a2, b1, b2}}},
		{"same run id in another namespace", Batch{Namespace: "c", Meta: &Namespace{RunCounter: 1},
			Upsert: rows(res("c", "s1", "k1", "run_a1", 1))},
			state{ns: append(seedNS[:2:2], Namespace{Name: "c", RunCounter: 1}), res: []Reservation{a1, a2, b1, b2, res("c", "s1", "k1", "run_a1", 1)}}},
	}
	// "insert": the new reservation sorts between a1 (s1,k1) and a2 (s2,k2).
	tests[1].want = state{ns: []Namespace{{Name: "a", RunCounter: 3, ApprovalCounter: 1, ScopeProfile: "p", ScopeIdentity: "i"}, seedNS[1]},
		res: []Reservation{a1, res("a", "s1", "k3", "run_a3", 50), a2, b1, b2}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, _ := openFile(t)
			seed(t, db)
			if err := db.Apply(context.Background(), tt.batch); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			assertState(t, db, tt.want)
		})
	}
}

// A failing batch leaves nothing behind: its Clear, Meta, Delete and earlier
// upserts are all rolled back.
func TestApplyAtomic(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	prefix := func(ns string) Batch { // a batch that would change a lot before failing
		return Batch{Namespace: ns, Clear: true, Meta: &Namespace{RunCounter: 9},
			Delete: []ReservationKey{{"s1", "k1"}},
			Upsert: rows(res(ns, "s5", "k5", "run_new", 5))}
	}
	withUpsert := func(b Batch, r Reservation) Batch { b.Upsert = append(b.Upsert, &r); return b }
	tests := []struct {
		name  string
		ctx   context.Context
		batch Batch
		is    error
		code  int    // the SQLite extended result code behind ErrConstraint
		msg   string // exact message, for errors raised before SQL
	}{
		{"empty key", nil, withUpsert(prefix("a"), res("a", "s", "", "run_x", 1)), ErrConstraint, sqlite3.SQLITE_CONSTRAINT_CHECK, ""},
		{"nil record", nil, withUpsert(prefix("a"), with(res("a", "s", "k", "run_x", 1), func(r *Reservation) { r.Record = nil })),
			ErrConstraint, sqlite3.SQLITE_CONSTRAINT_CHECK, ""},
		{"half a scope", nil, Batch{Namespace: "b", Upsert: rows(res("b", "s", "k", "run_x", 1)),
			Meta: &Namespace{ScopeProfile: "p"}}, ErrConstraint, sqlite3.SQLITE_CONSTRAINT_CHECK, ""},
		{"negative counter", nil, Batch{Namespace: "b", Clear: true, Meta: &Namespace{RunCounter: -1}},
			ErrConstraint, sqlite3.SQLITE_CONSTRAINT_CHECK, ""},
		{"canceled context", canceled, prefix("a"), context.Canceled, 0, ""},
		{"no namespace", nil, Batch{Meta: &Namespace{}}, ErrBatch, 0, "storage: apply: invalid batch: no namespace"},
		{"meta of another namespace", nil, Batch{Namespace: "a", Meta: &Namespace{Name: "b"}}, ErrBatch, 0,
			`storage: apply: invalid batch: meta of namespace "b" in a batch of "a"`},
		{"reservation of another namespace", nil, withUpsert(prefix("a"), res("b", "s", "k", "run_x", 1)), ErrBatch, 0,
			`storage: apply: invalid batch: reservation of namespace "b" in a batch of "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, _ := openFile(t)
			seed(t, db)
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			err := db.Apply(ctx, tt.batch)
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want %v", err, tt.is)
			}
			if tt.msg != "" && err.Error() != tt.msg {
				t.Errorf("err = %q, want %q", err, tt.msg)
			}
			if tt.code != 0 {
				var se *sqlite.Error
				if !errors.As(err, &se) || se.Code() != tt.code {
					t.Errorf("err = %v, want SQLite code %d", err, tt.code)
				}
				if !strings.HasPrefix(err.Error(), "storage: apply: ") {
					t.Errorf("err = %q, want prefix %q", err, "storage: apply: ")
				}
			}
			assertState(t, db, state{ns: seedNS, res: []Reservation{a1, a2, b1, b2}})
		})
	}
}

// Binary64 values come back bit for bit, from the open file and from disk
// after a reopen.
func TestFloatsExact(t *testing.T) {
	values := []float64{1700000000.125, 1700003600.001, 1700000000.1 + 0.2, 0.1, 5e-324, math.MaxFloat64, -1.5e-7, 0}
	for _, reopen := range []bool{true, false} {
		t.Run(fmt.Sprintf("reopen=%v", reopen), func(t *testing.T) {
			ctx := context.Background()
			db, path := openFile(t)
			var want []Reservation
			for i, v := range values {
				r := res("n", "s", fmt.Sprintf("k%02d", i), fmt.Sprintf("run_%02d", i), v)
				want = append(want, r)
				if err := db.Apply(ctx, Batch{Namespace: "n", Upsert: rows(r)}); err != nil {
					t.Fatal(err)
				}
			}
			clock := &Clock{Frozen: false, FrozenMs: 1700003600001.5, OffsetMs: -86400000.001}
			if err := db.SaveClock(ctx, *clock); err != nil {
				t.Fatal(err)
			}
			if reopen {
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				var err error
				if db, err = Open(path); err != nil {
					t.Fatal(err)
				}
				defer db.Close()
			}
			_, rs, got, err := db.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rs {
				if math.Float64bits(r.UpdatedAt) != math.Float64bits(values[i]) {
					t.Errorf("UpdatedAt[%d] = %v (%#x), want %v", i, r.UpdatedAt, math.Float64bits(r.UpdatedAt), values[i])
				}
			}
			if len(rs) != len(values) {
				t.Fatalf("%d reservations, want %d", len(rs), len(values))
			}
			if !reflect.DeepEqual(rs, want) {
				t.Errorf("reservations\n got %+v\nwant %+v", rs, want)
			}
			if *got != *clock {
				t.Errorf("clock = %+v, want %+v", *got, *clock)
			}
		})
	}
}

func TestSaveClockReplaces(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	for _, c := range []Clock{{Frozen: true, FrozenMs: 1}, {Frozen: false, OffsetMs: -2.5}} {
		if err := db.SaveClock(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	assertState(t, db, state{clock: &Clock{Frozen: false, OffsetMs: -2.5}})
}

// Concurrent Apply on one handle loses no update and never meets SQLITE_BUSY.
func TestConcurrentApply(t *testing.T) {
	db, _ := openFile(t)
	const workers, perWorker = 16, 40
	applyConcurrently(t, []*DB{db}, workers, perWorker)
}

// Two handles on one file (as two processes would be) contend for the write
// lock for real: immediate transactions plus busy_timeout make them wait, not
// fail. (The spec allows one instance per file; this exercises the locking.)
func TestConcurrentApplyTwoHandles(t *testing.T) {
	db, path := openFile(t)
	other, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	applyConcurrently(t, []*DB{db, other}, 8, 25)
}

func applyConcurrently(t *testing.T, dbs []*DB, workers, perWorker int) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db := dbs[w%len(dbs)]
			for i := range perWorker {
				key := fmt.Sprintf("w%02d-k%03d", w, i)
				err := db.Apply(ctx, Batch{Namespace: "default",
					Upsert: rows(res("default", "s", key, "run_"+key, float64(i)))})
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		var se *sqlite.Error
		if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY {
			t.Errorf("SQLITE_BUSY: %v", err)
		} else {
			t.Errorf("Apply: %v", err)
		}
	}
	for _, db := range dbs {
		var n int
		if err := db.x.Get(&n, "SELECT count(*) FROM reservations"); err != nil {
			t.Fatal(err)
		}
		if n != workers*perWorker {
			t.Errorf("reservations = %d, want %d", n, workers*perWorker)
		}
	}
}

// BenchmarkApplyUpsert measures one admission-like batch on a file database:
// the counter advanced and one reservation with a 1 KiB record written, committed
// in WAL with synchronous=NORMAL.
func BenchmarkApplyUpsert(b *testing.B) {
	db, _ := openFile(b)
	ctx := context.Background()
	record := []byte(`{"output":"` + strings.Repeat("x", 1000) + `"}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		key := fmt.Sprintf("k%d", i)
		err := db.Apply(ctx, Batch{Namespace: "default", Meta: &Namespace{RunCounter: int64(i + 1)},
			Upsert: rows(Reservation{Scope: "s", Key: key, Fingerprint: "fp", RunID: "run_" + key, OwnerScope: "s",
				Keyed: true, Local: true, Alive: true, Record: record, UpdatedAt: 1700000000.125})})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// rows is rs as a batch's Upsert takes them.
func rows(rs ...Reservation) []*Reservation {
	out := make([]*Reservation, len(rs))
	for i := range rs {
		out[i] = &rs[i]
	}
	return out
}

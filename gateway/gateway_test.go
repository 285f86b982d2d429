package gateway

import (
	"context"
	"database/sql"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

func newTestGateway(t *testing.T, path string) (*Gateway, *storage.DB) {
	t.Helper()
	db, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(db, Options{Wall: func() float64 { return 1700000000000 }})
	if err != nil {
		t.Fatal(err)
	}
	return g, db
}

// A panic inside a transaction (a bug) answers 500 and releases the lock.
func TestLockedRecoversPanic(t *testing.T) {
	g, db := newTestGateway(t, "")
	defer db.Close()
	defer g.Close()
	err := g.locked(func() *runs.Error { panic("boom") })
	if err == nil || err.Status != 500 || err.Message != "internal error: boom" {
		t.Fatalf("got %v", err)
	}
	if _, err := g.Admit(Main("default"), "", "", &runs.Submission{}); err != nil {
		t.Fatalf("lock not released: %v", err)
	}
}

// Transports expire at a sweep more than 300 s after creation, unsubscribed
// only; admissions out of clock order are still found (runs-api §11.2).
func TestExpireTransports(t *testing.T) {
	g, db := newTestGateway(t, "")
	defer db.Close()
	defer g.Close()
	ts := g.transports
	for _, c := range []struct {
		run     string
		created float64
	}{{"a", 100}, {"b", 200}, {"c", 50}, {"d", 400}} {
		ts.open(tkey{"ns", "main", c.run}, c.created)
	}
	ts.get(tkey{"ns", "main", "b"}).subs = 1
	g.expireTransports("ns", "main", 500) // 500-100 > 300 and 500-50 > 300; b is subscribed
	for run, want := range map[string]bool{"a": false, "b": true, "c": false, "d": true} {
		if got := ts.get(tkey{"ns", "main", run}) != nil; got != want {
			t.Errorf("transport %s exists = %v, want %v", run, got, want)
		}
	}
	g.expireTransports("ns", "main", 700) // exactly 300 after d: kept
	if ts.get(tkey{"ns", "main", "d"}) == nil {
		t.Error("d expired at exactly 300 s")
	}
}

// Id counters are stored as reserved high-water marks while running (the first
// admission reserves ids up to 1+counterBlock; the next ones write nothing), and
// exactly on Close (runs-api §10.4).
func TestCounterBlocks(t *testing.T) {
	path := t.TempDir() + "/g.db"
	g, db := newTestGateway(t, path)
	for range 3 {
		if _, err := g.Admit(Main("default"), "", "", &runs.Submission{}); err != nil {
			t.Fatal(err)
		}
	}
	g.q.wait(0, g.q.last())
	spaces, _, _, err := db.Load(context.Background())
	if err != nil || len(spaces) != 1 || spaces[0].RunCounter != 1+counterBlock {
		t.Fatalf("while running: %+v %v", spaces, err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	spaces, _, _, _ = db.Load(context.Background())
	if spaces[0].RunCounter != 3 {
		t.Fatalf("after Close: %+v", spaces)
	}
	db.Close()
}

// A failed write answers 500 to the request that made it, not to later ones,
// and the next transaction rewrites the store from memory (flusher, repair).
func TestFlushFailureAndRepair(t *testing.T) {
	path := t.TempDir() + "/g.db"
	g, db := newTestGateway(t, path)
	defer db.Close()
	defer g.Close()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TRIGGER boom BEFORE INSERT ON reservations BEGIN SELECT RAISE(ABORT, 'boom'); END`); err != nil {
		t.Fatal(err)
	}
	sub := &runs.Submission{}
	if _, err := g.Admit(Main("default"), "k", "fp", sub); err == nil || err.Status != 500 {
		t.Fatalf("keyed admission with a failing store: %v", err)
	}
	if _, err := raw.Exec(`DROP TRIGGER boom`); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Admit(Main("default"), "", "", sub); err != nil {
		t.Fatalf("the next request got the earlier failure: %v", err)
	}
	g.q.wait(0, g.q.last())
	spaces, res, _, err := db.Load(context.Background())
	if err != nil || len(res) != 1 || res[0].Key != "k" || spaces[0].RunCounter < 2 {
		t.Fatalf("store not repaired: %+v %+v %v", spaces, res, err)
	}
}

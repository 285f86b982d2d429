package gateway

import (
	"context"
	"database/sql"
	"strings"
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
// Untouched transports are queue entries only; touching one makes its
// *transport, destroying one leaves it gone.
func TestExpireTransports(t *testing.T) {
	g, db := newTestGateway(t, "")
	defer db.Close()
	defer g.Close()
	ts := g.transports
	storageNS := runs.StorageNS("ns")
	ids := map[string]string{}
	key := func(name string) tkey { return tkey{"ns", "main", ids[name]} }
	for i, c := range []struct {
		run     string
		created float64
	}{{"a", 100}, {"b", 200}, {"c", 50}, {"d", 400}, {"e", 450}} {
		n := int64(i + 1)
		ids[c.run] = runs.RunID(storageNS, n)
		nsI, ok := g.cat.admitted(storageNS, n)
		if !ok {
			t.Fatal("catalog refused a run")
		}
		ts.open(opening{key(c.run), nsI, n}, c.created)
	}
	if b := ts[bkey{"ns", "main"}]; len(b.m) != 0 || b.next-b.head != 5 || !b.unsorted {
		t.Fatalf("after opening: %d touched, %d in range, unsorted %v", len(b.m), b.next-b.head, b.unsorted)
	}
	ts.get(g.cat, key("b")).subs = 1
	g.deliver(key("e"), []byte("data: x\n\n"))
	if tr := ts.get(g.cat, key("e")); tr == nil || len(tr.frames) != 1 || tr.created != 450 {
		t.Fatalf("e after a frame = %+v", tr)
	}
	g.expireTransports("ns", "main", 500) // 500-100 > 300 and 500-50 > 300; b is subscribed
	for run, want := range map[string]bool{"a": false, "b": true, "c": false, "d": true, "e": true} {
		if got := ts.get(g.cat, key(run)) != nil; got != want {
			t.Errorf("transport %s exists = %v, want %v", run, got, want)
		}
	}
	g.expireTransports("ns", "main", 700) // exactly 300 after d: kept; b still subscribed
	if ts.get(g.cat, key("d")) == nil || ts.get(g.cat, key("b")) == nil {
		t.Error("d expired at exactly 300 s, or b under its subscriber")
	}
	tr := ts.get(g.cat, key("d"))
	ts.remove(g.cat, key("d"), tr) // a subscriber left: destroyed, not made again
	if ts.get(g.cat, key("d")) != nil {
		t.Error("d exists after its removal")
	}
	if ts.get(g.cat, tkey{"ns", "main", runs.RunID(storageNS, 6)}) != nil || ts.get(g.cat, tkey{"ns", "main", "run_x"}) != nil {
		t.Error("a transport for a run never admitted")
	}
	g.expireTransports("ns", "main", 1000)
	if b := ts[bkey{"ns", "main"}]; b.head != b.next || b.unsorted || len(b.m) != 1 || b.m[ids["b"]] == nil {
		t.Errorf("after all expired: %d in range (unsorted %v), touched %v", b.next-b.head, b.unsorted, b.m)
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
	db, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var heard []string
	g, err := New(db, Options{Wall: func() float64 { return 1700000000000 }, OnStorageError: func(err error) {
		heard = append(heard, err.Error())
	}})
	if err != nil {
		t.Fatal(err)
	}
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
	if len(heard) != 1 || !strings.Contains(heard[0], "boom") {
		t.Fatalf("OnStorageError heard %q", heard)
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

// The transport range releases its chunks as they expire, and a clock set
// backwards behind a destroyed transport still makes expiry scan the range
// (runs-api §11.2).
func TestTransportRange(t *testing.T) {
	g, db := newTestGateway(t, "")
	defer db.Close()
	defer g.Close()
	ts := g.transports
	storageNS := runs.StorageNS("r")
	open := func(n int64, created float64) tkey {
		k := tkey{"r", "main", runs.RunID(storageNS, n)}
		nsI, ok := g.cat.admitted(storageNS, n)
		if !ok {
			t.Fatal("catalog refused a run")
		}
		ts.open(opening{k, nsI, n}, created)
		return k
	}
	for n := int64(1); n <= 3*transportChunk; n++ {
		open(n, float64(n))
	}
	b := ts[bkey{"r", "main"}]
	if len(b.chunks) != 3 || b.unsorted {
		t.Fatalf("%d chunks, unsorted %v", len(b.chunks), b.unsorted)
	}
	g.expireTransports("r", "main", float64(transportChunk)+1+300) // 1 … transportChunk expire
	if len(b.chunks) != 2 || b.head != transportChunk+1 || b.first != transportChunk+1 {
		t.Fatalf("after expiry: %d chunks, head %d, first %d", len(b.chunks), b.head, b.first)
	}
	if ts.get(g.cat, tkey{"r", "main", runs.RunID(storageNS, transportChunk)}) != nil ||
		ts.get(g.cat, tkey{"r", "main", runs.RunID(storageNS, transportChunk+1)}) == nil {
		t.Fatal("expiry boundary")
	}

	// 100, 500, 600 (destroyed), 150: at 460, 100 and 150 expire and 500 stays.
	g.destroyTransports("r", "main", true)
	n0 := int64(3*transportChunk + 1)
	k100, k500, k600, k150 := open(n0, 100), open(n0+1, 500), open(n0+2, 600), open(n0+3, 150)
	ts.remove(g.cat, k600, ts.get(g.cat, k600))
	g.expireTransports("r", "main", 460)
	for k, want := range map[tkey]bool{k100: false, k500: true, k600: false, k150: false} {
		if got := ts.get(g.cat, k) != nil; got != want {
			t.Errorf("transport created at %v exists = %v, want %v", k, got, want)
		}
	}
}

package gateway

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// admitAt admits a keyless run on ns's main branch at wall time sec (the
// creation time of its transport) and returns its transport key.
func admitAt(t *testing.T, g *Gateway, wall *float64, ns string, sec float64) tkey {
	t.Helper()
	*wall = sec * 1000
	a, err := g.Admit(Main(ns), "", "", &runs.Submission{})
	if err != nil {
		t.Fatal(err)
	}
	return tkey{ns, "main", a.RunID}
}

func newClockGateway(t *testing.T) (*Gateway, *float64) {
	t.Helper()
	db, err := storage.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	wall := new(float64)
	g, err := New(db, Options{Wall: func() float64 { return *wall }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g, wall
}

// Transports expire at a sweep more than 300 s after creation, unsubscribed
// only; admissions out of clock order are still found (runs-api §11.2).
// Untouched transports cost nothing but their counter range; touching one
// makes its *transport, destroying one leaves it gone.
func TestExpireTransports(t *testing.T) {
	g, wall := newClockGateway(t)
	keys := map[string]tkey{}
	for _, c := range []struct {
		run     string
		created float64
	}{{"a", 100}, {"b", 200}, {"c", 50}, {"d", 400}, {"e", 450}} {
		keys[c.run] = admitAt(t, g, wall, "ns", c.created)
	}
	b := g.transports[bkey{"ns", "main"}]
	if len(b.m) != 0 || b.next-b.head != 5 || !b.unsorted {
		t.Fatalf("after opening: %d touched, %d in range, unsorted %v", len(b.m), b.next-b.head, b.unsorted)
	}
	g.transport(keys["b"]).subs = 1
	g.deliver(keys["e"], []byte("data: x\n\n"))
	if tr := g.transport(keys["e"]); tr == nil || len(tr.frames) != 1 || tr.created != 450 {
		t.Fatalf("e after a frame = %+v", tr)
	}
	g.expireTransports("ns", "main", 500) // 500-100 > 300 and 500-50 > 300; b is subscribed
	for run, want := range map[string]bool{"a": false, "b": true, "c": false, "d": true, "e": true} {
		if got := g.transport(keys[run]) != nil; got != want {
			t.Errorf("transport %s exists = %v, want %v", run, got, want)
		}
	}
	g.expireTransports("ns", "main", 700) // exactly 300 after d: kept; b still subscribed
	if g.transport(keys["d"]) == nil || g.transport(keys["b"]) == nil {
		t.Error("d expired at exactly 300 s, or b under its subscriber")
	}
	g.removeTransport(keys["d"], g.transport(keys["d"])) // a subscriber left: destroyed, not made again
	if g.transport(keys["d"]) != nil {
		t.Error("d exists after its removal")
	}
	if g.transport(tkey{"ns", "main", runs.RunID(runs.StorageNS("ns"), 6)}) != nil || g.transport(tkey{"ns", "main", "run_x"}) != nil {
		t.Error("a transport for a run never admitted")
	}
	g.expireTransports("ns", "main", 1000)
	if b.head != b.next || b.unsorted || len(b.gone) != 0 || len(b.m) != 1 || b.m[keys["b"].run] == nil {
		t.Errorf("after all expired: %d in range (unsorted %v, gone %v), touched %v", b.next-b.head, b.unsorted, b.gone, b.m)
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

// Many transports cost their range only; a clock set backwards behind a
// destroyed transport still makes expiry scan the range (runs-api §11.2).
func TestTransportRange(t *testing.T) {
	g, wall := newClockGateway(t)
	var keys []tkey
	for i := range 10000 {
		keys = append(keys, admitAt(t, g, wall, "r", float64(1000+i)))
	}
	b := g.transports[bkey{"r", "main"}]
	if b.unsorted || len(b.m) != 0 || b.next-b.head != 10000 {
		t.Fatalf("unsorted %v, %d touched, %d in range", b.unsorted, len(b.m), b.next-b.head)
	}
	g.expireTransports("r", "main", 1000+4999+300.5) // 0 … 4999 expire
	if b.next-b.head != 5000 || g.transport(keys[4999]) != nil || g.transport(keys[5000]) == nil {
		t.Fatalf("after expiry: %d in range", b.next-b.head)
	}

	// 100, 500, 600 (destroyed), 150: at 460, 100 and 150 expire and 500 stays.
	g.destroyTransports("r", "main", true)
	k100, k500, k600, k150 := admitAt(t, g, wall, "r", 100), admitAt(t, g, wall, "r", 500), admitAt(t, g, wall, "r", 600), admitAt(t, g, wall, "r", 150)
	g.removeTransport(k600, g.transport(k600))
	g.expireTransports("r", "main", 460)
	for k, want := range map[tkey]bool{k100: false, k500: true, k600: false, k150: false} {
		if got := g.transport(k) != nil; got != want {
			t.Errorf("transport %v exists = %v, want %v", k, got, want)
		}
	}
}

// A run the catalog cannot hold (a counter beyond 32 bits) keeps a transport
// outside the counter range, which still expires (review finding 3;
// runs-api §11.2).
func TestTransportOutsideCatalogExpires(t *testing.T) {
	g, wall := newClockGateway(t)
	*wall = 1700000000000
	g.mu.Lock()
	g.space("default").branches["main"].st.runCounter = 1 << 32
	g.mu.Unlock()
	a, err := g.Admit(Main("default"), "", "", &runs.Submission{})
	if err != nil {
		t.Fatal(err)
	}
	k := tkey{"default", "main", a.RunID}
	if tr := g.transport(k); tr == nil || !tr.alone {
		t.Fatalf("transport of run 2^32+1 = %+v", tr)
	}
	if _, err := g.Get(Main("default"), a.RunID); err != nil {
		t.Fatalf("Get(run 2^32+1) = %v", err)
	}
	g.expireTransports("default", "main", 1700000000+300)
	if g.transport(k) == nil {
		t.Fatal("expired at exactly 300 s")
	}
	g.expireTransports("default", "main", 1700000000+300.5)
	if g.transport(k) != nil {
		t.Fatal("still there after 300.5 s")
	}
}

// In memory no request waits for the mirror unless more than maxBehind batches
// wait to be written.
func TestFlusherBehind(t *testing.T) {
	for _, c := range []struct {
		enq, done uint64
		want      bool
	}{{0, 0, false}, {maxBehind, 0, false}, {maxBehind + 1, 0, true}, {maxBehind + 10, 10, false}, {maxBehind + 11, 10, true}} {
		f := &flusher{enq: c.enq, done: c.done}
		if got := f.behind(); got != c.want {
			t.Errorf("enq %d done %d: behind = %v, want %v", c.enq, c.done, got, c.want)
		}
	}
}

// In memory the flusher lets batches gather (gatherInMemory) before each
// transaction: over a stretch of T, at most T/gather + 1 transactions begin,
// however many batches come (without gathering, 200 batches ~1 ms apart took
// 199); with a file nothing waits.
func TestFlusherGathersInMemory(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "db.sqlite")} {
		db, err := storage.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		f := newFlusher(db, nil)
		if want := map[bool]time.Duration{true: gatherInMemory, false: 0}[path == ""]; f.gather != want {
			t.Errorf("db %q: gather = %v, want %v", path, f.gather, want)
		}
		if path != "" {
			f.close()
			db.Close()
			continue
		}
		start := time.Now()
		for i := range 200 {
			time.Sleep(50 * time.Microsecond)
			f.enqueue(storage.Batch{Namespace: "default", Upsert: []storage.Reservation{{Scope: "s", Key: fmt.Sprint("k", i),
				Fingerprint: "fp", RunID: fmt.Sprint("run_", i), RunN: int64(i + 1), OwnerScope: "s", Keyed: true, Record: []byte("{}"), UpdatedAt: 1}}})
		}
		elapsed := time.Since(start)
		f.mu.Lock()
		writes := f.writes
		f.mu.Unlock()
		f.close()
		if limit := int(elapsed/gatherInMemory) + 1; writes > limit {
			t.Errorf("200 batches in %v written in %d transactions, want at most %d", elapsed, writes, limit)
		}
		_, rs, _, err := db.Load(context.Background())
		if err != nil || len(rs) != 200 {
			t.Errorf("Load: %d reservations, %v; want 200", len(rs), err)
		}
		db.Close()
	}
}

// Two runs of namespace default share a run id (counters n1 < n2,
// TestCatalogCollision): the newer answers for it, before a real restart and
// after it, whatever order the store gives their keys (review finding: it
// answered with the key that sorts last).
func TestRealRestartKeepsTheNewestRunOfAnID(t *testing.T) {
	n1, n2 := collidingCounters()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	wall := 1700000000000.0
	open := func() (*Gateway, *storage.DB) {
		db, err := storage.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		g, err := New(db, Options{Wall: func() float64 { return wall }})
		if err != nil {
			t.Fatal(err)
		}
		return g, db
	}
	g, db := open()
	setCounter := func(n int64) {
		g.mu.Lock()
		g.space("default").branches["main"].st.runCounter = n
		g.mu.Unlock()
	}
	setCounter(n1 - 1)
	a1, err := g.Admit(Main("default"), "z-older", "fp", &runs.Submission{})
	if err != nil {
		t.Fatal(err)
	}
	wall += 5000
	setCounter(n2 - 1)
	a2, err := g.Admit(Main("default"), "a-newer", "fp", &runs.Submission{})
	if err != nil {
		t.Fatal(err)
	}
	if a1.RunID != a2.RunID {
		t.Fatalf("ids differ: %s %s", a1.RunID, a2.RunID)
	}
	newer := `"created_at":1700000005.0`
	before, gerr := g.Get(Main("default"), a2.RunID)
	if gerr != nil || !strings.Contains(string(before), newer) {
		t.Fatalf("before restart: %s %v (want the newer run)", before, gerr)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	g, db = open()
	defer db.Close()
	defer g.Close()
	after, gerr := g.Get(Main("default"), a2.RunID)
	if gerr != nil || !strings.Contains(string(after), newer) {
		t.Fatalf("after a real restart %s answers with the older run:\n%s\n(before: %s)", a2.RunID, after, before)
	}
}

// A replay of a key whose run id is answered for by a newer run of another
// scope (ids repeat, runs-api §12.1) answers with its reservation's own status
// (review finding: hydration failed there and the replay panicked into a 500).
func TestReplayOfAShadowedRun(t *testing.T) {
	n1, n2 := collidingCounters()
	g, db := newTestGateway(t, "")
	defer db.Close()
	defer g.Close()
	setCounter := func(n int64) {
		g.mu.Lock()
		g.space("default").branches["main"].st.runCounter = n
		g.mu.Unlock()
	}
	sub := &runs.Submission{}
	setCounter(n1 - 1)
	a1, err := g.Admit(Main("default"), "k1", "fp", sub)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetScope("default", "p", "i"); err != nil {
		t.Fatal(err)
	}
	setCounter(n2 - 1)
	if a2, err := g.Admit(Main("default"), "k2", "fp", sub); err != nil || a2.RunID != a1.RunID {
		t.Fatalf("second admission: %+v %v (want the id %s)", a2, err, a1.RunID)
	}
	if err := g.SetScope("default", "", ""); err != nil {
		t.Fatal(err)
	}
	a, err := g.Admit(Main("default"), "k1", "fp", sub)
	if err != nil || a != (Admission{RunID: a1.RunID, Status: runs.Queued, Replayed: true}) {
		t.Fatalf("replay of k1 = %+v, %v; want %s queued replayed", a, err, a1.RunID)
	}
}

// The flusher renders the durable record of a plain keyed admission (the row
// leaves the gateway without it): the store holds the sorted admission record.
func TestPlainReservationRecordIsStored(t *testing.T) {
	g, db := newTestGateway(t, filepath.Join(t.TempDir(), "db.sqlite"))
	defer db.Close()
	defer g.Close()
	a, err := g.Admit(Main("default"), "k", "fp", &runs.Submission{})
	if err != nil {
		t.Fatal(err)
	}
	_, res, _, lerr := db.Load(context.Background())
	if lerr != nil || len(res) != 1 {
		t.Fatalf("load: %+v %v", res, lerr)
	}
	want := `{"created_at":1700000000.0,"model":"hermes-agent","object":"hermes.run","run_id":"` + a.RunID +
		`","session_id":"` + a.RunID + `","status":"queued","updated_at":1700000000.0}`
	if string(res[0].Record) != want || res[0].RunN != 1 {
		t.Fatalf("stored record %s (run %d), want %s (run 1)", res[0].Record, res[0].RunN, want)
	}
}

package gateway

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
	"github.com/hermes-emulator/hermes-emulator/transport"
)

// openStore opens a file store at path, or a memory one for "".
func openStore(t testing.TB, path string) storage.Store {
	t.Helper()
	if path == "" {
		return storage.NewMemory()
	}
	db, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// loadAll reads everything the store holds.
func loadAll(t testing.TB, db storage.Store) ([]storage.Namespace, []storage.Reservation) {
	t.Helper()
	spaces, _, err := db.LoadMeta(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var res []storage.Reservation
	for _, ns := range spaces {
		rs, err := db.Reservations(context.Background(), ns.Name)
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, rs...)
	}
	return spaces, res
}

func newTestGateway(t *testing.T, path string) (*Gateway, storage.Store) {
	t.Helper()
	db := openStore(t, path)
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
	if _, err := g.Create(Main("default"), Creation{Sub: &runs.Submission{}}); err != nil {
		t.Fatalf("lock not released: %v", err)
	}
}

// admitAt admits a keyless run on ns's main branch at wall time sec (the
// creation time of its transport) and returns its transport key.
func admitAt(t *testing.T, g *Gateway, wall *float64, ns string, sec float64) transport.Key {
	t.Helper()
	*wall = sec * 1000
	a, err := g.Create(Main(ns), Creation{Sub: &runs.Submission{}})
	if err != nil {
		t.Fatal(err)
	}
	return transport.Key{NS: ns, Branch: "main", Run: a.RunID}
}

func newClockGateway(t *testing.T) (*Gateway, *float64) {
	t.Helper()
	db := storage.NewMemory()
	wall := new(float64)
	g, err := New(db, Options{Wall: func() float64 { return *wall }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g, wall
}

// An admission opens its run's transport, created at the admission time:
// transports expire at a sweep more than 300 s after it, unsubscribed only,
// whatever the order of their creation times (runs-api §11.2). The Set's own
// rules are tested in package transport.
func TestExpireTransports(t *testing.T) {
	g, wall := newClockGateway(t)
	keys := map[string]transport.Key{}
	for _, c := range []struct {
		run     string
		created float64
	}{{"a", 100}, {"b", 200}, {"c", 50}, {"d", 400}, {"e", 450}} {
		keys[c.run] = admitAt(t, g, wall, "ns", c.created)
	}
	sub, ok := g.transports.Subscribe(context.Background(), keys["b"], false)
	if !ok {
		t.Fatal("b has no transport")
	}
	defer sub.Close()
	g.transports.Deliver(keys["e"], []byte("data: x\n\n"))
	if st := g.transports.Stat(keys["e"]); st.Buffered != 1 {
		t.Fatalf("e after a frame = %+v", st)
	}
	g.transports.Expire("ns", "main", 500) // 500-100 > 300 and 500-50 > 300; b is subscribed
	for run, want := range map[string]bool{"a": false, "b": true, "c": false, "d": true, "e": true} {
		if got := g.transports.Has(keys[run]); got != want {
			t.Errorf("transport %s exists = %v, want %v", run, got, want)
		}
	}
	g.transports.Expire("ns", "main", 750) // exactly 300 after e: kept; b still subscribed
	if g.transports.Has(keys["d"]) || !g.transports.Has(keys["e"]) || !g.transports.Has(keys["b"]) {
		t.Error("d kept at 350 s, e expired at exactly 300 s, or b expired under its subscriber")
	}
	if g.transports.Has(transport.Key{NS: "ns", Branch: "main", Run: runs.RunID(runs.StorageNS("ns"), 6)}) ||
		g.transports.Has(transport.Key{NS: "ns", Branch: "main", Run: "run_x"}) {
		t.Error("a transport for a run never admitted")
	}
	if err := g.checkTransports(); err != nil {
		t.Fatal(err)
	}
}

// A run with a counter beyond 32 bits is a run like any other: found, and its
// transport expires (review finding 3 of the compact layout; runs-api §11.2).
func TestLargeCounter(t *testing.T) {
	g, wall := newClockGateway(t)
	*wall = 1700000000000
	g.mu.Lock()
	g.spaces["default"] = newNamespace("default")
	g.spaces["default"].branches["main"].st.RunCounter = 1 << 32
	g.mu.Unlock()
	a, err := g.Create(Main("default"), Creation{Sub: &runs.Submission{}})
	if err != nil {
		t.Fatal(err)
	}
	if a.RunID != runs.RunID("hermes", 1<<32+1) {
		t.Fatalf("run id %s", a.RunID)
	}
	if _, err := g.Get(Main("default"), a.RunID); err != nil {
		t.Fatalf("Get(run 2^32+1) = %v", err)
	}
	k := transport.Key{NS: "default", Branch: "main", Run: a.RunID}
	g.transports.Expire("default", "main", 1700000000+300)
	if !g.transports.Has(k) {
		t.Fatal("expired at exactly 300 s")
	}
	g.transports.Expire("default", "main", 1700000000+300.5)
	if g.transports.Has(k) {
		t.Fatal("still there after 300.5 s")
	}
}

// Id counters are stored as reserved high-water marks while running (the first
// admission reserves ids up to 1+runs.CounterBlock; the next ones write nothing), and
// exactly on Close (runs-api §10.4).
func TestCounterBlocks(t *testing.T) {
	path := t.TempDir() + "/g.db"
	g, db := newTestGateway(t, path)
	for range 3 {
		if _, err := g.Create(Main("default"), Creation{Sub: &runs.Submission{}}); err != nil {
			t.Fatal(err)
		}
	}
	g.q.Wait(0, g.q.Last())
	spaces, _ := loadAll(t, db)
	if len(spaces) != 1 || spaces[0].RunCounter != 1+runs.CounterBlock {
		t.Fatalf("while running: %+v", spaces)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	spaces, _ = loadAll(t, db)
	if spaces[0].RunCounter != 3 {
		t.Fatalf("after Close: %+v", spaces)
	}
	db.Close()
}

// A failed write answers 500 to the request that made it, not to later ones,
// and the next transaction rewrites the store from memory (storage.Writer, repair).
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
	if _, err := g.Create(Main("default"), Creation{Key: "k", Fingerprint: "fp", Sub: sub}); err == nil || err.Status != 500 {
		t.Fatalf("keyed admission with a failing store: %v", err)
	}
	if len(heard) != 1 || !strings.Contains(heard[0], "boom") {
		t.Fatalf("OnStorageError heard %q", heard)
	}
	if _, err := raw.Exec(`DROP TRIGGER boom`); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Create(Main("default"), Creation{Sub: sub}); err != nil {
		t.Fatalf("the next request got the earlier failure: %v", err)
	}
	g.q.Wait(0, g.q.Last())
	spaces, res := loadAll(t, db)
	if len(res) != 1 || res[0].Key != "k" || spaces[0].RunCounter < 2 {
		t.Fatalf("store not repaired: %+v %+v", spaces, res)
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
	open := func() (*Gateway, storage.Store) {
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
		ns, _ := g.create("default")
		ns.branches["main"].st.RunCounter = n
		g.mu.Unlock()
	}
	setCounter(n1 - 1)
	a1, err := g.Create(Main("default"), Creation{Key: "z-older", Fingerprint: "fp", Sub: &runs.Submission{}})
	if err != nil {
		t.Fatal(err)
	}
	wall += 5000
	setCounter(n2 - 1)
	a2, err := g.Create(Main("default"), Creation{Key: "a-newer", Fingerprint: "fp", Sub: &runs.Submission{}})
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
		ns, _ := g.create("default")
		ns.branches["main"].st.RunCounter = n
		g.mu.Unlock()
	}
	sub := &runs.Submission{}
	setCounter(n1 - 1)
	a1, err := g.Create(Main("default"), Creation{Key: "k1", Fingerprint: "fp", Sub: sub})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetScope("default", "p", "i"); err != nil {
		t.Fatal(err)
	}
	setCounter(n2 - 1)
	if a2, err := g.Create(Main("default"), Creation{Key: "k2", Fingerprint: "fp", Sub: sub}); err != nil || a2.RunID != a1.RunID {
		t.Fatalf("second admission: %+v %v (want the id %s)", a2, err, a1.RunID)
	}
	if err := g.SetScope("default", "", ""); err != nil {
		t.Fatal(err)
	}
	a, err := g.Create(Main("default"), Creation{Key: "k1", Fingerprint: "fp", Sub: sub})
	if err != nil || a != (Admission{RunID: a1.RunID, Status: runs.Queued, Replayed: true}) {
		t.Fatalf("replay of k1 = %+v, %v; want %s queued replayed", a, err, a1.RunID)
	}
}

// A keyed admission stores the sorted admission record as its durable copy in
// the SQLite file, and so do a persisted change and the stale-owner
// interruption (runs-api §4.2 rule 3).
func TestPlainReservationRecordIsStored(t *testing.T) {
	g, db := newTestGateway(t, filepath.Join(t.TempDir(), "db.sqlite"))
	defer db.Close()
	defer g.Close()
	a, err := g.Create(Main("default"), Creation{Key: "k", Fingerprint: "fp", Sub: &runs.Submission{}})
	if err != nil {
		t.Fatal(err)
	}
	g.q.Wait(0, g.q.Last())
	_, res := loadAll(t, db)
	if len(res) != 1 {
		t.Fatalf("load: %+v", res)
	}
	want := `{"created_at":1700000000.0,"model":"hermes-agent","object":"hermes.run","run_id":"` + a.RunID +
		`","session_id":"` + a.RunID + `","status":"queued","updated_at":1700000000.0}`
	if string(res[0].Record) != want || res[0].RunN != 1 {
		t.Fatalf("stored record %s (run %d), want %s (run 1)", res[0].Record, res[0].RunN, want)
	}

	// A persisted change (stop), then the stale-owner interruption that
	// hydration after a stale restart makes: the file keeps the sorted copy.
	stored := func() string {
		t.Helper()
		g.q.Wait(0, g.q.Last())
		_, res := loadAll(t, db)
		if len(res) != 1 {
			t.Fatalf("load: %+v", res)
		}
		return string(res[0].Record)
	}
	if _, err := g.Stop(Main("default"), a.RunID); err != nil {
		t.Fatal(err)
	}
	want = `{"created_at":1700000000.0,"last_event":"run.stopping","model":"hermes-agent","object":"hermes.run","run_id":"` + a.RunID +
		`","session_id":"` + a.RunID + `","status":"stopping","updated_at":1700000000.0}`
	if got := stored(); got != want {
		t.Fatalf("after stop: stored record %s, want %s", got, want)
	}
	if _, err := g.Restart("default", false); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Get(Main("default"), a.RunID); err != nil {
		t.Fatal(err)
	}
	want = `{"created_at":1700000000.0,"error":"The gateway restarted before this run settled.","last_event":"run.interrupted",` +
		`"model":"hermes-agent","object":"hermes.run","run_id":"` + a.RunID + `","session_id":"` + a.RunID +
		`","status":"interrupted","updated_at":1700000000.0}`
	if got := stored(); got != want {
		t.Fatalf("after the interruption: stored record %s, want %s", got, want)
	}
}

// collidingCounters are two counters of storage namespace "hermes" whose run
// ids are one string (runs-api §12.1: ids are a 32-bit hash of the counter).
func collidingCounters() (n1, n2 int64) {
	n1, n2 = 139463, 1002500
	if runs.RunID("hermes", n1) != runs.RunID("hermes", n2) {
		panic("counters do not collide")
	}
	return n1, n2
}

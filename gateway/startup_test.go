package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// countingStore counts the reservation reads of a store, and the batches
// written that change a namespace.
type countingStore struct {
	storage.Store
	reads, writes int
}

// restartedWithKeyed is an in-memory store that a gateway left with n keyed
// runs (keys k0…), counted from now on, and the runs' ids: a gateway opened on
// it performs a real restart.
func restartedWithKeyed(t *testing.T, n int) (*countingStore, []string) {
	t.Helper()
	mem := storage.NewMemory()
	g := openAt(t, mem, func() float64 { return 1700000000000 })
	var ids []string
	for i := range n {
		a, err := g.Create(Main("default"), Creation{Key: fmt.Sprint("k", i), Fingerprint: "fp", Sub: &runs.Submission{}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.RunID)
	}
	g.Close()
	return &countingStore{Store: mem}, ids
}

func (c *countingStore) Apply(ctx context.Context, bs ...storage.Batch) error {
	for _, b := range bs {
		if b.Touches() {
			c.writes++
		}
	}
	return c.Store.Apply(ctx, bs...)
}

func (c *countingStore) Reservation(ctx context.Context, ns, scope, key string) (storage.Reservation, bool, error) {
	c.reads++
	return c.Store.Reservation(ctx, ns, scope, key)
}

func (c *countingStore) ReservationsOfRun(ctx context.Context, ns, id string) ([]storage.Reservation, error) {
	c.reads++
	return c.Store.ReservationsOfRun(ctx, ns, id)
}

func (c *countingStore) Reservations(ctx context.Context, ns string) ([]storage.Reservation, error) {
	c.reads += 1000
	return c.Store.Reservations(ctx, ns)
}

// A logical restart after a real one reads nothing of the file and writes
// nothing to it (runs-api §10.3): the rows not read yet stay unread and are
// read with the new owner — alive: the queued run stays queued and is not
// active here; stale: the next one is interrupted on its first read. Before,
// the restart read every row of the namespace into memory and rewrote every
// stored owner.
func TestRestartControlAfterRestartReadsNothing(t *testing.T) {
	store, ids := restartedWithKeyed(t, 3)
	g := openAt(t, store, func() float64 { return 1700000001000 })
	defer g.Close()
	for _, alive := range []bool{true, false} {
		if r, err := g.Restart("default", alive); err != nil || r != (Restarted{Retained: 3}) || store.reads != 0 || store.writes != 0 {
			t.Fatalf("restart (alive %v): %+v %v; %d reads, %d writes", alive, r, err, store.reads, store.writes)
		}
		if alive {
			if body, err := g.Get(Main("default"), ids[0]); err != nil || !strings.Contains(string(body), `"status":"queued"`) {
				t.Fatalf("GET after the alive restart: %s %v", body, err)
			}
			if _, err := g.Stop(Main("default"), ids[0]); err == nil || err.Code != "run_not_active" {
				t.Fatalf("stop after the alive restart: %+v, want run_not_active", err)
			}
			if page, _, err := g.Runs("default", "", 0, ""); err != nil || len(page) != 3 || !page[1].OwnerAlive || page[1].OwnerLocal {
				t.Fatalf("listing after the alive restart: %+v %v", page, err)
			}
			store.reads = 0
		}
	}
	if body, err := g.Get(Main("default"), ids[1]); err != nil || !strings.Contains(string(body), `"status":"interrupted"`) {
		t.Fatalf("GET after the stale restart: %s %v", body, err)
	}
	// The run view names the keys of the rows not read yet too (it named
	// none after a real restart).
	if v, err := g.RunView("default", ids[2]); err != nil || !slices.Equal(v.ReservationKeys, []string{"k2"}) || v.OwnerAlive {
		t.Fatalf("run view after the restarts: %+v %v", v, err)
	}
}

// A restart reads no reservation: each is read when first asked for, once
// (issue 17 item 2); the stale restart shows in what is read.
func TestStartupReadsNoReservation(t *testing.T) {
	store, ids := restartedWithKeyed(t, 50)
	g := openAt(t, store, func() float64 { return 1700000001000 })
	defer g.Close()
	if store.reads != 0 {
		t.Fatalf("start-up read %d reservations", store.reads)
	}
	if cp, err := g.CommitCheckpoint("default", "main"); err != nil || cp.Records != 50+1 {
		t.Fatalf("checkpoint %+v %v (want 50 reservations and the sweep schedule)", cp, err)
	}
	body, gerr := g.Get(Main("default"), ids[7])
	if gerr != nil || !strings.Contains(string(body), `"status":"interrupted"`) {
		t.Fatalf("Get after the restart: %s %v", body, gerr)
	}
	a, aerr := g.Create(Main("default"), Creation{Key: "k9", Fingerprint: "fp", Sub: &runs.Submission{}})
	if aerr != nil || !a.Replayed || a.RunID != ids[9] || a.Status != runs.Interrupted {
		t.Fatalf("replay after the restart: %+v %v", a, aerr)
	}
	if _, err := g.Get(Main("default"), ids[7]); err != nil {
		t.Fatal(err)
	}
	// ids[7]: its rows by run id; ids[9]: its row by key, then by run id.
	if store.reads != 3 {
		t.Fatalf("%d reads for two runs, want 3", store.reads)
	}
	// A run changed again and again asks for its rows once: every observe
	// looks up the run's reservation.
	n, _ := g.Create(Main("default"), Creation{Sub: &runs.Submission{}})
	for _, st := range []string{runs.Running, runs.Running, runs.Completed} {
		if _, err := g.Observe("default", n.RunID, runs.ObjectValue(&runs.Obj{Keys: []string{"status"}, Vals: []runs.Value{runs.StringValue(st)}}), true); err != nil {
			t.Fatal(err)
		}
	}
	if store.reads != 4 {
		t.Fatalf("%d reads after three observes of a new run, want 4", store.reads)
	}
}

// failingStore fails every read of all of a namespace's reservations.
type failingStore struct{ storage.Store }

func (failingStore) Reservations(context.Context, string) ([]storage.Reservation, error) {
	return nil, fmt.Errorf("storage: read: disk I/O error")
}

// A store read that fails under the lock answers 500 and releases the lock,
// in the timeline operations as in the vendor ones: a checkout of main after a
// restart reads every start-up row (to rewrite the durable copy) and fails.
func TestFailedReadAnswers500(t *testing.T) {
	mem := storage.NewMemory()
	g := openAt(t, mem, func() float64 { return 1700000000000 })
	if _, err := g.Create(Main("default"), Creation{Key: "k", Fingerprint: "fp", Sub: &runs.Submission{}}); err != nil {
		t.Fatal(err)
	}
	g.Close()
	g = openAt(t, failingStore{mem}, func() float64 { return 1700000001000 })
	defer g.Close()
	cp, cerr := g.CommitCheckpoint("default", "main")
	if cerr != nil {
		t.Fatal(cerr)
	}
	want := runs.Storage(fmt.Errorf("storage: read: disk I/O error"))
	if err := g.Checkout("default", "main", cp.ID); err == nil || err.Status != want.Status || err.Message != want.Message {
		t.Fatalf("checkout = %+v, want %+v", err, want)
	}
	if ns := g.Namespaces(); len(ns) != 1 { // the lock was released
		t.Fatalf("namespaces %v", ns)
	}
}

// After a real restart, a keyed admission prunes every expired terminal
// reservation of the namespace (runs-api §11.3), also the start-up rows not
// read yet: the completed run is gone for GET (404, as after a logical
// restart), the restart counts one reservation, its key admits a new run, and
// after the next start-up the file holds the two new rows (the prune marked
// the old one: storage.Expiry).
// Before, only rows already read were pruned: GET answered 200 and restart
// retained 2.
func TestPruneAfterRestartReachesUnreadRows(t *testing.T) {
	mem := storage.NewMemory()
	wall := 1700000000000.0
	g := openAt(t, mem, func() float64 { return wall })
	old, cerr := g.Create(Main("default"), Creation{Key: "old", Fingerprint: "fp", Sub: &runs.Submission{}})
	if cerr != nil {
		t.Fatal(cerr)
	}
	done := runs.ObjectValue(&runs.Obj{Keys: []string{"status"}, Vals: []runs.Value{runs.StringValue(runs.Completed)}})
	if _, err := g.Observe("default", old.RunID, done, true); err != nil {
		t.Fatal(err)
	}
	g.Close()
	wall += 86401000
	g = openAt(t, mem, func() float64 { return wall })
	if _, err := g.Create(Main("default"), Creation{Key: "new", Fingerprint: "fp", Sub: &runs.Submission{}}); err != nil {
		t.Fatal(err)
	}
	if body, gerr := g.Get(Main("default"), old.RunID); gerr == nil || gerr.Status != 404 {
		t.Fatalf("GET of the pruned run: %s %+v, want 404", body, gerr)
	}
	if r, rerr := g.Restart("default", false); rerr != nil || r.Retained != 1 {
		t.Fatalf("restart %+v %v, want 1 retained", r, rerr)
	}
	// The pruned key admits a new run: it never answers a replay.
	if a, err := g.Create(Main("default"), Creation{Key: "old", Fingerprint: "fp", Sub: &runs.Submission{}}); err != nil || a.Replayed || a.RunID == old.RunID {
		t.Fatalf("the pruned key: %+v %v, want a new run", a, err)
	}
	g.Close()
	g = openAt(t, mem, func() float64 { return wall })
	defer g.Close()
	if n, _ := mem.CountReservations(context.Background(), "default"); n != 2 {
		t.Fatalf("the store holds %d reservations, want 2", n)
	}
	if body, gerr := g.Get(Main("default"), old.RunID); gerr == nil || gerr.Status != 404 {
		t.Fatalf("GET of the pruned run after the next start-up: %s %+v, want 404", body, gerr)
	}
}

// After a real restart the control plane lists the file's keyed runs before
// anything read them (start-up reads none), each once — also after one was
// hydrated by a GET and beside a run admitted since — as after a logical
// restart; the keyless run is gone with the cache.
func TestListingAfterRestartShowsTheFilesRuns(t *testing.T) {
	mem := storage.NewMemory()
	wall := 1700000000000.0
	g := openAt(t, mem, func() float64 { return wall })
	var ids []string
	for _, key := range []string{"a", "b", ""} {
		a, cerr := g.Create(Main("default"), Creation{Key: key, Fingerprint: "fp", Sub: &runs.Submission{}})
		if cerr != nil {
			t.Fatal(cerr)
		}
		ids = append(ids, a.RunID)
		wall += 1000
	}
	done := runs.ObjectValue(&runs.Obj{Keys: []string{"status"}, Vals: []runs.Value{runs.StringValue(runs.Completed)}})
	if _, err := g.Observe("default", ids[1], done, true); err != nil {
		t.Fatal(err)
	}
	g.Close()
	g = openAt(t, mem, func() float64 { return wall })
	defer g.Close()
	list := func() string {
		page, _, lerr := g.Runs("default", "", 0, "")
		if lerr != nil {
			t.Fatal(lerr)
		}
		var out []string
		for _, s := range page {
			out = append(out, s.ID+" "+s.Status)
		}
		return strings.Join(out, ", ")
	}
	want := ids[1] + " completed, " + ids[0] + " queued"
	if got := list(); got != want {
		t.Fatalf("after the restart: %s, want %s", got, want)
	}
	if _, gerr := g.Get(Main("default"), ids[0]); gerr != nil { // hydrated: interrupted
		t.Fatal(gerr)
	}
	c, cerr := g.Create(Main("default"), Creation{Key: "c", Fingerprint: "fp", Sub: &runs.Submission{}})
	if cerr != nil {
		t.Fatal(cerr)
	}
	want = c.RunID + " queued, " + ids[1] + " completed, " + ids[0] + " interrupted"
	if got := list(); got != want {
		t.Fatalf("after a GET and an admission: %s, want %s", got, want)
	}
}

// failingWrites is a file store whose every write fails.
type failingWrites struct{ storage.Store }

func (failingWrites) Path() string { return "x.db" }

func (failingWrites) Apply(context.Context, ...storage.Batch) error {
	return fmt.Errorf("storage: apply: disk full")
}

// A checkpoint or snapshot that creates a namespace answers once the
// namespace's row is written, as every other change does with --db: a failed
// write answers 500 instead of a 201 for a namespace a restart would not know.
func TestCheckpointWaitsForTheNamespaceRow(t *testing.T) {
	g := openAt(t, failingWrites{storage.NewMemory()}, func() float64 { return 1700000000000 })
	defer g.Close()
	want := runs.Storage(fmt.Errorf("storage: apply: disk full"))
	if _, err := g.CommitCheckpoint("a", "main"); err == nil || err.Status != want.Status || err.Message != want.Message {
		t.Fatalf("checkpoint = %+v, want %+v", err, want)
	}
	if _, _, err := g.Snapshot("b"); err == nil || err.Status != want.Status || err.Message != want.Message {
		t.Fatalf("snapshot = %+v, want %+v", err, want)
	}
}

// slowListing is a store whose read of all a namespace's rows waits for
// release once entered is closed.
type slowListing struct {
	storage.Store
	entered, release chan struct{}
}

func (s slowListing) Reservations(ctx context.Context, ns string) ([]storage.Reservation, error) {
	close(s.entered)
	<-s.release
	return s.Store.Reservations(ctx, ns)
}

// The listing reads the file's rows without the gateway's lock: a change made
// while the read is slow goes through, and the listing still shows the file's
// run and the new one.
func TestListingReadsTheFileWithoutTheLock(t *testing.T) {
	mem := storage.NewMemory()
	wall := 1700000000000.0
	g := openAt(t, mem, func() float64 { return wall })
	old, cerr := g.Create(Main("default"), Creation{Key: "a", Fingerprint: "fp", Sub: &runs.Submission{}})
	if cerr != nil {
		t.Fatal(cerr)
	}
	g.Close()
	store := slowListing{mem, make(chan struct{}), make(chan struct{})}
	g = openAt(t, store, func() float64 { return wall + 1000 })
	defer g.Close()
	listed := make(chan []RunSummary)
	go func() {
		page, _, _ := g.Runs("default", "", 0, "")
		listed <- page
	}()
	<-store.entered
	made := make(chan Admission)
	go func() {
		a, _ := g.Create(Main("default"), Creation{Key: "b", Fingerprint: "fp", Sub: &runs.Submission{}})
		made <- a
	}()
	var fresh Admission
	select {
	case fresh = <-made:
	case <-time.After(5 * time.Second):
		close(store.release)
		t.Fatal("a change waited for the listing's read of the file")
	}
	close(store.release)
	page := <-listed
	if len(page) != 2 || page[0].ID != fresh.RunID || page[1].ID != old.RunID {
		t.Fatalf("listing %+v", page)
	}
}

// openAt is New on store with the wall clock wall; t fails on an error.
func openAt(t *testing.T, store storage.Store, wall func() float64) *Gateway {
	t.Helper()
	g, err := New(store, Options{Wall: wall})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

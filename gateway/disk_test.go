package gateway

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// diskPair is a State reading its start-up rows on demand (lazy) and the same
// State with every row loaded (whole); the store gets what the gateway writes.
type diskPair struct{ lazy, whole State }

func diskRes(rng *rand.Rand, n int64) storage.Reservation {
	id := fmt.Sprintf("run_%d", rng.IntN(12))
	status := []string{runs.Queued, runs.Completed, runs.Interrupted}[rng.IntN(3)]
	rec := fmt.Sprintf(`{"run_id":"%s","status":"%s","created_at":1.0}`, id, status)
	scope := fmt.Sprintf("s%d", rng.IntN(2))
	return storage.Reservation{Namespace: "a", Scope: scope, Key: fmt.Sprintf("k%d", rng.IntN(16)), Fingerprint: "fp",
		RunID: id, RunN: n, OwnerScope: scope, Keyed: true, Local: true, Alive: true, Record: []byte(rec), UpdatedAt: float64(n)}
}

// TestDiskModel drives a State over start-up rows read on demand and the same
// State loaded whole through random reads, writes (also written to the store,
// as the gateway writes them), removals, snapshots, restores and flattening:
// both always answer alike.
func TestDiskModel(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 5))
		store := storage.NewMemory()
		var rows []*storage.Reservation
		for i := range 20 {
			row := diskRes(rng, int64(i+1))
			rows = append(rows, &row)
		}
		if err := store.Apply(ctx, storage.Batch{Namespace: "a", Upsert: rows}); err != nil {
			t.Fatal(err)
		}
		count, _ := store.CountReservations(ctx, "a")
		p := diskPair{lazy: newState(), whole: newState()}
		p.lazy.disk, p.lazy.nRes = newDiskRows(store, "a"), count
		all, _ := store.Reservations(ctx, "a")
		for _, r := range all {
			p.whole.putRes(diskRow(r))
		}
		var saved []diskPair
		for step := range 600 {
			row := diskRes(rng, int64(100+step))
			switch op := rng.IntN(10); {
			case op < 3:
				r := diskRow(row).withOwner(true, false)
				p.lazy.putRes(r)
				p.whole.putRes(r)
				if err := store.Apply(ctx, storage.Batch{Namespace: "a", Upsert: []*storage.Reservation{&row}}); err != nil {
					t.Fatal(err)
				}
			case op < 5:
				p.lazy.delRes(row.Scope, row.Key)
				p.whole.delRes(row.Scope, row.Key)
				if err := store.Apply(ctx, storage.Batch{Namespace: "a", Delete: []storage.ReservationKey{{Scope: row.Scope, Key: row.Key}}}); err != nil {
					t.Fatal(err)
				}
			case op < 7:
				saved = append(saved, p)
			case op < 9:
				if len(saved) > 0 {
					p = saved[rng.IntN(len(saved))] // checked below against its own store-independent twin
				}
			default:
				c := p.lazy // flattening a copy leaves p.lazy reading on demand
				c.flatten()
				compareDisk(t, step, diskPair{c, p.whole})
			}
			compareDisk(t, step, p)
		}
		for _, s := range saved {
			compareDisk(t, -1, s)
		}
	}
}

func compareDisk(t *testing.T, step int, p diskPair) {
	t.Helper()
	if err := p.lazy.check(); err != nil {
		t.Fatalf("step %d: lazy: %v", step, err)
	}
	if p.lazy.nRes != p.whole.nRes {
		t.Fatalf("step %d: lazy sees %d reservations, whole %d", step, p.lazy.nRes, p.whole.nRes)
	}
	for s := range 2 {
		for k := range 16 {
			scope, key := fmt.Sprintf("s%d", s), fmt.Sprintf("k%d", k)
			a, aok := p.lazy.getRes(scope, key)
			b, bok := p.whole.getRes(scope, key)
			if aok != bok || aok && (a.RunID != b.RunID || a.RunN != b.RunN || a.owner() != b.owner()) {
				t.Fatalf("step %d: (%s, %s): lazy %+v, whole %+v", step, scope, key, a, b)
			}
		}
	}
	for i := range 12 {
		id := fmt.Sprintf("run_%d", i)
		a, aok := p.lazy.resOfRun(id)
		b, bok := p.whole.resOfRun(id)
		if aok != bok || aok && (a.Key != b.Key || a.RunN != b.RunN) {
			t.Fatalf("step %d: run %s: lazy %+v, whole %+v", step, id, a, b)
		}
	}
}

// countingStore counts the reservation reads of a store.
type countingStore struct {
	storage.Store
	reads int
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

// A restart reads no reservation: each is read when first asked for, once
// (issue 17 item 2); the stale restart shows in what is read.
func TestStartupReadsNoReservation(t *testing.T) {
	mem := storage.NewMemory()
	g, err := New(mem, Options{Wall: func() float64 { return 1700000000000 }})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 50 {
		a, err := g.Admit(Main("default"), fmt.Sprint("k", i), "fp", &runs.Submission{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.RunID)
	}
	g.Close()
	store := &countingStore{Store: mem}
	g, err = New(store, Options{Wall: func() float64 { return 1700000001000 }})
	if err != nil {
		t.Fatal(err)
	}
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
	a, aerr := g.Admit(Main("default"), "k9", "fp", &runs.Submission{})
	if aerr != nil || !a.Replayed || a.RunID != ids[9] || a.Status != runs.Interrupted {
		t.Fatalf("replay after the restart: %+v %v", a, aerr)
	}
	if _, err := g.Get(Main("default"), ids[7]); err != nil {
		t.Fatal(err)
	}
	if store.reads > 4 {
		t.Fatalf("%d reads for two runs", store.reads)
	}
}

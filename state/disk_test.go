package state

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
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
		p := diskPair{lazy: New(), whole: New()}
		p.lazy.disk, p.lazy.nRes = newDiskRows(store, "a"), count
		all, _ := store.Reservations(ctx, "a")
		for _, r := range all {
			p.whole.PutRes(diskRow(r))
		}
		var saved []diskPair
		for step := range 600 {
			row := diskRes(rng, int64(100+step))
			switch op := rng.IntN(11); {
			case op == 10:
				// A durable prune (runs-api §11.3) also takes the start-up
				// rows not read yet, as the State that loaded them whole.
				at := float64(rng.IntN(step + 120))
				expired := func(u float64) bool { return u < at }
				a, b := p.lazy.Prunable(at, expired), p.whole.Prunable(at, expired)
				slices.SortFunc(a, compareRes)
				slices.SortFunc(b, compareRes)
				if !slices.Equal(a, b) {
					t.Fatalf("step %d: prunable before %v: lazy %v, whole %v", step, at, a, b)
				}
				for _, k := range a {
					p.lazy.DelRes(k.Scope, k.Key)
					p.whole.DelRes(k.Scope, k.Key)
					if err := store.Apply(ctx, storage.Batch{Namespace: "a", Delete: []storage.ReservationKey{k}}); err != nil {
						t.Fatal(err)
					}
				}
			case op < 3:
				r := diskRow(row).withOwner(true, false)
				p.lazy.PutRes(r)
				p.whole.PutRes(r)
				if err := store.Apply(ctx, storage.Batch{Namespace: "a", Upsert: []*storage.Reservation{&row}}); err != nil {
					t.Fatal(err)
				}
			case op < 5:
				p.lazy.DelRes(row.Scope, row.Key)
				p.whole.DelRes(row.Scope, row.Key)
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
				c.Flatten()
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
	if err := p.lazy.Check(); err != nil {
		t.Fatalf("step %d: lazy: %v", step, err)
	}
	// Every reservation either sees: in memory, and (lazy) the start-up rows
	// EachStartupRow walks — each once, none it changed.
	seen := func(s *State) []string {
		var out []string
		for it := s.res.Iterator(); !it.Done(); {
			k, r, _ := it.Next()
			out = append(out, fmt.Sprint(k, r.RunN))
		}
		var stored []storage.Reservation
		if read := s.StartupRows(); read != nil {
			stored, _ = read()
		}
		s.EachStartupRow(stored, func(r *Reservation) { out = append(out, fmt.Sprint(resKey(r.Scope, r.Key), r.RunN)) })
		slices.Sort(out)
		return out
	}
	if a, b := seen(&p.lazy), seen(&p.whole); !slices.Equal(a, b) {
		t.Fatalf("step %d: lazy sees %v, whole %v", step, a, b)
	}
	if p.lazy.nRes != p.whole.nRes {
		t.Fatalf("step %d: lazy sees %d reservations, whole %d", step, p.lazy.nRes, p.whole.nRes)
	}
	for s := range 2 {
		for k := range 16 {
			scope, key := fmt.Sprintf("s%d", s), fmt.Sprintf("k%d", k)
			a, aok := p.lazy.Res(scope, key)
			b, bok := p.whole.Res(scope, key)
			if aok != bok || aok && (a.RunID != b.RunID || a.RunN != b.RunN || a.OwnerStamp() != b.OwnerStamp()) {
				t.Fatalf("step %d: (%s, %s): lazy %+v, whole %+v", step, scope, key, a, b)
			}
		}
	}
	for i := range 12 {
		id := fmt.Sprintf("run_%d", i)
		a, aok := p.lazy.ResOfRun(id)
		b, bok := p.whole.ResOfRun(id)
		if aok != bok || aok && (a.Key != b.Key || a.RunN != b.RunN) {
			t.Fatalf("step %d: run %s: lazy %+v, whole %+v", step, id, a, b)
		}
	}
}

// Reads of keys and run ids that never existed hold no memory: with start-up
// rows on disk, a thousand made-up Idempotency-Keys and run ids leave orig and
// runsRead as they were; a run the State holds is remembered once looked up.
func TestDiskReadsOfUnknownHoldNothing(t *testing.T) {
	store := storage.NewMemory()
	row := diskRes(rand.New(rand.NewPCG(1, 1)), 1)
	if err := store.Apply(context.Background(), storage.Batch{Namespace: "a", Upsert: []*storage.Reservation{&row}}); err != nil {
		t.Fatal(err)
	}
	s := New()
	s.ReadOnDemand(store, "a", 1)
	for i := range 1000 {
		if _, ok := s.Res("s0", fmt.Sprint("new-", i)); ok {
			t.Fatal("a made-up key has a reservation")
		}
		if _, ok := s.ResOfRun(fmt.Sprint("run_new_", i)); ok {
			t.Fatal("a made-up run id has a reservation")
		}
	}
	if len(s.disk.orig) != 0 || len(s.disk.runsRead) != 0 {
		t.Fatalf("orig %d, runsRead %d after reads of unknown keys and ids", len(s.disk.orig), len(s.disk.runsRead))
	}
	s.PutRun("run_here", &Cached{text: []byte("{}"), Status: runs.Queued})
	s.ResOfRun("run_here")
	if !s.disk.runsRead["run_here"] || s.disk.withoutRows != 1 {
		t.Fatalf("a run the State holds is not remembered: %v, %d", s.disk.runsRead, s.disk.withoutRows)
	}
}

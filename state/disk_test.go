package state

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// diskKeys is the number of keys of each scope TestDiskModel uses: the
// start-up rows use the first 16, writes all of them.
const diskKeys = 64

// diskPair is a State reading its start-up rows on demand (lazy) and the same
// State with every row loaded (whole); the store gets what the gateway writes.
type diskPair struct{ lazy, whole State }

func diskRes(rng *rand.Rand, n int64) storage.Reservation {
	id := fmt.Sprintf("run_%d", rng.IntN(12))
	status := []string{runs.Queued, runs.Completed, runs.Interrupted}[rng.IntN(3)]
	rec := fmt.Sprintf(`{"run_id":"%s","status":"%s","created_at":1.0}`, id, status)
	scope := fmt.Sprintf("s%d", rng.IntN(2))
	return storage.Reservation{Namespace: "a", Scope: scope, Key: fmt.Sprintf("k%d", rng.IntN(16)), Fingerprint: "fp",
		RunID: id, RunN: n, OwnerScope: scope, Keyed: true, Local: true, Alive: true, Record: []byte(rec), UpdatedAt: float64(n),
		Terminal: runs.IsTerminal(status)}
}

// started is the pair a real restart on store gives: lazy reads on demand,
// whole loaded every row (both stale owners, runs-api §10.4).
func started(t *testing.T, store storage.Store) diskPair {
	t.Helper()
	ctx := context.Background()
	if err := store.DropExpired(ctx); err != nil {
		t.Fatal(err)
	}
	count, _ := store.CountReservations(ctx, "a")
	spaces, _, _ := store.LoadMeta(ctx)
	p := diskPair{lazy: New(), whole: New()}
	p.lazy.ReadOnDemand(store, "a", count, spaces[0].RunCounter)
	all, _ := store.Reservations(ctx, "a")
	for _, r := range all {
		p.whole.PutRes(diskRow(r))
	}
	return p
}

// TestDiskModel drives a State over start-up rows read on demand and the same
// State loaded whole through random reads, writes (also written to the store,
// as the gateway writes them: new runs, rewrites of a run keeping its counter,
// and the namespace's run counter), removals, durable prunes (the start-up rows
// all at once: PruneStartup, storage.Expiry), logical and real restarts,
// snapshots, checkouts, changes of snapshots (branches: in memory only) and
// flattening: both always answer alike, snapshots from before a prune or a
// logical restart too, and the store holds what whole holds. Checkouts and
// flattening read every row, after which the store is not read again, so
// they are rare: most steps read the store on demand.
func TestDiskModel(t *testing.T) {
	ctx := context.Background()
	var counter int64 // the namespace's run counter: at least every row's RunN
	apply := func(store storage.Store, b storage.Batch) {
		t.Helper()
		b.Namespace = "a"
		for _, r := range b.Upsert {
			counter = max(counter, r.RunN)
		}
		b.Meta = &storage.Namespace{RunCounter: counter}
		if err := store.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	took := 0 // prunes that took start-up rows
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 5))
		store := storage.NewMemory()
		counter = 0
		var rows []*storage.Reservation
		for i := range 20 {
			row := diskRes(rng, int64(i+1))
			rows = append(rows, &row)
		}
		apply(store, storage.Batch{Upsert: rows})
		p := started(t, store)
		var saved []diskPair
		for step := range 600 {
			row := diskRes(rng, int64(100+step))
			switch op := rng.IntN(16); {
			case op == 10:
				// A durable prune (runs-api §11.3) at a time that may go
				// back: the start-up rows not read yet go too, as in the
				// State that loaded them whole.
				now := float64(rng.IntN(step+120)) + runs.DurableRetention
				if rng.IntN(2) == 0 { // about now: the rows written lately expire
					now = float64(90+step+rng.IntN(20)) + runs.DurableRetention
				}
				expired := func(u float64) bool { return runs.Expired(u, now, runs.DurableRetention) }
				b := storage.Batch{Delete: p.lazy.Prunable(expired)}
				for _, k := range b.Delete {
					p.lazy.DelRes(k.Scope, k.Key)
				}
				if p.lazy.PruneStartup(now) {
					b.Expire = &storage.Expiry{Now: now, Age: runs.DurableRetention}
					took++
				}
				for _, k := range p.whole.Prunable(expired) {
					p.whole.DelRes(k.Scope, k.Key)
				}
				apply(store, b)
			case op == 11:
				alive := rng.IntN(2) == 0
				p = diskPair{p.lazy.Restarted(alive), p.whole.Restarted(alive)} // nothing written
			case op == 12:
				compareStore(t, step, store, &p.whole)
				p, saved = started(t, store), nil // a new process: no snapshot
			case op == 13 && len(saved) > 0:
				// A branch changes a snapshot, in memory only.
				i := rng.IntN(len(saved))
				r := diskRow(row)
				saved[i].lazy.PutRes(r)
				saved[i].whole.PutRes(r)
				compareDisk(t, step, saved[i], rng)
			case op < 3:
				if rng.IntN(2) == 0 { // a key the file may not hold
					row.Key = fmt.Sprint("k", 16+rng.IntN(diskKeys-16))
				}
				r := diskRow(row).withOwner(true, false)
				if cur, ok := p.whole.Res(row.Scope, row.Key); ok && rng.IntN(3) == 0 {
					// A change of the run the key reserves (persist rule,
					// interruption): its counter stays.
					status := []string{runs.Running, runs.Failed, runs.Interrupted}[rng.IntN(3)]
					r = cur.Rewritten([]byte(fmt.Sprintf(`{"run_id":"%s","status":"%s","created_at":1.0}`, cur.RunID, status)), status, float64(100+step))
				}
				p.lazy.PutRes(r)
				p.whole.PutRes(r)
				apply(store, storage.Batch{Upsert: []*storage.Reservation{&r.Reservation}})
			case op < 5:
				p.lazy.DelRes(row.Scope, row.Key)
				p.whole.DelRes(row.Scope, row.Key)
				apply(store, storage.Batch{Delete: []storage.ReservationKey{{Scope: row.Scope, Key: row.Key}}})
			case op < 7:
				saved = append(saved, p)
			case op < 9:
				if len(saved) > 0 && rng.IntN(8) == 0 { // rarely: the store is not read again
					// A checkout: the store is rewritten from the snapshot,
					// read whole first (as the gateway's rewriteDurable).
					p = saved[rng.IntN(len(saved))]
					c := p.lazy
					c.Flatten()
					b := storage.Batch{Clear: true}
					p.whole.EachRes(func(r *Reservation) { b.Upsert = append(b.Upsert, &r.Reservation) })
					apply(store, b)
				}
			case op == 9 && rng.IntN(8) == 0:
				// Flattening a copy leaves p.lazy reading on demand, but the
				// store is not read again (all): rarely.
				c := p.lazy
				c.Flatten()
				compareDisk(t, step, diskPair{c, p.whole}, nil)
			}
			compareDisk(t, step, p, rng)
			if len(saved) > 0 {
				compareDisk(t, step, saved[rng.IntN(len(saved))], rng)
			}
		}
		for _, s := range saved {
			compareDisk(t, -1, s, nil)
		}
		compareStore(t, -1, store, &p.whole)
	}
	if took < 20 {
		t.Fatalf("%d prunes took start-up rows", took)
	}
}

// compareStore checks that the store holds every reservation whole sees, as
// whole holds it, once the rows a prune marked are dropped (a restart).
func compareStore(t *testing.T, step int, store storage.Store, whole *State) {
	t.Helper()
	var want, got []string
	whole.EachRes(func(r *Reservation) {
		want = append(want, fmt.Sprint(r.Scope, r.Key, r.RunN, r.UpdatedAt, r.Terminal, string(r.Record)))
	})
	ctx := context.Background()
	if err := store.DropExpired(ctx); err != nil {
		t.Fatal(err)
	}
	rows, _ := store.Reservations(ctx, "a")
	for _, r := range rows {
		got = append(got, fmt.Sprint(r.Scope, r.Key, r.RunN, r.UpdatedAt, r.Terminal, string(r.Record)))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("step %d: the store holds %v, whole %v", step, got, want)
	}
}

func compareDisk(t *testing.T, step int, p diskPair, rng *rand.Rand) {
	t.Helper()
	if err := p.lazy.Check(); err != nil {
		t.Fatalf("step %d: lazy: %v", step, err)
	}
	if err := p.whole.Check(); err != nil {
		t.Fatalf("step %d: whole: %v", step, err)
	}
	// Every reservation either sees: in memory, and (lazy) the start-up rows
	// EachStartupRow walks — each once, none it changed.
	seen := func(s *State) []string {
		var out []string
		for it := s.res.Iterator(); !it.Done(); {
			k, r, _ := it.Next()
			out = append(out, fmt.Sprint(k, r.RunN, r.OwnerStamp()))
		}
		var stored []storage.Reservation
		if read := s.StartupRows(); read != nil {
			stored, _ = read()
		}
		s.EachStartupRow(stored, func(r *Reservation) { out = append(out, fmt.Sprint(resKey(r.Scope, r.Key), r.RunN, r.OwnerStamp())) })
		slices.Sort(out)
		return out
	}
	if a, b := seen(&p.lazy), seen(&p.whole); !slices.Equal(a, b) {
		t.Fatalf("step %d: lazy sees %v, whole %v", step, a, b)
	}
	if p.lazy.nRes != p.whole.nRes {
		t.Fatalf("step %d: lazy sees %d reservations, whole %d", step, p.lazy.nRes, p.whole.nRes)
	}
	// Every key and run id (rng nil), or a few at random: reading a key or
	// run id keeps its start-up rows in orig, which the store is then never
	// asked for again, so most steps leave most rows unread.
	keys, ids := make([]int, 2*diskKeys), make([]int, 12)
	for i := range keys {
		keys[i] = i
	}
	for i := range ids {
		ids[i] = i
	}
	if rng != nil {
		keys, ids = []int{rng.IntN(2 * diskKeys)}, nil
		if rng.IntN(4) == 0 {
			ids = []int{rng.IntN(12)}
		}
	}
	for _, k := range keys {
		scope, key := fmt.Sprintf("s%d", k/diskKeys), fmt.Sprintf("k%d", k%diskKeys)
		a, aok := p.lazy.Res(scope, key)
		b, bok := p.whole.Res(scope, key)
		if aok != bok || aok && (a.RunID != b.RunID || a.RunN != b.RunN || a.OwnerStamp() != b.OwnerStamp() || a.Status != b.Status) {
			t.Fatalf("step %d: (%s, %s): lazy %+v, whole %+v", step, scope, key, a, b)
		}
	}
	for _, i := range ids {
		id := fmt.Sprintf("run_%d", i)
		a, aok := p.lazy.ResOfRun(id)
		b, bok := p.whole.ResOfRun(id)
		if aok != bok || aok && (a.Key != b.Key || a.RunN != b.RunN || a.OwnerStamp() != b.OwnerStamp()) {
			t.Fatalf("step %d: run %s: lazy %+v, whole %+v", step, id, a, b)
		}
		keys := func(s *State) (out []string) {
			for _, r := range s.ReservationsOfRun(id) {
				out = append(out, fmt.Sprint(r.Scope, r.Key, r.RunN))
			}
			return out
		}
		if a, b := keys(&p.lazy), keys(&p.whole); !slices.Equal(a, b) {
			t.Fatalf("step %d: reservations of run %s: lazy %v, whole %v", step, id, a, b)
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
	s.ReadOnDemand(store, "a", 1, 1)
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

// countingStore counts the reads of whole reservation rows.
type countingStore struct {
	storage.Store
	rows int
}

func (c *countingStore) Reservation(ctx context.Context, ns, scope, key string) (storage.Reservation, bool, error) {
	c.rows++
	return c.Store.Reservation(ctx, ns, scope, key)
}

func (c *countingStore) ReservationsOfRun(ctx context.Context, ns, id string) ([]storage.Reservation, error) {
	c.rows++
	return c.Store.ReservationsOfRun(ctx, ns, id)
}

func (c *countingStore) Reservations(ctx context.Context, ns string) ([]storage.Reservation, error) {
	c.rows++
	return c.Store.Reservations(ctx, ns)
}

// The durable prune of the start-up rows reads none of them and keeps
// nothing per row (before, it read every expired row with its record into
// memory and masked each: 2.9 s and 540 MB for 50,000 rows): it counts them
// out of Reserved and the store marks them in one statement. A State from
// before the prune still sees them, read after the store marked them.
func TestPruneStartupReadsNoRow(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMemory()
	var rows []*storage.Reservation
	for i := range 1015 {
		status, at := runs.Completed, 1.0
		switch {
		case i >= 1010:
			at = 100 // young
		case i >= 1000:
			status = runs.Queued // never expires
		}
		rows = append(rows, &storage.Reservation{Scope: "s", Key: fmt.Sprint("k", i), Fingerprint: "fp", RunID: fmt.Sprint("run_", i),
			RunN: int64(i + 1), OwnerScope: "s", Keyed: true, Record: []byte(`{"status":"` + status + `"}`), UpdatedAt: at,
			Terminal: runs.IsTerminal(status)})
	}
	if err := mem.Apply(ctx, storage.Batch{Namespace: "a", Upsert: rows}); err != nil {
		t.Fatal(err)
	}
	store := &countingStore{Store: mem}
	s := New()
	s.ReadOnDemand(store, "a", len(rows), int64(len(rows)))
	before := s
	now := 1 + runs.DurableRetention + 0.5
	if !s.PruneStartup(now) || s.Reserved() != 15 || s.PruneStartup(now) || s.PruneStartup(now+1) {
		t.Fatalf("Reserved %d after the prune, want 15; a second prune took rows", s.Reserved())
	}
	if store.rows != 0 || len(s.disk.orig) != 0 || s.masked != nil || len(s.disk.expiring) != 1000 {
		t.Fatalf("the prune read %d rows; orig %d, masked %v, expiring %d", store.rows, len(s.disk.orig), s.masked != nil, len(s.disk.expiring))
	}
	if err := mem.Apply(ctx, storage.Batch{Namespace: "a", Expire: &storage.Expiry{Now: now, Age: runs.DurableRetention}}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k7", "k1003", "k1012"} {
		if _, ok := s.Res("s", k); ok != (k != "k7") {
			t.Fatalf("%s after the prune: %v", k, ok)
		}
		if r, ok := before.Res("s", k); !ok || r.Key != k {
			t.Fatalf("%s in the State from before the prune: %v", k, ok)
		}
	}
	if err := errors.Join(s.Check(), before.Check()); err != nil || before.Reserved() != 1015 {
		t.Fatalf("%v; Reserved %d before the prune", err, before.Reserved())
	}
}

// What a process writes after a real restart holds no memory once pruned:
// steady keyed traffic over two days (a new key a minute, each run looked up
// by id as an observe does, each pruned 24 hours later) leaves orig, the
// masks and the run ids remembered as they were, the reservations of the
// last 24 hours counted. Before, every key written since start-up stayed in
// orig and in the State's masks, and every run id in runsRead, for the
// process's life.
func TestDiskKeysWrittenSinceHoldNothing(t *testing.T) {
	ctx := context.Background()
	store := storage.NewMemory()
	apply := func(b storage.Batch) {
		b.Namespace = "a"
		if err := store.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	apply(storage.Batch{Meta: &storage.Namespace{RunCounter: 1}, Upsert: []*storage.Reservation{{Scope: "s", Key: "startup",
		Fingerprint: "fp", RunID: "run_0", RunN: 1, OwnerScope: "s", Keyed: true, Record: []byte(`{"status":"completed"}`), Terminal: true}}})
	s := New()
	s.ReadOnDemand(store, "a", 1, 1)
	for i := range 3000 {
		now := float64(i * 60)
		expired := func(u float64) bool { return runs.Expired(u, now, runs.DurableRetention) }
		b := storage.Batch{Delete: s.Prunable(expired)}
		for _, k := range b.Delete {
			s.DelRes(k.Scope, k.Key)
		}
		if s.PruneStartup(now) {
			b.Expire = &storage.Expiry{Now: now, Age: runs.DurableRetention}
		}
		key, id := fmt.Sprint("k", i), fmt.Sprint("run_", i+1)
		if _, ok := s.Res("s", key); ok {
			t.Fatalf("%s is reserved before its admission", key)
		}
		r := &Reservation{Status: runs.Completed, Reservation: storage.Reservation{Scope: "s", Key: key, Fingerprint: "fp",
			RunID: id, RunN: int64(i + 2), OwnerScope: "s", Keyed: true, Record: []byte(`{"status":"completed"}`), UpdatedAt: now, Terminal: true}}
		s.PutRunRes(id, &Cached{text: []byte("{}"), Status: runs.Completed}, r)
		s.DelRun(id)
		b.Meta, b.Upsert = &storage.Namespace{RunCounter: r.RunN}, []*storage.Reservation{&r.Reservation}
		apply(b)
		if got, ok := s.ResOfRun(id); !ok || got != r {
			t.Fatalf("run %s: %+v %v", id, got, ok)
		}
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	d := s.disk
	if s.Reserved() != 1441 || len(d.orig) != 0 || s.masked != nil || len(d.runsRead) != d.withoutRows || len(d.byRun) != 0 {
		t.Fatalf("Reserved %d (want 1441); orig %d, masked %v, run ids read %d (%d without start-up rows), byRun %d",
			s.Reserved(), len(d.orig), s.masked != nil, len(d.runsRead), d.withoutRows, len(d.byRun))
	}
}

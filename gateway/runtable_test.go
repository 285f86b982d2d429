package gateway

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// version is one runTable version with the plain map it must behave as, and
// its run counter.
type version struct {
	t       runTable
	model   map[string]*Cached
	counter int64
	ns      string
}

func (v *version) clone() *version {
	m := make(map[string]*Cached, len(v.model))
	for k, c := range v.model {
		m[k] = c
	}
	return &version{t: v.t, model: m, counter: v.counter, ns: v.ns}
}

func sameCached(a, b *Cached) bool {
	return bytes.Equal(a.Record, b.Record) && a.Status == b.Status && a.UpdatedAt == b.UpdatedAt && a.Owner == b.Owner
}

func checkVersion(t *testing.T, step int, cat *catalog, v *version, seen map[string]bool) {
	t.Helper()
	if v.t.len != len(v.model) {
		t.Fatalf("step %d: len = %d, model %d", step, v.t.len, len(v.model))
	}
	for id := range seen {
		got, ok := v.t.get(cat, id)
		want, wok := v.model[id]
		if ok != wok || ok && !sameCached(got, want) {
			t.Fatalf("step %d: get(%s) = %+v %v, want %+v %v", step, id, got, ok, want, wok)
		}
	}
	var ids []string
	v.t.each(cat, func(id string, c *Cached) {
		if want := v.model[id]; want == nil || !sameCached(c, want) {
			t.Fatalf("step %d: each gave %s %+v, want %+v", step, id, c, want)
		}
		ids = append(ids, id)
	})
	sort.Strings(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Fatalf("step %d: each gave %s twice", step, ids[i])
		}
	}
	if len(ids) != len(v.model) {
		t.Fatalf("step %d: each gave %d runs, model has %d", step, len(ids), len(v.model))
	}
}

// TestRunTableModel drives random admissions, changes, removals, snapshots,
// restores (forks of the slot log), namespace switches and restarts against a
// plain map: every version always answers as its map does.
func TestRunTableModel(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 9))
			cat := newCatalog()
			nss := []string{"hermes", "hermes:other", runs.BranchStorageNS("default", "feature")}
			scopes := []string{"s1", "s2"}
			cur := &version{t: newRunTable(), model: map[string]*Cached{}, ns: nss[0]}
			var saved []*version
			seen := map[string]bool{}
			ids := func(v *version) []string {
				out := make([]string, 0, len(v.model))
				for id := range v.model {
					out = append(out, id)
				}
				sort.Strings(out)
				return out
			}
			for step := 0; step < 3000; step++ {
				switch op := rng.IntN(100); {
				case op < 50: // admit
					cur.counter++
					id := runs.RunID(cur.ns, cur.counter)
					at := 1700000000 + float64(step)*0.37 // spans over 512 s: chunks widen
					owner := Owner{Scope: scopes[rng.IntN(2)], Keyed: rng.IntN(2) == 0, Local: true, Alive: rng.IntN(10) > 0}
					plain := rng.IntN(10) > 0
					rec := runs.NewRecord(id, at, nil)
					want := &Cached{Record: encode(rec), Status: runs.Queued, UpdatedAt: at, Owner: owner}
					if !plain {
						want.Record = append([]byte(nil), want.Record...)
					}
					nsI, _ := cat.admitted(cur.ns, cur.counter)
					if !cur.t.admit(cat, id, nsI, cur.counter, at, owner, plain) {
						if plain && owner.Alive {
							if _, taken := cur.model[id]; !taken {
								t.Fatalf("step %d: plain run %s not kept in a slot", step, id)
							}
						}
						cur.t.put(cat, id, want)
					}
					cur.model[id] = want
					seen[id] = true
				case op < 65: // change a run
					if ids := ids(cur); len(ids) > 0 {
						id := ids[rng.IntN(len(ids))]
						c := &Cached{Record: []byte(`{"changed":` + fmt.Sprint(step) + `}`), Status: runs.Running, UpdatedAt: float64(step), Owner: cur.model[id].Owner}
						cur.t.put(cat, id, c)
						cur.model[id] = c
					}
				case op < 75: // remove a run
					if ids := ids(cur); len(ids) > 0 {
						id := ids[rng.IntN(len(ids))]
						cur.t.del(cat, id)
						delete(cur.model, id)
					}
				case op < 77: // remove an absent run
					cur.t.del(cat, runs.RunID("hermes:absent", int64(step)))
				case op < 85: // snapshot
					saved = append(saved, cur.clone())
				case op < 93: // restore a snapshot (checkout): later admissions fork the log
					if len(saved) > 0 {
						cur = saved[rng.IntN(len(saved))].clone()
					}
				case op < 96: // another storage namespace continues the counter (a branch)
					cur.ns = nss[rng.IntN(len(nss))]
				default: // restart: an empty cache, the counter kept
					cur.t, cur.model = newRunTable(), map[string]*Cached{}
				}
				checkVersion(t, step, cat, cur, seen)
				if step%250 == 0 {
					for _, v := range saved {
						checkVersion(t, step, cat, v, seen)
					}
				}
			}
			for _, v := range saved {
				checkVersion(t, -1, cat, v, seen)
			}
		})
	}
}

// TestCatalogCollision: two counters whose run ids are the same string (their
// 32-bit hashes collide) behave as one map key: the later admission replaces
// the earlier run, and removing the id removes it (runs-api §12.1).
func TestCatalogCollision(t *testing.T) {
	n1, n2 := collidingCounters()
	id := runs.RunID("hermes", n1)
	if runs.RunID("hermes", n2) != id {
		t.Fatalf("runs %d and %d: ids differ", n1, n2)
	}
	cat := newCatalog()
	tab := newRunTable()
	owner := Owner{Scope: "s", Local: true, Alive: true}
	for n := int64(1); n <= n2; n++ {
		nsI, ok := cat.admitted("hermes", n)
		if !ok {
			t.Fatal("catalog refused a run")
		}
		kept := tab.admit(cat, runs.RunID("hermes", n), nsI, n, float64(n), owner, true)
		if kept != (n != n2) {
			t.Fatalf("run %d kept in a slot: %v", n, kept)
		}
		if !kept {
			tab.put(cat, id, &Cached{Record: []byte("newer"), Status: runs.Queued, UpdatedAt: float64(n), Owner: owner})
		}
	}
	if c, ok := tab.get(cat, id); !ok || string(c.Record) != "newer" {
		t.Fatalf("get(%s) = %+v %v", id, c, ok)
	}
	if tab.len != int(n2)-1 {
		t.Fatalf("len = %d, want %d", tab.len, n2-1)
	}
	tab.del(cat, id)
	if _, ok := tab.get(cat, id); ok || tab.len != int(n2)-2 {
		t.Fatalf("after del: present %v, len %d", ok, tab.len)
	}
	// A lookup of any other admitted run still finds it.
	if c, ok := tab.get(cat, runs.RunID("hermes", n1+1)); !ok || c.UpdatedAt != float64(n1+1) {
		t.Fatalf("get(run %d) = %+v %v", n1+1, c, ok)
	}
	for _, bad := range []string{"", "run_", id[:35], id + "0", "RUN_" + id[4:], "run_" + "zz" + id[6:]} {
		if _, ok := tab.get(cat, bad); ok {
			t.Fatalf("get(%q) found a run", bad)
		}
	}
}

// A time chunk gives back every time bit for bit, compact or widened, and its
// prefix too.
func TestTimeChunk(t *testing.T) {
	for _, times := range [][]float64{
		{1700000000.0, 1700000000.001, 1700000000.002, 1699999999.5, 1700000000.25},
		{1700000000.0, 1700003600.5, 1700000000.001},                // an hour apart: widens
		{0, math.Copysign(0, -1), -1.5, 1e-300, 5e-324, 1700000000}, // signs and tiny values
		{math.Inf(1), math.NaN(), math.Inf(-1), 1700000000.123},
	} {
		c := &timeChunk{}
		for i, at := range times {
			c.push(at)
			for j := 0; j <= i; j++ {
				if got := c.get(j); math.Float64bits(got) != math.Float64bits(times[j]) {
					t.Fatalf("%v: get(%d) after %d pushes = %v", times, j, i+1, got)
				}
			}
		}
		for r := 0; r <= len(times); r++ {
			p := c.prefix(r)
			for j := 0; j < r; j++ {
				if math.Float64bits(p.get(j)) != math.Float64bits(times[j]) {
					t.Fatalf("%v: prefix(%d).get(%d) = %v", times, r, j, p.get(j))
				}
			}
		}
	}
	c := &timeChunk{}
	for i := range 100 {
		c.push(1700000000 + float64(i)/1000)
	}
	if c.wide != nil || len(c.delta) != 100 {
		t.Fatalf("times a millisecond apart widened the chunk: %d wide, %d compact", len(c.wide), len(c.delta))
	}
}

// A removed slot run leaves no record behind (its slot is marked dead), and a
// later run with the same id — a counter whose hash collides — is visible
// (the review's sweep-then-collide case, runs-api §11.2 and §12.1).
func TestRemovedSlotRuns(t *testing.T) {
	n1, n2 := collidingCounters()
	cat := newCatalog()
	tab := newRunTable()
	owner := Owner{Scope: "s", Local: true, Alive: true}
	for n := int64(1); n <= n2; n++ {
		id := runs.RunID("hermes", n)
		nsI, _ := cat.admitted("hermes", n)
		kept := tab.admit(cat, id, nsI, n, float64(n), owner, true)
		if !kept && n != n2 {
			t.Fatalf("run %d not kept in a slot", n)
		}
		if n == n2 && !kept {
			t.Fatalf("run %d (same id as the removed run %d) not kept in a slot", n2, n1)
		}
		if n < n2 { // complete and sweep every earlier run
			tab.put(cat, id, &Cached{Record: []byte("done"), Status: runs.Completed, UpdatedAt: float64(n), Owner: owner})
			tab.del(cat, id)
		}
	}
	if tab.other.Len() != 0 || tab.len != 1 {
		t.Fatalf("after removals: %d records kept, len %d", tab.other.Len(), tab.len)
	}
	if c, ok := tab.get(cat, runs.RunID("hermes", n2)); !ok || c.UpdatedAt != float64(n2) {
		t.Fatalf("get(run %d) = %+v %v", n2, c, ok)
	}
	var ids []string
	tab.each(cat, func(id string, _ *Cached) { ids = append(ids, id) })
	if len(ids) != 1 || ids[0] != runs.RunID("hermes", n2) {
		t.Fatalf("each gave %v", ids)
	}
}

// collidingCounters returns the first two counters of storage namespace
// "hermes" whose run ids are the same string (their 32-bit hashes collide).
func collidingCounters() (n1, n2 int64) {
	p := runs.RunNSHash("hermes")
	seen := map[uint32]int64{}
	for n := int64(1); ; n++ {
		h := runs.RunHashOf(p, n)
		if m, ok := seen[h]; ok {
			return m, n
		}
		seen[h] = n
	}
}

// TestBucket: a hash lands in a table of any size, every slot of it is
// reachable, probing wraps at the end, and tables grow by half from 64 slots.
func TestBucket(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, size := range []int{1, 2, 63, 64, 96, 144, 1000003, 1 << 30} {
		hit := map[int]bool{}
		for range 20000 {
			b := bucket(rng.Uint32(), size)
			if b < 0 || b >= size {
				t.Fatalf("bucket(_, %d) = %d", size, b)
			}
			hit[b] = true
		}
		for _, h := range []uint32{0, 1, 1<<32 - 1} {
			if b := bucket(h, size); b < 0 || b >= size {
				t.Fatalf("bucket(%#x, %d) = %d", h, size, b)
			}
		}
		if size <= 144 && len(hit) != size {
			t.Errorf("size %d: 20,000 hashes reached %d slots", size, len(hit))
		}
		if got := probe(size-1, size); got != 0 {
			t.Errorf("probe(%d, %d) = %d, want 0", size-1, size, got)
		}
	}
	if got := []int{grown(0), grown(64), grown(96)}; got[0] != 64 || got[1] != 96 || got[2] != 144 {
		t.Errorf("grown(0, 64, 96) = %v, want [64 96 144]", got)
	}
	if full(55, 64) || !full(56, 64) {
		t.Errorf("full(55, 64) = %v, full(56, 64) = %v; want false, true (7/8)", full(55, 64), full(56, 64))
	}
}

package gateway

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// resVersion is one resTable version with the plain map it must behave as.
type resVersion struct {
	t       resTable
	model   map[string]*Reservation // by resKey
	counter int64
	ns      string
}

func (v *resVersion) clone() *resVersion {
	m := make(map[string]*Reservation, len(v.model))
	for k, r := range v.model {
		m[k] = r
	}
	return &resVersion{t: v.t, model: m, counter: v.counter, ns: v.ns}
}

// plainRes is the reservation a plain keyed admission of run id (counter n)
// at time at writes.
func plainRes(id string, n int64, at float64, scope, key, fp string) *Reservation {
	return &Reservation{Scope: scope, Key: key, Fingerprint: fp, RunID: id, N: n,
		Owner: Owner{Scope: scope, Keyed: true, Local: true, Alive: true}, Status: runs.Queued, UpdatedAt: at}
}

func sameRes(a, b *Reservation) bool {
	return a.Scope == b.Scope && a.Key == b.Key && a.Fingerprint == b.Fingerprint && a.RunID == b.RunID && a.N == b.N &&
		a.Owner == b.Owner && a.Status == b.Status && a.UpdatedAt == b.UpdatedAt && bytes.Equal(a.Record, b.Record)
}

func checkResVersion(t *testing.T, step int, cat *catalog, v *resVersion, seen map[string]*Reservation) {
	t.Helper()
	if v.t.len != len(v.model) {
		t.Fatalf("step %d: len = %d, model %d", step, v.t.len, len(v.model))
	}
	byRun := map[string]*Reservation{}
	for _, r := range v.model {
		byRun[r.RunID] = r
	}
	for k, r := range seen {
		got, ok := v.t.get(cat, r.Scope, r.Key)
		want, wok := v.model[k]
		if ok != wok || ok && !sameRes(got, want) {
			t.Fatalf("step %d: get(%q, %q) = %+v %v, want %+v %v", step, r.Scope, r.Key, got, ok, want, wok)
		}
		got, ok = v.t.ofRun(cat, r.RunID)
		want, wok = byRun[r.RunID]
		if ok != wok || ok && !sameRes(got, want) {
			t.Fatalf("step %d: ofRun(%s) = %+v %v, want %+v %v", step, r.RunID, got, ok, want, wok)
		}
	}
	var keys []string
	v.t.each(cat, func(r *Reservation) {
		k := resKey(r.Scope, r.Key)
		if want := v.model[k]; want == nil || !sameRes(r, want) {
			t.Fatalf("step %d: each gave %+v, want %+v", step, r, want)
		}
		keys = append(keys, k)
	})
	sort.Strings(keys)
	for i := 1; i < len(keys); i++ {
		if keys[i] == keys[i-1] {
			t.Fatalf("step %d: each gave %q twice", step, keys[i])
		}
	}
	if len(keys) != len(v.model) {
		t.Fatalf("step %d: each gave %d reservations, model has %d", step, len(keys), len(v.model))
	}
}

// modelKey is one of 4,000 keys of mixed shapes: sharing a prefix or not,
// prefixes of one another, up to the 255-byte bound (chunkKeys keeps them as
// suffixes of a chunk's first key).
func modelKey(rng *rand.Rand) string {
	n := rng.IntN(1000)
	switch rng.IntN(4) {
	case 0:
		return fmt.Sprint("key-", n)
	case 1:
		return fmt.Sprint(n)
	case 2:
		return fmt.Sprint("key-", n, "-", strings.Repeat("x", n%7))
	default:
		return strings.Repeat("k", 250) + fmt.Sprint(n%100000)
	}
}

// TestChunkKeys: every key comes back whole after any mix of shared
// prefixes, across marks, and from every prefix of the chunk.
func TestChunkKeys(t *testing.T) {
	keys := []string{"order-17-a", "order-17-a", "order-1", "order-17-abc", "x", "order-", "o",
		strings.Repeat("z", 255), "order-17-a" + strings.Repeat("q", 245)}
	for i := range 300 {
		keys = append(keys, fmt.Sprintf("order-%d-%d", i%7, i))
	}
	var k chunkKeys
	for _, key := range keys {
		k.push(key)
	}
	check := func(t *testing.T, k *chunkKeys, n int) {
		t.Helper()
		if len(k.shared) != n {
			t.Fatalf("%d keys, want %d", len(k.shared), n)
		}
		for j, key := range keys[:n] {
			if got := string(k.appendKey([]byte("pre:"), j)); got != "pre:"+key {
				t.Fatalf("appendKey(%d) = %q, want %q", j, got, "pre:"+key)
			}
			if !k.is(j, key) {
				t.Fatalf("is(%d, %q) = false", j, key)
			}
			for _, other := range []string{key + "x", key[:len(key)-1], "Q" + key[1:], key[:len(key)-1] + "Q"} {
				if other != key && k.is(j, other) {
					t.Fatalf("is(%d, %q) = true; the key is %q", j, other, key)
				}
			}
		}
	}
	check(t, &k, len(keys))
	if got, raw := len(k.suf), len(strings.Join(keys, "")); got > raw/2 {
		t.Fatalf("%d suffix bytes for %d bytes of keys: the shared prefixes are not shared", got, raw)
	}
	for _, r := range []int{1, 2, 63, 64, 65, 128, len(keys) - 1, len(keys)} {
		p := k.prefix(r)
		check(t, &p, r)
	}
}

// TestLazyInts: a column reads back what was pushed, whether the rule held
// throughout, broke at once, or broke late; and so does every prefix.
func TestLazyInts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name  string
		step  uint32
		value func(j int) uint32
	}{
		{"consecutive", 1, func(j int) uint32 { return 1000 + uint32(j) }},
		{"constant", 0, func(j int) uint32 { return 7 }},
		{"breaks late", 1, func(j int) uint32 { return 5 + uint32(j) + uint32(j/3000) }},
		{"breaks at once", 0, func(j int) uint32 { return uint32(j % 2) }},
		{"random", 1, func(j int) uint32 { return rng.Uint32() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := lazyInts{step: tc.step}
			var want []uint32
			for j := range slotChunk {
				v := tc.value(j)
				c.push(j, v)
				want = append(want, v)
			}
			for _, r := range []int{1, 2, 2999, 3000, 3001, slotChunk} {
				p := c.prefix(r)
				for j := range r {
					if got := p.get(j); got != want[j] {
						t.Fatalf("prefix(%d).get(%d) = %d, want %d", r, j, got, want[j])
					}
				}
			}
			if tc.name == "consecutive" || tc.name == "constant" {
				if c.vals != nil {
					t.Fatalf("the rule held, yet %d values are kept", len(c.vals))
				}
			}
		})
	}
}

func TestHashKeyBytes(t *testing.T) {
	for _, key := range []string{"a", "order-17", strings.Repeat("z", 255)} {
		if a, b := hashKey(7, key), hashKeyBytes(7, []byte(key)); a != b {
			t.Fatalf("hashKey(7, %q) = %#x, hashKeyBytes = %#x", key, a, b)
		}
	}
}

// TestResTableModel drives random keyed admissions (new keys and keys
// reserved again after a removal), changes, removals, snapshots, restores
// (forks of the log), namespace switches and logical restarts against a plain
// map: every version always answers as its map does.
func TestResTableModel(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			cat := newCatalog()
			nss := []string{"hermes", "hermes:other", runs.BranchStorageNS("default", "feature")}
			scopes := []string{"s1", "s2"}
			fps := []string{"fp-a", "fp-b", "fp-c"}
			cur := &resVersion{t: newResTable(), model: map[string]*Reservation{}, ns: nss[0]}
			var saved []*resVersion
			seen := map[string]*Reservation{}
			keys := func(v *resVersion) []string {
				out := make([]string, 0, len(v.model))
				for k := range v.model {
					out = append(out, k)
				}
				sort.Strings(out)
				return out
			}
			for step := 0; step < 3000; step++ {
				switch op := rng.IntN(100); {
				case op < 50: // admit with a key absent from this version
					cur.counter++
					scope := scopes[rng.IntN(2)]
					key := modelKey(rng)
					if _, taken := cur.model[resKey(scope, key)]; taken {
						continue
					}
					id := runs.RunID(cur.ns, cur.counter)
					at := 1700000000 + float64(step)*0.37 // spans over 512 s: chunks widen
					r := plainRes(id, cur.counter, at, scope, key, fps[rng.IntN(3)])
					nsI, _ := cat.admitted(cur.ns, cur.counter)
					if !cur.t.admit(cat, nsI, r) {
						t.Fatalf("step %d: plain reservation %q not kept in the log", step, key)
					}
					cur.model[resKey(scope, key)] = r
					seen[resKey(scope, key)] = r
				case op < 65: // change a reservation
					if ks := keys(cur); len(ks) > 0 {
						k := ks[rng.IntN(len(ks))]
						nr := *cur.model[k]
						nr.Status, nr.UpdatedAt = runs.Running, float64(step)
						nr.Record = []byte(`{"changed":` + fmt.Sprint(step) + `}`)
						cur.t.put(cat, &nr)
						cur.model[k] = &nr
					}
				case op < 77: // remove a reservation
					if ks := keys(cur); len(ks) > 0 {
						r := cur.model[ks[rng.IntN(len(ks))]]
						cur.t.del(cat, r.Scope, r.Key)
						delete(cur.model, resKey(r.Scope, r.Key))
					}
				case op < 78: // remove an absent one
					cur.t.del(cat, "s1", "absent")
				case op < 86: // snapshot
					saved = append(saved, cur.clone())
				case op < 94: // restore a snapshot (checkout): later admissions fork the log
					if len(saved) > 0 {
						cur = saved[rng.IntN(len(saved))].clone()
					}
				case op < 97: // another storage namespace continues the counter (a branch)
					cur.ns = nss[rng.IntN(len(nss))]
				default: // logical restart: every owner rewritten
					alive := rng.IntN(2) == 0
					cur.t.restarted(alive)
					for k, r := range cur.model {
						nr := *r
						nr.Owner.Local, nr.Owner.Alive = false, alive
						cur.model[k] = &nr
					}
				}
				if step%8 == 0 { // every lookup of every key ever seen: not after each step, or it takes long
					checkResVersion(t, step, cat, cur, seen)
				}
				if step%1000 == 0 {
					for _, v := range saved {
						checkResVersion(t, step, cat, v, seen)
					}
				}
			}
			for _, v := range saved {
				checkResVersion(t, -1, cat, v, seen)
			}
		})
	}
}

// TestResTableCollision: two runs whose ids are the same string (their 32-bit
// hashes collide) each keep their reservation under its own key; by run id the
// newer one answers, as in the run table.
func TestResTableCollision(t *testing.T) {
	n1, n2 := collidingCounters()
	id := runs.RunID("hermes", n1)
	cat := newCatalog()
	tab := newResTable()
	for n := int64(1); n <= n2; n++ {
		nsI, _ := cat.admitted("hermes", n)
		key := fmt.Sprint("k", n)
		if n != n1 && n != n2 {
			continue
		}
		if kept := tab.admit(cat, nsI, plainRes(id, n, float64(n), "s", key, "fp")); kept != (n == n1) {
			t.Fatalf("run %d kept in the log: %v", n, kept)
		}
		if n == n2 {
			tab.put(cat, &Reservation{Scope: "s", Key: key, Fingerprint: "fp", RunID: id, N: n,
				Owner: Owner{Scope: "s", Keyed: true, Local: true, Alive: true}, Status: runs.Queued, UpdatedAt: float64(n)})
		}
	}
	if r, ok := tab.ofRun(cat, id); !ok || r.Key != fmt.Sprint("k", n2) {
		t.Fatalf("ofRun(%s) = %+v %v, want the reservation of run %d", id, r, ok, n2)
	}
	for _, n := range []int64{n1, n2} {
		if r, ok := tab.get(cat, "s", fmt.Sprint("k", n)); !ok || r.UpdatedAt != float64(n) || r.RunID != id {
			t.Fatalf("get(k%d) = %+v %v", n, r, ok)
		}
	}
	if tab.len != 2 {
		t.Fatalf("len = %d, want 2", tab.len)
	}
}

// Runs n1 < n2 share a run id X; once n2's reservation is deleted (pruned),
// n1's answers for X again, however it is kept (a log entry or a record:
// review finding, they differed).
func TestResTableCollisionAfterDelete(t *testing.T) {
	n1, n2 := collidingCounters()
	id := runs.RunID("hermes", n1)
	found := func(plainN1 bool) bool {
		cat := newCatalog()
		tab := newResTable()
		nsI, _ := cat.admitted("hermes", n1)
		r1 := plainRes(id, n1, 1, "s", "k1", "fp")
		if plainN1 {
			if !tab.admit(cat, nsI, r1) {
				t.Fatal("n1 not kept in the log")
			}
		} else {
			r1.Record = []byte(`{"model":"m"}`)
			tab.put(cat, r1)
		}
		nsI, _ = cat.admitted("hermes", n2)
		if tab.admit(cat, nsI, plainRes(id, n2, 2, "s", "k2", "fp")) {
			t.Fatal("n2 kept in the log")
		}
		tab.put(cat, &Reservation{Scope: "s", Key: "k2", Fingerprint: "fp", RunID: id, N: n2,
			Owner: Owner{Scope: "s", Keyed: true, Local: true, Alive: true}, Status: runs.Completed, UpdatedAt: 2, Record: []byte(`{}`)})
		tab.del(cat, "s", "k2")
		_, ok := tab.ofRun(cat, id)
		return ok
	}
	if a, b := found(true), found(false); !a || !b {
		t.Fatalf("after the newer reservation is deleted, ofRun(X) finds the older one: plain %v, non-plain %v; want true, true", a, b)
	}
}

// TestResTableModelAcrossChunks is the model test over more than two chunks
// of the log (TestResTableModel stays within one), with keys of varying length,
// forks inside and at the end of chunks, restores, and counter and fingerprint
// columns that follow their rule in some chunks and not in others.
func TestResTableModelAcrossChunks(t *testing.T) {
	for seed := uint64(1); seed <= 1; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			cat := newCatalog()
			nss := []string{"hermes", runs.BranchStorageNS("default", "feature")}
			cur := &resVersion{t: newResTable(), model: map[string]*Reservation{}, ns: nss[0]}
			var saved []*resVersion
			seen := map[string]*Reservation{}
			for step := 0; step < 20000; step++ {
				switch op := rng.IntN(1000); {
				case op < 800:
					scope := []string{"s1", "s2"}[rng.IntN(2)]
					key := fmt.Sprintf("key-%d-%s", rng.IntN(40000), string(make([]byte, rng.IntN(40)+1)))
					if _, taken := cur.model[resKey(scope, key)]; taken {
						continue
					}
					// Consecutive counters and one fingerprint, with rare
					// exceptions: some chunks keep their columns as a rule
					// (lazyInts), others break it early or late.
					cur.counter++
					if rng.IntN(3000) == 0 {
						cur.counter++
					}
					fp := "fp"
					if rng.IntN(5000) == 0 {
						fp = "fp-rare"
					}
					id := runs.RunID(cur.ns, cur.counter)
					at := 1700000000 + float64(step)*0.37
					r := plainRes(id, cur.counter, at, scope, key, fp)
					nsI, _ := cat.admitted(cur.ns, cur.counter)
					if !cur.t.admit(cat, nsI, r) {
						continue // a colliding id: not modelled here
					}
					cur.model[resKey(scope, key)] = r
					seen[resKey(scope, key)] = r
				case op < 900:
					ks := make([]string, 0, len(cur.model))
					for k := range cur.model {
						ks = append(ks, k)
					}
					if len(ks) > 0 {
						sort.Strings(ks)
						r := cur.model[ks[rng.IntN(len(ks))]]
						cur.t.del(cat, r.Scope, r.Key)
						delete(cur.model, resKey(r.Scope, r.Key))
					}
				case op < 950:
					saved = append(saved, cur.clone())
				case op < 965:
					if len(saved) > 0 {
						cur = saved[len(saved)-1-rng.IntN(min(3, len(saved)))].clone()
					}
				default:
					cur.ns = nss[rng.IntN(len(nss))]
				}
				if step%3000 == 0 {
					checkResVersion(t, step, cat, cur, seen)
				}
			}
			checkResVersion(t, -1, cat, cur, seen)
			for range 30 {
				v := saved[rng.IntN(len(saved))]
				checkResVersion(t, -1, cat, v, seen)
			}
			if cur.t.log.n <= 2*slotChunk {
				t.Fatalf("the log holds %d entries, want more than %d", cur.t.log.n, 2*slotChunk)
			}
		})
	}
}

// Only what a log entry can hold is kept as one: a key over 255 characters
// (never valid, runs-api §6.1) or a counter beyond 32 bits stays a record.
func TestResTableAdmitRefuses(t *testing.T) {
	cat := newCatalog()
	tab := newResTable()
	nsI, _ := cat.admitted("hermes", 1)
	long := string(bytes.Repeat([]byte("k"), 256))
	for _, r := range []*Reservation{
		plainRes(runs.RunID("hermes", 1), 1, 1, "s", long, "fp"),
		plainRes(runs.RunID("hermes", 1<<32), 1<<32, 1, "s", "k", "fp"),
	} {
		if tab.admit(cat, nsI, r) {
			t.Fatalf("admit(key %d chars, n %d) kept it in the log", len(r.Key), r.N)
		}
	}
	if !tab.admit(cat, nsI, plainRes(runs.RunID("hermes", 1), 1, 1, "s", long[:255], "fp")) || tab.len != 1 {
		t.Fatalf("a 255-character key was refused (len %d)", tab.len)
	}
}

// FuzzChunkKeys: any sequence of keys of 1–255 bytes (the fuzz input split at
// NUL) reads back whole from the chunk and from every prefix, and no key
// reads as another.
func FuzzChunkKeys(f *testing.F) {
	f.Add([]byte("order-17-a\x00order-17-b\x00order-1\x00x\x00order-17-abc"))
	f.Add([]byte("k\x00k\x00kk\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var keys []string
		for _, k := range strings.Split(string(in), "\x00") {
			if len(k) >= 1 && len(k) <= 255 {
				keys = append(keys, k)
			}
		}
		var k chunkKeys
		for _, key := range keys {
			k.push(key)
		}
		for r := 0; r <= len(keys); r++ {
			p := k.prefix(r)
			for j := range r {
				if got := string(p.appendKey(nil, j)); got != keys[j] {
					t.Fatalf("prefix(%d) key %d = %q, want %q", r, j, got, keys[j])
				}
				for i, other := range keys[:r] {
					if p.is(j, other) != (other == keys[j]) {
						t.Fatalf("prefix(%d): is(%d, %q) = %v; key %d is %q", r, j, other, !(other == keys[j]), i, keys[j])
					}
				}
			}
		}
	})
}

package timeline

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// model is the timeline's reference: every checkpoint in a slice, retention
// by scanning from the oldest, protection counted by walking heads and pins.
type model struct {
	max   int
	all   []Info // every checkpoint ever committed, in order
	kept  map[string]bool
	heads map[string]string
	pins  map[string]string // live snapshot id → checkpoint id
	stubs map[string]bool   // snapshot ids of a dropped timeline
}

func newModel(max int) *model {
	return &model{max: max, kept: map[string]bool{}, heads: map[string]string{}, pins: map[string]string{}, stubs: map[string]bool{}}
}

func (m *model) protected(id string) bool {
	for _, h := range m.heads {
		if h == id {
			return true
		}
	}
	for _, p := range m.pins {
		if p == id {
			return true
		}
	}
	return false
}

// commit is Commit with fakeHost's captures: the n-th is n, at n, n%5 records.
func (m *model) commit(branch string) {
	n := len(m.all) + 1
	c := Info{ID: cp(int64(n)), Branch: branch, Parent: m.heads[branch], At: float64(n), Records: n % 5}
	m.all = append(m.all, c)
	m.kept[c.ID] = true
	m.heads[branch] = c.ID
	m.evict()
}

// evict discards the oldest unprotected checkpoints while more than max are
// kept: after every commit and every change of what is protected.
func (m *model) evict() {
	for _, old := range m.all {
		if len(m.kept) <= m.max {
			break
		}
		if m.kept[old.ID] && !m.protected(old.ID) {
			delete(m.kept, old.ID)
		}
	}
}

func (m *model) retained() []Info {
	var out []Info
	for _, c := range m.all {
		if m.kept[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

var modelBranches = []string{"main", "a", "b", "c"}

// world is what the model test drives: a timeline, the snapshots and the
// reference model.
type world struct {
	tl *Timeline[int]
	s  Snapshots[int]
	m  *model
}

// step applies one operation chosen by op and arg to the timeline, the
// snapshots and the model.
func (w *world) step(t testing.TB, op, arg byte) {
	branch := modelBranches[int(arg)%len(modelBranches)]
	kept := w.m.retained()
	snap := fmt.Sprint("snap_", 1+int(arg)%(w.s.seq+1))
	switch op % 7 {
	case 0, 1: // commit
		w.tl.Commit(branch)
		w.m.commit(branch)
	case 2: // point a branch at a retained checkpoint
		if len(kept) > 0 {
			id := kept[int(arg)%len(kept)].ID
			c, err := w.tl.get(id)
			if err != nil {
				t.Fatalf("get(%s): %v", id, err)
			}
			w.tl.setHead(branch, c)
			w.m.heads[branch] = id
			w.m.evict()
		}
	case 3: // pin a retained checkpoint
		if len(kept) > 0 {
			id := kept[int(arg)%len(kept)].ID
			c, _ := w.tl.get(id)
			w.m.pins[w.s.Pin("ns", w.tl, c)] = id
		}
	case 4: // delete a snapshot
		_, live := w.m.pins[snap]
		if err := w.s.Delete(snap); (err == nil) != (live || w.m.stubs[snap]) {
			t.Fatalf("Delete(%s) = %v", snap, err)
		}
		delete(w.m.pins, snap)
		delete(w.m.stubs, snap)
		w.m.evict()
	case 5: // restore a snapshot
		c, err := w.s.Find("ns", snap, w.tl)
		if want, live := w.m.pins[snap]; live != (err == nil) || live && c.ID != want {
			t.Fatalf("Find(%s) = %v, %v; model %q %v", snap, c, err, want, live)
		}
	case 6: // reset, rarely: a new timeline; the old one's snapshots are stubs
		if arg%8 == 0 {
			w.s.Drop(w.tl)
			old := w.m
			w.tl, _ = newTimeline(old.max)
			w.m = newModel(old.max)
			for id := range old.pins {
				old.stubs[id] = true
			}
			w.m.stubs = old.stubs
		}
	}
}

// check compares the timeline with the model and checks the invariants.
func (w *world) check(t testing.TB, step int) {
	t.Helper()
	got := w.tl.List()
	if want := w.m.retained(); !slices.Equal(got.Checkpoints, want) {
		t.Fatalf("step %d: retained %v, model %v", step, got.Checkpoints, want)
	}
	if len(got.Branches) != len(w.m.heads) {
		t.Fatalf("step %d: branches %v, model %v", step, got.Branches, w.m.heads)
	}
	for _, b := range got.Branches {
		if w.m.heads[b.Name] != b.Head {
			t.Fatalf("step %d: head of %s %s, model %s", step, b.Name, b.Head, w.m.heads[b.Name])
		}
	}
	if err := w.tl.Check(); err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
	if err := w.s.Check(); err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
}

func runModel(t testing.TB, max int, ops []byte) {
	tl, _ := newTimeline(max)
	w := &world{tl: tl, m: newModel(max)}
	for i := 0; i+1 < len(ops); i += 2 {
		w.step(t, ops[i], ops[i+1])
		w.check(t, i/2)
	}
}

// TestModel drives random commits, heads, pins, deletes, restores and resets
// and compares the timeline with the reference after every step.
func TestModel(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 17))
		ops := make([]byte, 4000)
		for i := range ops {
			ops[i] = byte(rng.IntN(256))
		}
		runModel(t, 1+int(seed%6), ops)
	}
}

// FuzzModel is TestModel driven by the fuzzer (scripts/fuzz).
func FuzzModel(f *testing.F) {
	f.Add(byte(3), []byte{0, 0, 3, 0, 0, 1, 2, 1, 0, 0, 4, 0, 0, 0, 6, 0, 5, 1})
	f.Fuzz(func(t *testing.T, max byte, ops []byte) {
		runModel(t, 1+int(max%8), ops)
	})
}

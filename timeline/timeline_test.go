package timeline

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// cp is the id of the n-th checkpoint of a timeline.
func cp(n int64) string { return runs.CheckpointID(n) }

// script drives a timeline by short steps: "c b" commits on branch b,
// "h b n" points b at checkpoint n, "p n" pins checkpoint n, "u n" deletes
// the n-th snapshot.
func script(t *testing.T, tl *Timeline[int], s *Snapshots[int], steps string) {
	t.Helper()
	for step := range strings.SplitSeq(steps, ",") {
		f := strings.Fields(step)
		var n int64
		if len(f) > 1 {
			fmt.Sscan(f[len(f)-1], &n)
		}
		switch f[0] {
		case "c":
			tl.Commit(f[1])
		case "h":
			c, err := tl.get(cp(n))
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			tl.setHead(f[1], c)
		case "p":
			c, err := tl.get(cp(n))
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			s.Pin("ns", tl, c)
		case "u":
			if err := s.Delete(fmt.Sprint("snap_", n)); err != nil {
				t.Fatalf("%s: %v", step, err)
			}
		}
		if err := tl.Check(); err != nil {
			t.Fatalf("after %q: %v", step, err)
		}
		if err := s.Check(); err != nil {
			t.Fatalf("after %q: %v", step, err)
		}
	}
}

func retained(tl *Timeline[int]) []string {
	var ids []string
	for _, c := range tl.List().Checkpoints {
		ids = append(ids, c.ID)
	}
	return ids
}

// Retention (controls §8.1): past max, the oldest checkpoints that are
// neither a branch head nor pinned are evicted, as soon as they are neither.
func TestRetention(t *testing.T) {
	for _, tc := range []struct {
		name  string
		max   int
		steps string
		want  []int64
	}{
		{"under max", 3, "c main,c main,c main", []int64{1, 2, 3}},
		{"oldest first", 2, "c main,c main,c main,c main", []int64{3, 4}},
		{"max 1 keeps the head", 1, "c main,c main,c main", []int64{3}},
		{"a head is kept", 2, "c main,h old 1,c main,c main,c main", []int64{1, 4}},
		{"heads over max", 1, "c main,h a 1,c main,h b 2,c main", []int64{1, 2, 3}},
		{"a moved head releases", 2, "c main,h old 1,c main,h old 2,c main,c main", []int64{2, 4}},
		{"a pin is kept", 2, "c main,p 1,c main,c main,c main", []int64{1, 4}},
		{"an unpin under max evicts nothing", 2, "c main,p 1,c main,c main,u 1", []int64{1, 3}},
		{"an unpin over max evicts at once", 2, "c main,p 1,c main,p 2,c main,u 1", []int64{2, 3}},
		{"unpinned, then evicted", 2, "c main,p 1,c main,c main,u 1,c main", []int64{3, 4}},
		{"pinned twice, unpinned once", 2, "c main,p 1,p 1,c main,u 1,c main,c main", []int64{1, 4}},
		{"branches share retention", 3, "c main,c a,c b,c main,c a", []int64{3, 4, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl, _ := newTimeline(tc.max)
			s := &Snapshots[int]{}
			script(t, tl, s, tc.steps)
			want := []string{}
			for _, n := range tc.want {
				want = append(want, cp(n))
			}
			if got := retained(tl); !slices.Equal(got, want) {
				t.Fatalf("retained %v, want %v", got, want)
			}
		})
	}
}

// Hardening H7: however many checkpoints snapshots pin or branch heads hold,
// committing costs O(1) amortised retention work (Examined); the protected
// ones are never walked past.
func TestRetentionWork(t *testing.T) {
	const commits, limit = 1000, 10
	for _, tc := range []struct{ pinned, branches int }{{0, 0}, {1000, 0}, {0, 1000}, {500, 500}} {
		t.Run(fmt.Sprintf("pinned=%d,branches=%d", tc.pinned, tc.branches), func(t *testing.T) {
			tl, _ := newTimeline(limit)
			s := &Snapshots[int]{}
			for i := range tc.pinned + tc.branches {
				c := tl.Commit("main")
				if i < tc.pinned {
					s.Pin("ns", tl, c)
				} else {
					tl.setHead(fmt.Sprint("b", i), c)
				}
			}
			before := tl.Examined()
			for range commits {
				tl.Commit("main")
			}
			if work := tl.Examined() - before; work > 2*commits {
				t.Fatalf("%d checkpoints examined for %d commits", work, commits)
			}
			// The protected ones and main's head stay; nothing else beyond limit.
			if n, want := len(tl.List().Checkpoints), max(tc.pinned+tc.branches+1, limit); n != want {
				t.Fatalf("%d checkpoints retained, want %d", n, want)
			}
			if err := tl.Check(); err != nil {
				t.Fatal(err)
			}
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Commit, lookups and the listing (controls §8.3, §8.5, hardening H9).
func TestCommitAndLookups(t *testing.T) {
	tl, h := newTimeline(2)
	a := tl.Commit("main")
	tl.setHead("feature", a)
	b := tl.Commit("feature")
	c := tl.Commit("main") // evicts a, no longer a head
	d := tl.Commit("main") // evicts c
	if want := (Info{ID: cp(2), Branch: "feature", Parent: cp(1), At: 2, Records: 2}); b.Info != want || b.State != 2 {
		t.Fatalf("b = %+v, want %+v", b, want)
	}
	if a.Parent != "" || c.Parent != a.ID || d.Parent != c.ID || d.State != 4 {
		t.Fatalf("parents: %q %q %q", a.Parent, c.Parent, d.Parent)
	}
	if got := h.took(); got != "commit main cp_00000001; commit feature cp_00000002; commit main cp_00000003; commit main cp_00000004" {
		t.Fatalf("host heard %s", got)
	}
	want := Listing{
		Branches:    []BranchHead{{"feature", b.ID}, {"main", d.ID}},
		Checkpoints: []Info{b.Info, d.Info},
	}
	got := tl.List()
	if !slices.Equal(got.Branches, want.Branches) || !slices.Equal(got.Checkpoints, want.Checkpoints) {
		t.Fatalf("List() = %+v, want %+v", got, want)
	}
	long := strings.Repeat("x", 5000)
	for _, tc := range []struct {
		id   string
		at   bool
		want *Checkpoint[int]
		err  string
	}{
		{id: b.ID, want: b},
		{id: b.ID, at: true, want: b},
		{id: "", at: true},
		{id: "", err: "no checkpoint "},
		{id: a.ID, err: "no checkpoint " + a.ID}, // evicted
		{id: "cp_nope", at: true, err: "no checkpoint cp_nope"},
		{id: long, err: "no checkpoint " + long[:runs.EchoLimit]},
	} {
		get := tl.get
		if tc.at {
			get = tl.lookup
		}
		c, err := get(tc.id)
		if tc.err != "" {
			if c != nil || err == nil || err.Status != 409 || err.Message != tc.err {
				t.Fatalf("get(%.20q) = %v, %+v; want 409 %q", tc.id, c, err, tc.err)
			}
		} else if c != tc.want || err != nil {
			t.Fatalf("get(%.20q) = %v, %v", tc.id, c, err)
		}
	}
	if tl.Head("feature") != b || tl.Head("nope") != nil {
		t.Fatal("Head")
	}
}

// The free list hands out the oldest waiting checkpoint, whether it was
// released in order (queued) or out of order (late), and keeps its queue
// short as it is consumed.
func TestFreeList(t *testing.T) {
	var f freeList[int]
	push := func(seqs ...int64) {
		for _, s := range seqs {
			f.push(&Checkpoint[int]{seq: s})
		}
	}
	pop := func(n int) (got []int64) {
		for range n {
			got = append(got, f.pop().seq)
		}
		return got
	}
	push(1, 2, 3, 10, 5, 4, 11)
	if got := pop(7); !slices.Equal(got, []int64{1, 2, 3, 4, 5, 10, 11}) || f.len() != 0 {
		t.Fatalf("popped %v, %d left", got, f.len())
	}
	// A long run in order, consumed as it goes: the queue drops what it popped.
	for i := int64(100); i < 1100; i++ {
		push(i)
		if i%2 == 1 {
			if got := pop(2); got[0] != i-1 || got[1] != i {
				t.Fatalf("popped %v at %d", got, i)
			}
		}
	}
	if f.len() != 0 || cap(f.fifo) > 256 {
		t.Fatalf("%d waiting, queue capacity %d", f.len(), cap(f.fifo))
	}
}

// Checkouts release checkpoints without committing: switching main between two
// checkpoints again and again keeps the free list within its bound (Check).
func TestRepeatedCheckoutsKeepFreeBounded(t *testing.T) {
	tl, _ := newTimeline(10)
	a, b := tl.Commit("main"), tl.Commit("main")
	for i := range 10000 {
		c := a
		if i%2 == 1 {
			c = b
		}
		if err := tl.Checkout("main", c.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := tl.Check(); err != nil {
		t.Fatal(err)
	}
}

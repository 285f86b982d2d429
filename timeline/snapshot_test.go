package timeline

import (
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Snapshots (controls §8.7): ids in order, restores checked against the
// namespace and its current timeline, deletes and resets (Drop), with the
// exact status and message of every refusal.
func TestSnapshots(t *testing.T) {
	a, _ := newTimeline(1)
	b, _ := newTimeline(1)
	var s Snapshots[int]
	ca := a.Commit("main")
	cb := b.Commit("main")
	if id := s.Pin("a", a, ca); id != "snap_1" {
		t.Fatalf("first id %s", id)
	}
	if id := s.Pin("b", b, cb); id != "snap_2" {
		t.Fatalf("second id %s", id)
	}
	a.Commit("main")
	a.Commit("main") // max 1: evicts a2, not the pinned a1
	if _, err := a.get(ca.ID); err != nil {
		t.Fatal("the pinned checkpoint was evicted")
	}
	long := strings.Repeat("y", 5000)
	for _, tc := range []struct {
		name, ns, id string
		tl           *Timeline[int]
		want         *Checkpoint[int]
		status       int
		msg          string
	}{
		{"restore", "a", "snap_1", a, ca, 0, ""},
		{"unknown id", "a", "snap_9", a, nil, 404, "no snapshot snap_9"},
		{"long id", "a", long, a, nil, 404, "no snapshot " + long[:runs.EchoLimit]},
		{"another namespace", "a", "snap_2", a, nil, 409, "snapshot snap_2 belongs to namespace b"},
		{"another timeline", "a", "snap_1", b, nil, 409, "no checkpoint " + ca.ID},
		{"no timeline", "a", "snap_1", nil, nil, 409, "no checkpoint " + ca.ID},
	} {
		c, err := s.Find(tc.ns, tc.id, tc.tl)
		if tc.status == 0 {
			if c != tc.want || err != nil {
				t.Fatalf("%s: %v %v", tc.name, c, err)
			}
			continue
		}
		if c != nil || err == nil || err.Status != tc.status || err.Message != tc.msg {
			t.Fatalf("%s: %v %+v, want %d %q", tc.name, c, err, tc.status, tc.msg)
		}
	}

	// A reset (Drop) leaves a stub that holds nothing of the timeline and
	// restores nothing; other timelines' snapshots are untouched.
	s.Drop(nil)
	s.Drop(a)
	if sn := s.m["snap_1"]; sn.tl != nil || sn.cp != nil || sn.cpID != ca.ID {
		t.Fatalf("the stub still holds the timeline: %+v", sn)
	}
	if _, err := s.Find("a", "snap_1", New[int](1, newHost())); err == nil || err.Status != 409 || err.Message != "no checkpoint "+ca.ID {
		t.Fatalf("restore of a stub: %+v", err)
	}
	if c, err := s.Find("b", "snap_2", b); c != cb || err != nil {
		t.Fatalf("the other namespace's snapshot: %v %v", c, err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}

	// Delete unpins; the id is never reused.
	for _, id := range []string{"snap_1", "snap_2"} {
		if err := s.Delete(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete("snap_2"); err == nil || err.Status != 404 || err.Message != "no snapshot snap_2" {
		t.Fatalf("second delete: %+v", err)
	}
	if cb.pins != 0 {
		t.Fatalf("pins after delete: %d", cb.pins)
	}
	b.Commit("main") // cb, unpinned and no head, goes
	if _, err := b.get(cb.ID); err == nil {
		t.Fatal("the unpinned checkpoint is still retained")
	}
	if id := s.Pin("b", b, b.Head("main")); id != "snap_3" {
		t.Fatalf("id after deletes %s", id)
	}
}

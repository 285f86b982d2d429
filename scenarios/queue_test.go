package scenarios

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestQueueOrder(t *testing.T) {
	var q Queue
	notified := 0
	q.Notify = func() { notified++ }
	e := func(ns, run string, due float64, order, seq uint64) Entry {
		return Entry{Key{ns, run}, due, order, seq}
	}
	// Due time first, then admission order, then step order.
	q.set(e("b", "r3", 20, 3, 0))
	q.set(e("a", "r2", 10, 2, 5))
	q.set(e("a", "r1", 10, 1, 9))
	q.set(e("z", "r4", 10, 1, 2)) // same order (another namespace's run): step order
	q.set(e("a", "r5", 30, 0, 0))
	if notified != 4 {
		t.Fatalf("notified %d times, want 4 (each new earliest)", notified)
	}
	// Replacing a run's entry moves it.
	q.set(e("a", "r5", 5, 0, 1))
	if notified != 5 || q.Check() != nil || q.Len() != 5 {
		t.Fatalf("notified %d, check %v, len %d", notified, q.Check(), q.Len())
	}
	var got []string
	q.Drain(20, func(x Entry) {
		got = append(got, x.Run)
		if x.Run == "r2" && x.Seq == 5 { // a step with after 0s fires in the same drain
			q.set(e("a", "r2", 10, 2, 6))
		}
		if q.Check() != nil {
			t.Fatal("invariants broken")
		}
	})
	want := []string{"r5", "r4", "r1", "r2", "r2", "r3"}
	if !slices.Equal(got, want) || q.Len() != 0 {
		t.Fatalf("drained %v, want %v (left %d)", got, want, q.Len())
	}
	q.set(e("a", "x", 40, 0, 0))
	q.set(e("b", "y", 50, 0, 0))
	q.set(e("a", "z", 60, 0, 0))
	if _, ok := q.pop(39.9); ok {
		t.Fatal("popped an entry not yet due")
	}
	q.RemoveNS("a")
	q.remove(Key{"nope", "x"})
	if f, ok := q.Earliest(); !ok || f.Run != "y" || q.Len() != 1 || q.Check() != nil {
		t.Fatalf("after RemoveNS: %+v %d", f, q.Len())
	}
	q.remove(Key{"b", "y"})
	if _, ok := q.Earliest(); ok || q.Check() != nil {
		t.Fatal("not empty")
	}
}

// TestQueueModel compares the queue with a plain map sorted on demand.
func TestQueueModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q Queue
	model := map[Key]Entry{}
	for i := 0; i < 5000; i++ {
		k := Key{string(rune('a' + rng.IntN(3))), string(rune('a' + rng.IntN(20)))}
		switch rng.IntN(4) {
		case 0, 1:
			e := Entry{k, float64(rng.IntN(50)), uint64(rng.IntN(5)), uint64(rng.IntN(5))}
			q.set(e)
			model[k] = e
		case 2:
			q.remove(k)
			delete(model, k)
		case 3:
			limit := float64(rng.IntN(50))
			var want []Entry
			for _, e := range model {
				if e.Due <= limit {
					want = append(want, e)
				}
			}
			slices.SortFunc(want, func(a, b Entry) int {
				if a.before(b) {
					return -1
				}
				return 1
			})
			var got []Entry
			q.Drain(limit, func(e Entry) { got = append(got, e); delete(model, e.Key) })
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: drained %v, want %v", i, got, want)
			}
		}
		if q.Check() != nil || q.Len() != len(model) {
			t.Fatalf("step %d: check %v len %d model %d", i, q.Check(), q.Len(), len(model))
		}
	}
}

// Follow keeps a run's entry equal to its cursor's while a step is due and
// removes it while the cursor waits or is gone; Until is the wait for the
// earliest entry.
func TestFollowUntil(t *testing.T) {
	sc := testScenario(t)
	var q Queue
	k := Key{"ns", "r"}
	if _, ok := q.Until(0); ok {
		t.Fatal("Until of an empty queue")
	}
	for _, c := range []struct {
		name string
		cur  Cursor
		ok   bool
		want bool // an entry is queued
	}{
		{"due", Start(sc, 1, 1000), true, true},
		{"waiting for an answer", Cursor{Scenario: sc, Next: 2, Due: 1100, Waiting: true}, true, false},
		{"due again", Cursor{Scenario: sc, Next: 2, Due: 1500}, true, true},
		{"gone", Cursor{Scenario: sc, Due: 1500}, false, false},
	} {
		q.Follow(k, c.cur, c.ok)
		e, queued := q.Earliest()
		if queued != c.want || (queued && e != (Entry{Key: k, Due: c.cur.Due, Order: c.cur.Order, Seq: c.cur.Seq})) || q.Check() != nil {
			t.Fatalf("%s: queued %v %+v", c.name, queued, e)
		}
		if wait, ok := q.Until(1000); ok != c.want || (ok && wait != time.Duration(c.cur.Due-1000)*time.Millisecond) {
			t.Fatalf("%s: Until = %v %v", c.name, wait, ok)
		}
	}
}

// A step due further away than a time.Duration reaches (after 1e13 ms,
// about 317 years; or a running clock set far back) is waited for MaxWait (24h) at a
// time: converted whole it wrapped to a negative wait, and the runner ticked
// without pause, one core at 100% while the clock ran.
func TestUntilFarAway(t *testing.T) {
	sc := testScenario(t)
	for _, far := range []float64{1e13, 8.64e15, 2 * 8.64e15} {
		var q Queue
		q.Follow(Key{"ns", "r"}, Cursor{Scenario: sc, Due: -8.64e15 + far}, true)
		if wait, ok := q.Until(-8.64e15); !ok || wait != 24*time.Hour {
			t.Fatalf("due %v ms away: Until = %v %v, want 24h", far, wait, ok)
		}
	}
	var q Queue
	q.Follow(Key{"ns", "r"}, Cursor{Scenario: sc, Due: 1000 + 23*3600e3}, true)
	if wait, _ := q.Until(1000); wait != 23*time.Hour {
		t.Fatalf("due in 23h: Until = %v", wait)
	}
}

// A running clock stands still at the edge of its range (8.64e15 ms): a step
// due past it falls due only when the clock is moved (which kicks the runner),
// so it is waited for MaxWait — waiting the difference, the runner woke every
// millisecond for ever once a run was admitted at the edge with after 1ms.
func TestUntilPastTheClockRange(t *testing.T) {
	sc := testScenario(t)
	var q Queue
	q.Follow(Key{"ns", "r"}, Cursor{Scenario: sc, Due: 8.64e15 + 1}, true)
	if wait, ok := q.Until(8.64e15); !ok || wait != MaxWait {
		t.Fatalf("due past the edge: Until = %v %v, want %v", wait, ok, MaxWait)
	}
	q.Follow(Key{"ns", "r"}, Cursor{Scenario: sc, Due: 8.64e15}, true)
	if wait, ok := q.Until(8.64e15 - 5); !ok || wait != 5*time.Millisecond {
		t.Fatalf("due at the edge: Until = %v %v, want 5ms", wait, ok)
	}
}

package scenarios

import (
	"container/heap"
	"fmt"
	"time"
)

// Key names a scenario-driven run: its namespace and run id (runs move only
// on their namespace's main branch).
type Key struct{ NS, Run string }

// Entry is a run's next due step in the Queue.
type Entry struct {
	Key
	Due   float64 // emulator ms
	Order uint64  // the cursor's admission order
	Seq   uint64  // the cursor's Seq (step order within the run)
}

// Entry is the queue entry of the cursor of run k; ok is false while the
// cursor waits for an approval (nothing is due).
func (c Cursor) Entry(k Key) (Entry, bool) {
	return Entry{Key: k, Due: c.Due, Order: c.Order, Seq: c.Seq}, !c.Waiting
}

// before is the firing order (scenarios §2): due time, then admission
// order, then step order; namespace and run id make it total.
func (e Entry) before(f Entry) bool {
	switch {
	case e.Due != f.Due:
		return e.Due < f.Due
	case e.Order != f.Order:
		return e.Order < f.Order
	case e.Seq != f.Seq:
		return e.Seq < f.Seq
	case e.NS != f.NS:
		return e.NS < f.NS
	}
	return e.Run < f.Run
}

// Queue holds at most one entry per run — its next due step — earliest first.
// It is not safe for concurrent use: its owner (the gateway) serialises calls.
// Notify, when set, is called whenever the earliest entry becomes earlier (a
// timer waiting for the old earliest must wake up sooner).
type Queue struct {
	Notify func()
	h      entryHeap
	at     map[Key]int // position of each run's entry in h
}

// Len is the number of runs with a due step.
func (q *Queue) Len() int { return len(q.h.es) }

// set schedules e, replacing the run's previous entry.
func (q *Queue) set(e Entry) {
	if q.at == nil {
		q.at = map[Key]int{}
		q.h.at = q.at
	}
	first, had := q.Earliest()
	if i, ok := q.at[e.Key]; ok {
		q.h.es[i] = e
		heap.Fix(&q.h, i)
	} else {
		heap.Push(&q.h, e)
	}
	if q.Notify != nil && (!had || e.before(first)) {
		q.Notify()
	}
}

// remove drops the run's entry, if any.
func (q *Queue) remove(k Key) {
	if i, ok := q.at[k]; ok {
		heap.Remove(&q.h, i)
	}
}

// RemoveNS drops every entry of namespace ns.
func (q *Queue) RemoveNS(ns string) {
	for k := range q.at {
		if k.NS == ns {
			q.remove(k)
		}
	}
}

// Earliest is the first entry to fire; ok is false when the queue is empty.
func (q *Queue) Earliest() (Entry, bool) {
	if len(q.h.es) == 0 {
		return Entry{}, false
	}
	return q.h.es[0], true
}

// pop removes and returns the earliest entry when it is due at or before limit.
func (q *Queue) pop(limit float64) (Entry, bool) {
	e, ok := q.Earliest()
	if !ok || e.Due > limit {
		return Entry{}, false
	}
	heap.Pop(&q.h)
	return e, true
}

// Follow makes run k's entry follow its cursor c (ok false: the run has
// none): c's entry while a step is due, no entry while the cursor waits for
// an answer or is gone.
func (q *Queue) Follow(k Key, c Cursor, ok bool) {
	if e, due := c.Entry(k); ok && due {
		q.set(e)
		return
	}
	q.remove(k)
}

// Until is how long after now (emulator ms) the earliest entry falls due,
// as a Host's Tick answers, at most MaxWait; ok is false when nothing is
// queued.
func (q *Queue) Until(now float64) (wait time.Duration, ok bool) {
	e, ok := q.Earliest()
	if !ok {
		return 0, false
	}
	// A step may fall due further away than a Duration reaches (after up to
	// 8.64e15 ms, or a clock set far back): converted, it would wrap negative
	// and the runner would tick without pause. The runner ticks again at
	// MaxWait and waits on. A step due past the clock's range never falls due
	// as time passes — a running clock stands still at the edge — but only when
	// the clock is moved, which kicks the runner: waiting the difference, the
	// runner ticked again and again at the edge, for ever.
	if ms := e.Due - now; ms < float64(MaxWait/time.Millisecond) && e.Due <= maxAfterMs {
		return time.Duration(ms * float64(time.Millisecond)), true
	}
	return MaxWait, true
}

// MaxWait is the longest wait Until answers.
const MaxWait = 24 * time.Hour

// Drain fires, in order, every entry due at or before limit, including those
// that fire schedules on the way (a step with after 0s fires in the same
// drain). fire is given each entry once it has left the queue.
func (q *Queue) Drain(limit float64, fire func(Entry)) {
	for {
		e, ok := q.pop(limit)
		if !ok {
			return
		}
		fire(e)
	}
}

// Check verifies the queue's invariants (heap order, index map). It walks
// everything: the model tests call it (this package's and the gateway's).
func (q *Queue) Check() error {
	if len(q.at) != len(q.h.es) {
		return fmt.Errorf("queue: index holds %d runs, heap %d entries", len(q.at), len(q.h.es))
	}
	for i, e := range q.h.es {
		if q.at[e.Key] != i {
			return fmt.Errorf("queue: index puts %v at %d, heap at %d", e.Key, q.at[e.Key], i)
		}
		if i > 0 && e.before(q.h.es[(i-1)/2]) {
			return fmt.Errorf("queue: entry %d comes before its parent", i)
		}
	}
	return nil
}

// entryHeap is a container/heap of entries that keeps each run's position in at.
type entryHeap struct {
	es []Entry
	at map[Key]int
}

func (h *entryHeap) Len() int           { return len(h.es) }
func (h *entryHeap) Less(i, j int) bool { return h.es[i].before(h.es[j]) }
func (h *entryHeap) Swap(i, j int) {
	h.es[i], h.es[j] = h.es[j], h.es[i]
	h.at[h.es[i].Key] = i
	h.at[h.es[j].Key] = j
}
func (h *entryHeap) Push(x any) {
	e := x.(Entry)
	h.at[e.Key] = len(h.es)
	h.es = append(h.es, e)
}
func (h *entryHeap) Pop() any {
	e := h.es[len(h.es)-1]
	h.es = h.es[:len(h.es)-1]
	delete(h.at, e.Key)
	return e
}

// Entries returns every entry, in no particular order (invariant checks).
func (q *Queue) Entries() []Entry { return append([]Entry(nil), q.h.es...) }

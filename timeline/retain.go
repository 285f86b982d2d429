package timeline

import "container/heap"

// Retention (controls §8.1, hardening H7): the checkpoints that no branch head
// or snapshot protects wait in a free list, oldest first, so a commit evicts
// the oldest without walking past protected ones.

// release queues c for eviction once nothing protects it, and evicts what
// retention no longer keeps: at most max checkpoints besides the protected
// ones at all times, not only after the next commit (a checkout, a moved
// branch or a deleted snapshot release one without committing).
func (t *Timeline[S]) release(c *Checkpoint[S]) {
	if !c.protected() && !c.gone {
		t.free.push(c)
		t.retain()
	}
}

// retain discards the oldest checkpoints that are neither a branch head nor
// pinned by a snapshot, down to max (controls §8.1).
func (t *Timeline[S]) retain() {
	for len(t.cps) > t.max && t.free.len() > 0 {
		c := t.free.pop()
		t.seen++
		if c.gone || c.protected() {
			continue // stale: evicted already, or protected since (released again later)
		}
		c.gone = true
		delete(t.cps, c.ID)
	}
	t.compact()
}

// compact drops the evicted checkpoints from order and the stale entries of
// free once they are over half (and over 64): both stay within twice the
// checkpoints kept, at O(1) amortised.
func (t *Timeline[S]) compact() {
	if n := len(t.order); n > 64 && n > 2*len(t.cps) {
		live := make([]*Checkpoint[S], 0, len(t.cps))
		for _, c := range t.order {
			if !c.gone {
				live = append(live, c)
			}
		}
		t.order = live
	}
	if n := t.free.len(); n > 64 && n > 2*len(t.cps) {
		var waiting []*Checkpoint[S]
		for _, c := range t.order {
			if !c.gone && !c.protected() {
				waiting = append(waiting, c)
			}
		}
		t.free.reset(waiting)
	}
}

// freeList holds the unprotected checkpoints, oldest (lowest seq) first;
// entries may be stale (evicted, or protected again), and retain skips them.
// Most checkpoints are released in the order they were made — a branch's head
// moves on, and its old head is the newest unprotected checkpoint — so they
// queue at the back of fifo, in order, at O(1). One released out of order (the
// old head of a branch that was idle, the checkpoint of a deleted snapshot)
// waits in the late heap instead. The oldest is the older of fifo's front and
// late's top, so pushing and popping cost O(1) amortised while releases come
// in order, and O(log k) for the k waiting out of order.
type freeList[S any] struct {
	fifo []*Checkpoint[S] // fifo[head:] wait, in ascending seq
	head int
	late ageHeap[S]
}

func (f *freeList[S]) len() int { return len(f.fifo) - f.head + len(f.late) }

func (f *freeList[S]) push(c *Checkpoint[S]) {
	if n := len(f.fifo); n == f.head || f.fifo[n-1].seq < c.seq {
		f.fifo = append(f.fifo, c)
		return
	}
	heap.Push(&f.late, c)
}

// pop removes and returns the oldest waiting checkpoint (f is not empty).
func (f *freeList[S]) pop() *Checkpoint[S] {
	if len(f.late) > 0 && (f.head == len(f.fifo) || f.late[0].seq < f.fifo[f.head].seq) {
		return heap.Pop(&f.late).(*Checkpoint[S])
	}
	c := f.fifo[f.head]
	f.fifo[f.head] = nil
	f.head++
	if f.head > 64 && f.head > len(f.fifo)/2 { // drop the popped prefix
		n := copy(f.fifo, f.fifo[f.head:])
		clear(f.fifo[n:])
		f.fifo, f.head = f.fifo[:n], 0
	}
	return c
}

// reset makes f hold exactly cs, which are in ascending seq.
func (f *freeList[S]) reset(cs []*Checkpoint[S]) {
	clear(f.late)
	f.fifo, f.head, f.late = cs, 0, f.late[:0]
}

// each calls fn with every waiting entry (Check).
func (f *freeList[S]) each(fn func(*Checkpoint[S])) {
	for _, c := range f.fifo[f.head:] {
		fn(c)
	}
	for _, c := range f.late {
		fn(c)
	}
}

// ageHeap is a min-heap of checkpoints by seq (age).
type ageHeap[S any] []*Checkpoint[S]

func (h ageHeap[S]) Len() int           { return len(h) }
func (h ageHeap[S]) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h ageHeap[S]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *ageHeap[S]) Push(x any)        { *h = append(*h, x.(*Checkpoint[S])) }
func (h *ageHeap[S]) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return c
}

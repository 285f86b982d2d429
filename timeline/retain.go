package timeline

import "container/heap"

// Retention (controls §8.1, hardening H7): the checkpoints that no branch head
// or snapshot protects wait in a min-heap by age, so a commit evicts the
// oldest without walking past protected ones.

// release queues c for eviction once nothing protects it.
func (t *Timeline[S]) release(c *Checkpoint[S]) {
	if !c.protected() && !c.gone {
		heap.Push(&t.free, c)
	}
}

// retain discards the oldest checkpoints that are neither a branch head nor
// pinned by a snapshot, down to max (controls §8.1). Evicted checkpoints stay
// in order and free until a compaction, which runs when they are over half.
func (t *Timeline[S]) retain() {
	for len(t.cps) > t.max && len(t.free) > 0 {
		c := heap.Pop(&t.free).(*Checkpoint[S])
		t.seen++
		if c.gone || c.protected() {
			continue // stale: evicted already, or protected since (released again later)
		}
		c.gone = true
		delete(t.cps, c.ID)
	}
	if n := len(t.order); n > 64 && n > 2*len(t.cps) {
		live := make([]*Checkpoint[S], 0, len(t.cps))
		for _, c := range t.order {
			if !c.gone {
				live = append(live, c)
			}
		}
		t.order = live
	}
	if n := len(t.free); n > 64 && n > 2*len(t.cps) {
		t.free = t.free[:0]
		for _, c := range t.order {
			if !c.gone && !c.protected() {
				t.free = append(t.free, c)
			}
		}
		heap.Init(&t.free)
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

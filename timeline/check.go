package timeline

import "fmt"

// The invariant checks (see the package comment). They walk everything, so
// only tests call them, after every step of the model tests.

// Check verifies t's invariants: the retained checkpoints, the heads' counts
// and the free list. It walks everything: tests only.
func (t *Timeline[S]) Check() error {
	heads := map[string]int{}
	for b, id := range t.heads {
		c := t.cps[id]
		if c == nil || c.gone {
			return fmt.Errorf("head of %s (%s) is not retained", b, id)
		}
		heads[id]++
	}
	inFree := map[*Checkpoint[S]]bool{}
	if n := t.free.len(); n > max(64, 2*len(t.cps)) {
		return fmt.Errorf("free list holds %d entries for %d checkpoints", n, len(t.cps))
	}
	t.free.each(func(c *Checkpoint[S]) { inFree[c] = true })
	for i := t.free.head + 1; i < len(t.free.fifo); i++ {
		if t.free.fifo[i-1].seq >= t.free.fifo[i].seq {
			return fmt.Errorf("free list: %s queues after %s", t.free.fifo[i].ID, t.free.fifo[i-1].ID)
		}
	}
	n := 0
	for i, c := range t.order {
		if i > 0 && t.order[i-1].seq >= c.seq {
			return fmt.Errorf("checkpoint %s is listed after %s", c.ID, t.order[i-1].ID)
		}
		if c.gone {
			if t.cps[c.ID] == c || c.protected() {
				return fmt.Errorf("evicted checkpoint %s is retained or protected", c.ID)
			}
			continue
		}
		n++
		if t.cps[c.ID] != c || c.heads != heads[c.ID] || c.pins < 0 {
			return fmt.Errorf("checkpoint %s: retained %v, heads %d (counted %d), pins %d", c.ID, t.cps[c.ID] == c, c.heads, heads[c.ID], c.pins)
		}
		if !c.protected() && !inFree[c] {
			return fmt.Errorf("unprotected checkpoint %s is not in free", c.ID)
		}
	}
	if n != len(t.cps) {
		return fmt.Errorf("order lists %d retained checkpoints, cps holds %d", n, len(t.cps))
	}
	return nil
}

// Check verifies the snapshots' invariants and those of every timeline they
// pin: each live snapshot's checkpoint is retained in its timeline, and each
// checkpoint's pins count the live snapshots pinning it. Tests only.
func (s *Snapshots[S]) Check() error {
	pins := map[*Checkpoint[S]]int{}
	for id, sn := range s.m {
		if (sn.tl == nil) != (sn.cp == nil) || sn.cp != nil && (sn.cp.ID != sn.cpID || sn.tl.cps[sn.cpID] != sn.cp) {
			return fmt.Errorf("snapshot %s of %s: checkpoint %s is not retained in its timeline", id, sn.ns, sn.cpID)
		}
		if sn.cp != nil {
			pins[sn.cp]++
		}
	}
	done := map[*Timeline[S]]bool{nil: true}
	for _, sn := range s.m {
		if done[sn.tl] {
			continue
		}
		done[sn.tl] = true
		if err := sn.tl.Check(); err != nil {
			return err
		}
		for _, c := range sn.tl.cps {
			if c.pins != pins[c] {
				return fmt.Errorf("checkpoint %s: pins %d, pinned by %d snapshots", c.ID, c.pins, pins[c])
			}
		}
	}
	return nil
}

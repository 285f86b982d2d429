package state

import (
	"github.com/benbjohnson/immutable"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The queues of a run: its pending approval events and its queued steer
// texts, each a persistent list that every copy of a State shares, so that
// adding to a long queue costs O(log n), not a copy of it.

// SetApprovals replaces run id's pending approval events (nil: none).
func (s *State) SetApprovals(id string, q []*runs.Obj) {
	s.approvals = setList(s.approvals, &s.nApprovals, id, q)
}

// AppendApproval queues a after run id's pending approval events: O(log n),
// the list shared with every copy of s (see AppendSteer).
func (s *State) AppendApproval(id string, a *runs.Obj) {
	s.approvals = appendList(s.approvals, &s.nApprovals, id, a)
}

// RemoveApprovals drops run id's pending approval events [from, to) (an
// answer's, runs.ResolveApprovals): O(log n) from the front or for all, else
// O((n-to) log n).
func (s *State) RemoveApprovals(id string, from, to int) {
	q, ok := s.approvals.Get(id)
	if !ok || from >= to {
		return
	}
	n := q.Len()
	s.nApprovals -= to - from
	switch {
	case from == 0 && to == n:
		s.approvals = s.approvals.Delete(id)
		return
	case from == 0:
		q = q.Slice(to, n)
	default:
		rest := q
		q = q.Slice(0, from)
		for i := to; i < n; i++ {
			q = q.Append(rest.Get(i))
		}
	}
	s.approvals = s.approvals.Set(id, q)
}

// SetSteers replaces run id's queued steer texts (nil: none).
func (s *State) SetSteers(id string, q []string) { s.steers = setList(s.steers, &s.nSteers, id, q) }

// AppendSteer queues text after run id's steer texts. The queue is a
// persistent list: the copies of s that checkpoints hold share it, so a steer
// costs O(log n) and holds O(log n) new memory however many are queued.
func (s *State) AppendSteer(id, text string) { s.steers = appendList(s.steers, &s.nSteers, id, text) }

// setList returns m with run id's queue replaced by q (removed when empty),
// keeping *n, the number of entries of every queue in m, in step.
func setList[T any](m *immutable.Map[string, *immutable.List[T]], n *int, id string, q []T) *immutable.Map[string, *immutable.List[T]] {
	*n += len(q) - listLen(m, id)
	if len(q) == 0 {
		return m.Delete(id)
	}
	return m.Set(id, immutable.NewList(q...))
}

// appendList returns m with v queued after run id's entries.
func appendList[T any](m *immutable.Map[string, *immutable.List[T]], n *int, id string, v T) *immutable.Map[string, *immutable.List[T]] {
	q, ok := m.Get(id)
	if !ok {
		q = immutable.NewList[T]()
	}
	*n++
	return m.Set(id, q.Append(v))
}

// listLen is the length of run id's queue in m (0: none).
func listLen[T any](m *immutable.Map[string, *immutable.List[T]], id string) int {
	if q, ok := m.Get(id); ok {
		return q.Len()
	}
	return 0
}

// listSlice returns a copy of run id's queue in m, oldest first (nil: none).
func listSlice[T any](m *immutable.Map[string, *immutable.List[T]], id string) []T {
	q, ok := m.Get(id)
	if !ok {
		return nil
	}
	out := make([]T, 0, q.Len())
	for it := q.Iterator(); !it.Done(); {
		_, v := it.Next()
		out = append(out, v)
	}
	return out
}

package timeline

import (
	"strconv"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Snapshots are the process-wide aliases pinning main checkpoints (controls
// §8.7): ids snap_1, snap_2, … handed out in order and never reused. A pinned
// checkpoint is never evicted. The zero value is empty and ready to use; like
// Timeline it is not safe for concurrent use.
type Snapshots[S any] struct {
	seq int
	m   map[string]snapshot[S]
}

// snapshot is one alias: the namespace and checkpoint it names, and the
// timeline holding that checkpoint. Dropping the timeline (a reset) leaves a
// stub (tl and cp nil) that keeps the id and restores nothing.
type snapshot[S any] struct {
	ns   string
	cpID string
	tl   *Timeline[S]
	cp   *Checkpoint[S]
}

// MaxSnapshots is the most snapshots the process holds, the stubs a reset
// leaves included (hardening H3): each pins a checkpoint that is never
// evicted.
const MaxSnapshots = 10000

// Room answers 409 `too many snapshots (max 10000)` when s holds MaxSnapshots
// snapshots: one more may not be taken until one is deleted.
func (s *Snapshots[S]) Room() *runs.Error {
	if len(s.m) >= MaxSnapshots {
		return runs.Admin(409, "too many snapshots (max "+strconv.Itoa(MaxSnapshots)+")")
	}
	return nil
}

// Pin pins c, a retained checkpoint of t, namespace ns's timeline, under a
// new snapshot id, which it returns.
func (s *Snapshots[S]) Pin(ns string, t *Timeline[S], c *Checkpoint[S]) string {
	c.pins++
	s.seq++
	id := "snap_" + strconv.Itoa(s.seq)
	if s.m == nil {
		s.m = map[string]snapshot[S]{}
	}
	s.m[id] = snapshot[S]{ns: ns, cpID: c.ID, tl: t, cp: c}
	return id
}

// Find returns the checkpoint snapshot id pins, for restoring it into ns,
// whose timeline is now t (nil when it has none). It answers 404 "no
// snapshot <id>" for an unknown id, 409 "snapshot <id> belongs to namespace
// <other>" for another namespace's, and 409 "no checkpoint <cp>" when t is not
// the timeline the snapshot was taken on (the namespace was reset since).
func (s *Snapshots[S]) Find(ns, id string, t *Timeline[S]) (*Checkpoint[S], *runs.Error) {
	sn, ok := s.m[id]
	if !ok {
		return nil, runs.Admin(404, "no snapshot "+runs.Echo(id))
	}
	if sn.ns != ns {
		return nil, runs.Admin(409, "snapshot "+id+" belongs to namespace "+sn.ns)
	}
	if sn.cp == nil || sn.tl != t {
		return nil, runs.Admin(409, "no checkpoint "+sn.cpID)
	}
	return sn.cp, nil
}

// Delete removes snapshot id and unpins its checkpoint: 404 "no snapshot
// <id>" when there is none.
func (s *Snapshots[S]) Delete(id string) *runs.Error {
	sn, ok := s.m[id]
	if !ok {
		return runs.Admin(404, "no snapshot "+runs.Echo(id))
	}
	delete(s.m, id)
	if sn.cp != nil {
		sn.cp.pins--
		sn.tl.release(sn.cp)
	}
	return nil
}

// Drop turns every snapshot taken on t into a stub, releasing t and its
// checkpoints (a reset discards the namespace's timeline, controls §4.3). A
// nil t drops nothing.
func (s *Snapshots[S]) Drop(t *Timeline[S]) {
	if t == nil {
		return
	}
	for id, sn := range s.m {
		if sn.tl == t {
			sn.tl, sn.cp = nil, nil
			s.m[id] = sn
		}
	}
}

package gateway

import (
	"strconv"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Snapshots (controls §8.7): process-wide aliases pinning main checkpoints.
// A snapshot holds its checkpoint and the timeline it belongs to: a reset
// discards that timeline, leaving the snapshot a stub that restores nothing.
type snapshot struct {
	ns string
	tl *timeline
	cp *checkpoint
}

// Snapshot pins a new main checkpoint of ns and returns its id and records.
func (g *Gateway) Snapshot(ns string) (string, int, *runs.Error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	space, err := g.create(ns)
	if err != nil {
		return "", 0, err
	}
	t := g.tl(space)
	c := t.cps[g.commitCheckpoint(space, "main")]
	c.pins++
	g.snapSeq++
	id := "snap_" + strconv.Itoa(g.snapSeq)
	if g.snaps == nil {
		g.snaps = map[string]snapshot{}
	}
	g.snaps[id] = snapshot{ns, t, c}
	return id, c.records, nil
}

// RestoreSnapshot checks out main of ns to the snapshot's checkpoint.
func (g *Gateway) RestoreSnapshot(ns, id string) *runs.Error {
	defer g.unlockDurable(g.lock())
	s, ok := g.snaps[id]
	if !ok {
		return runs.Admin(404, "no snapshot "+runs.Echo(id))
	}
	if s.ns != ns {
		return runs.Admin(409, "snapshot "+id+" belongs to namespace "+s.ns)
	}
	space := g.spaces[ns]
	if space == nil || space.tl != s.tl || s.cp.gone {
		return runs.Admin(409, "no checkpoint "+s.cp.id)
	}
	g.moveBranch(space, "main", s.cp, true)
	return nil
}

// DeleteSnapshot unpins a snapshot.
func (g *Gateway) DeleteSnapshot(id string) *runs.Error {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.snaps[id]
	if !ok {
		return runs.Admin(404, "no snapshot "+runs.Echo(id))
	}
	delete(g.snaps, id)
	if s.tl != nil { // nil: its namespace was reset
		s.cp.pins--
		s.tl.release(s.cp)
	}
	return nil
}

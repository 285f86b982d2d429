package gateway

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// The control plane's read views (GET /__admin/hermes/runs[/{id}]) and the
// change feed (Options.OnChange) behind GET /__admin/stream.

// RunSummary is one run of GET /__admin/hermes/runs.
type RunSummary struct {
	ID, Status             string
	CreatedAt, UpdatedAt   float64 // record seconds
	Keyed                  bool
	OwnerLocal, OwnerAlive bool
	PendingApprovals       int
	QueuedSteers           int
	Transport              string // "none" | "buffering" | "subscribed" | "closed"
}

// RunView is one run's full view (GET /__admin/hermes/runs/{id}).
type RunView struct {
	RunSummary
	Record                          []byte   // vendor JSON of the record
	ReservationKeys                 []string // idempotency keys of its reservations
	Approvals                       [][]byte // pending approval entries (JSON)
	Steers                          []string // queued steer texts
	EventsBuffered, EventsDelivered int
	Subscriber                      bool
}

// Change is one committed change, as Options.OnChange hears it.
type Change struct {
	Kind                                         string // "run.created" | "run.changed" | "run.removed" | "run.event" | "checkpoint" | "clock"
	Namespace, Branch, RunID, Status, Checkpoint string
	Frame                                        []byte // for run.event: the SSE frame as emitted
}

// changed queues c for OnChange. Callers hold g.mu.
func (g *Gateway) changed(c Change) {
	if g.opts.OnChange != nil {
		g.changes = append(g.changes, c)
	}
}

// fire hands the queued changes to OnChange, outside the gateway lock.
func (g *Gateway) fire() {
	if g.opts.OnChange == nil {
		return
	}
	g.mu.Lock()
	cs := g.changes
	g.changes = nil
	g.mu.Unlock()
	for _, c := range cs {
		g.opts.OnChange(c)
	}
}

// runChanged queues a run change of x's branch (not for history views).
func (x *tx) runChanged(kind, id, status string) {
	if !x.view {
		x.g.changed(Change{Kind: kind, Namespace: x.name, Branch: x.branch, RunID: id, Status: status})
	}
}

// runEvent queues the frame emitted on run id's stream.
func (x *tx) runEvent(id string, frame []byte) {
	x.g.changed(Change{Kind: "run.event", Namespace: x.name, Branch: x.branch, RunID: id, Frame: frame})
}

// runEntry is one run of a namespace's main branch: cached, or known only by
// its reservation.
type runEntry struct {
	id     string
	status string
	record []byte
	owner  Owner
	upd    float64
}

// mainRuns lists every run of ns's main branch, every scope. Callers hold g.mu.
func (g *Gateway) mainRuns(ns string) (*State, []runEntry) {
	sp := g.spaces[ns]
	if sp == nil {
		return nil, nil
	}
	st := &sp.branches["main"].st
	var out []runEntry
	seen := map[string]bool{}
	st.runs.each(g.cat, func(id string, c *Cached) {
		seen[id] = true
		out = append(out, runEntry{id: id, status: c.Status, record: c.Record, owner: c.Owner, upd: c.UpdatedAt})
	})
	st.res.each(g.cat, func(r *Reservation) {
		if !seen[r.RunID] {
			seen[r.RunID] = true
			out = append(out, runEntry{id: r.RunID, status: r.Status, record: r.durable(), owner: r.Owner, upd: r.UpdatedAt})
		}
	})
	return st, out
}

func (g *Gateway) summary(ns string, st *State, e runEntry) RunSummary {
	s := RunSummary{ID: e.id, Status: e.status, UpdatedAt: e.upd, Keyed: e.owner.Keyed,
		OwnerLocal: e.owner.Local, OwnerAlive: e.owner.Alive, Transport: "none"}
	if v, ok := decode(e.record).Get("created_at"); ok {
		s.CreatedAt = number(v)
	}
	if q, ok := st.approvals.Get(e.id); ok {
		s.PendingApprovals = len(q)
	}
	if q, ok := st.steers.Get(e.id); ok {
		s.QueuedSteers = len(q)
	}
	if t := g.transport(tkey{ns, "main", e.id}); t != nil {
		switch {
		case t.ended:
			s.Transport = "closed"
		case t.subs > 0:
			s.Transport = "subscribed"
		default:
			s.Transport = "buffering"
		}
	}
	return s
}

func number(v runs.Value) float64 {
	if v.Kind == runs.Float {
		return v.Float
	}
	f, _ := strconv.ParseFloat(v.Int, 64)
	return f
}

// errCursor answers a cursor that no page handed out.
var errCursor = runs.Admin(400, "cursor: expected the next of a previous page")

// Runs lists the runs of ns's main branch (every scope), newest first (by
// created_at, then run id), optionally only those in status, at most limit
// (1–1000) per page. next is the cursor of the following page ("" on the
// last). It neither hydrates nor ticks the sweep: it only reads.
func (g *Gateway) Runs(ns, status string, limit int, cursor string) (page []RunSummary, next string, err *runs.Error) {
	var afterAt float64
	var afterID string
	if cursor != "" {
		at, id, ok := strings.Cut(cursor, "~")
		f, perr := strconv.ParseFloat(at, 64)
		if !ok || perr != nil || id == "" {
			return nil, "", errCursor
		}
		afterAt, afterID = f, id
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	st, entries := g.mainRuns(ns)
	var all []RunSummary
	for _, e := range entries {
		if status == "" || e.status == status {
			all = append(all, g.summary(ns, st, e))
		}
	}
	newer := func(a, b RunSummary) int {
		return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), strings.Compare(b.ID, a.ID))
	}
	slices.SortFunc(all, newer)
	if cursor != "" {
		i, _ := slices.BinarySearchFunc(all, RunSummary{ID: afterID, CreatedAt: afterAt}, newer)
		for i < len(all) && newer(all[i], RunSummary{ID: afterID, CreatedAt: afterAt}) <= 0 {
			i++
		}
		all = all[i:]
	}
	if len(all) > limit {
		all = all[:limit]
		last := all[limit-1]
		next = strconv.FormatFloat(last.CreatedAt, 'f', -1, 64) + "~" + last.ID
	}
	return all, next, nil
}

// RunView returns run id of ns's main branch (any scope), without hydration
// or a sweep tick; 404 run_not_found when the branch holds no such run.
func (g *Gateway) RunView(ns, id string) (RunView, *runs.Error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	st, entries := g.mainRuns(ns)
	for _, e := range entries {
		if e.id != id {
			continue
		}
		v := RunView{RunSummary: g.summary(ns, st, e), Record: e.record, ReservationKeys: []string{},
			Approvals: [][]byte{}, Steers: []string{}}
		st.res.each(g.cat, func(r *Reservation) {
			if r.RunID == id {
				v.ReservationKeys = append(v.ReservationKeys, r.Key)
			}
		})
		slices.Sort(v.ReservationKeys)
		if q, ok := st.approvals.Get(id); ok {
			for _, o := range q {
				v.Approvals = append(v.Approvals, encode(o))
			}
		}
		if q, ok := st.steers.Get(id); ok {
			v.Steers = append(v.Steers, q...)
		}
		if t := g.transport(tkey{ns, "main", id}); t != nil {
			v.EventsBuffered, v.EventsDelivered, v.Subscriber = len(t.frames), t.delivered, t.subs > 0
		}
		return v, nil
	}
	return RunView{}, runs.RunNotFound(id)
}

package gateway

import (
	"slices"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
	"github.com/hermes-emulator/hermes-emulator/state"
	"github.com/hermes-emulator/hermes-emulator/storage"
	"github.com/hermes-emulator/hermes-emulator/transport"
)

// The control plane's read views of a namespace's main branch. They read
// under the lock, create nothing (hardening H3) and see every scope.

// RunSummary is one run as the control plane lists it.
type RunSummary struct {
	ID, Status             string
	CreatedAt, UpdatedAt   float64 // record seconds
	Keyed                  bool
	OwnerLocal, OwnerAlive bool
	PendingApprovals       int
	QueuedSteers           int
	Transport              string // "none" | "buffering" | "subscribed" | "closed"
}

// RunView is one run's full view.
type RunView struct {
	RunSummary
	Record                          []byte   // vendor JSON of the record
	ReservationKeys                 []string // idempotency keys that reserve it
	Approvals                       [][]byte // pending approval entries (JSON)
	Steers                          []string // queued steer texts
	EventsBuffered, EventsDelivered int
	Subscriber                      bool
	Scenario                        *scenarios.Position // the scenario driving the run; nil when none
}

// DefaultRunsLimit is the page size of Runs when limit ≤ 0.
const DefaultRunsLimit = 100

// Runs lists namespace ns's runs on main, newest first; status "" = all. cursor is opaque ("" = first page).
// A run is listed from the cache when it is there, else from its reservation
// — with --db, the file's too: each listing reads the rows nothing has read
// since start-up (state.EachStartupRow), as start-up reads none.
func (g *Gateway) Runs(ns, status string, limit int, cursor string) (page []RunSummary, next string, err *runs.Error) {
	after, ok := runs.ParseCursor(cursor)
	if !ok {
		return nil, "", runs.ErrCursor
	}
	if limit <= 0 {
		limit = DefaultRunsLimit
	}
	// With --db, the file's rows are read without the lock (a large file
	// would stall every request); the State under the lock sorts them out.
	var stored []storage.Reservation
	g.mu.Lock()
	read := g.space(ns).branches["main"].st.StartupRows()
	g.mu.Unlock()
	if read != nil {
		var rerr error
		if stored, rerr = read(); rerr != nil {
			return nil, "", runs.Storage(rerr)
		}
	}
	g.mu.Lock()
	all := g.summaries(ns, stored)
	g.mu.Unlock()
	slices.SortFunc(all, func(a, b RunSummary) int { return a.key().Compare(b.key()) })
	for _, s := range all {
		if (status != "" && s.Status != status) || (cursor != "" && !after.Before(s.key())) {
			continue
		}
		if len(page) == limit {
			return page, page[len(page)-1].key().Cursor(), nil
		}
		page = append(page, s)
	}
	return page, "", nil
}

func (s RunSummary) key() runs.PageKey { return runs.PageKey{CreatedAt: s.CreatedAt, ID: s.ID} }

// summaries lists every run of ns's main branch, unsorted; stored are the
// store's rows as State.StartupRows read them. Callers hold g.mu.
func (g *Gateway) summaries(ns string, stored []storage.Reservation) []RunSummary {
	space := g.spaces[ns]
	if space == nil {
		return nil
	}
	st := &space.branches["main"].st
	out := make([]RunSummary, 0, st.Len())
	st.EachRun(func(id string, c *state.Cached) { out = append(out, g.summary(ns, st, id, c)) })
	listed := map[string]bool{}
	st.EachReservedRun(func(id string) {
		if _, cached := st.Run(id); !cached {
			listed[id] = true
			r, _ := st.ResOfRun(id)
			out = append(out, g.summary(ns, st, id, cachedOf(r, r.Record)))
		}
	})
	// With --db, the file's runs that nothing has read or changed since
	// start-up: of two rows of one id, the greater N answers for it.
	fromFile := map[string]*state.Reservation{}
	st.EachStartupRow(stored, func(r *state.Reservation) {
		if _, cached := st.Run(r.RunID); cached || listed[r.RunID] {
			return // listed above
		}
		if b := fromFile[r.RunID]; b == nil || r.RunN > b.RunN {
			fromFile[r.RunID] = r
		}
	})
	for id, r := range fromFile {
		out = append(out, g.summary(ns, st, id, cachedOf(r, r.Record)))
	}
	return out
}

func (g *Gateway) summary(ns string, st *state.State, id string, c *state.Cached) RunSummary {
	return RunSummary{ID: id, Status: c.Status, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, Keyed: c.Owner.Keyed,
		OwnerLocal: c.Owner.Local, OwnerAlive: c.Owner.Alive, PendingApprovals: st.ApprovalCount(id), QueuedSteers: st.SteerCount(id),
		Transport: g.transports.Stat(transport.Key{NS: ns, Branch: "main", Run: id}).State}
}

// RunView returns one run of ns's main branch; 404 run_not_found envelope when absent.
func (g *Gateway) RunView(ns, id string) (RunView, *runs.Error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	space := g.spaces[ns]
	if space == nil {
		return RunView{}, runs.RunNotFound(id)
	}
	st := &space.branches["main"].st
	c, ok := st.Run(id)
	if !ok {
		r, ok := st.ResOfRun(id)
		if !ok {
			return RunView{}, runs.RunNotFound(id)
		}
		c = hydrated(r) // keys sorted as hydration would (runs-api §4.2 rule 3)
	}
	v := RunView{RunSummary: g.summary(ns, st, id, c), Record: c.Text()}
	tr := g.transports.Stat(transport.Key{NS: ns, Branch: "main", Run: id}) // once: State and counts agree
	v.Transport = tr.State
	for _, r := range st.ReservationsOfRun(id) {
		v.ReservationKeys = append(v.ReservationKeys, r.Key)
	}
	for _, a := range st.Approvals(id) {
		v.Approvals = append(v.Approvals, runs.MarshalValue(runs.ObjectValue(a)))
	}
	v.Steers = st.Steers(id) // a copy
	v.EventsBuffered, v.EventsDelivered, v.Subscriber = tr.Buffered, tr.Delivered, tr.Subscribed
	if cur, ok := st.Cursor(id); ok {
		p := cur.Position()
		v.Scenario = &p
	}
	return v, nil
}

package state

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// stateModel is State's model: plain maps.
type stateModel struct {
	st   State
	runs map[string]*Cached
	res  map[storage.ReservationKey]*Reservation
}

func (m *stateModel) clone() *stateModel {
	return &stateModel{st: m.st, runs: maps.Clone(m.runs), res: maps.Clone(m.res)}
}

var modelStatuses = []string{runs.Queued, runs.Running, runs.Completed, runs.Failed, runs.Cancelled, runs.Interrupted}

// modelStep applies one operation chosen by op and arg to m (and to its
// State), as the gateway's transactions do.
func modelStep(m *stateModel, saved *[]*stateModel, op, arg byte, step int) {
	id := fmt.Sprintf("run_%d", arg%24)
	scope := fmt.Sprintf("s%d", arg%2)
	key := fmt.Sprintf("k%d", arg%16)
	status := modelStatuses[int(arg)%len(modelStatuses)]
	switch op % 10 {
	case 0, 1: // put a run
		c := &Cached{text: []byte(fmt.Sprint(step)), Status: status, UpdatedAt: float64(arg % 7),
			Owner: Owner{Scope: scope, Local: arg%3 != 0, Alive: true}}
		m.st.PutRun(id, c)
		m.runs[id] = c
	case 2: // remove a run
		m.st.DelRun(id)
		delete(m.runs, id)
	case 3, 4: // put a reservation (ids repeat across keys, counters grow)
		r := &Reservation{Status: status, Reservation: storage.Reservation{Scope: scope, Key: key, RunID: id,
			RunN: int64(step), UpdatedAt: float64(arg % 5), Record: []byte("{}"), Terminal: runs.IsTerminal(status)}}
		m.st.PutRes(r)
		m.res[resKey(scope, key)] = r
	case 5: // remove a reservation
		m.st.DelRes(scope, key)
		delete(m.res, resKey(scope, key))
	case 6: // queue approvals and steers
		m.st.SetApprovals(id, make([]*runs.Obj, arg%3))
		m.st.SetSteers(id, make([]string, arg%4))
	case 7: // snapshot
		*saved = append(*saved, m.clone())
	case 8: // restore a snapshot (checkout)
		if len(*saved) > 0 {
			*m = *(*saved)[int(arg)%len(*saved)].clone()
		}
	case 9: // a keyed admission: a run and its reservation in one change
		c := &Cached{text: []byte(fmt.Sprint(step)), Status: status, UpdatedAt: float64(arg % 7),
			Owner: Owner{Scope: scope, Keyed: true, Local: true, Alive: true}}
		r := &Reservation{Status: status, Reservation: storage.Reservation{Scope: scope, Key: key, RunID: id,
			RunN: int64(step), UpdatedAt: float64(arg % 5), Record: c.text, Terminal: runs.IsTerminal(status)}}
		m.st.PutRunRes(id, c, r)
		m.runs[id] = c
		m.res[resKey(scope, key)] = r
	}
}

// checkModel compares m's State with its maps and checks its invariants.
func checkModel(t testing.TB, step int, m *stateModel) {
	t.Helper()
	if err := m.st.Check(); err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
	if m.st.Len() != len(m.runs) || m.st.res.Len() != len(m.res) {
		t.Fatalf("step %d: %d runs, %d reservations; model %d, %d", step, m.st.Len(), m.st.res.Len(), len(m.runs), len(m.res))
	}
	walked := map[string]*Cached{}
	m.st.EachRun(func(id string, c *Cached) { walked[id] = c })
	if !maps.Equal(walked, m.runs) {
		t.Fatalf("step %d: EachRun walks %d runs, model %d", step, len(walked), len(m.runs))
	}
	for id, want := range m.runs {
		if got, ok := m.st.Run(id); !ok || got != want {
			t.Fatalf("step %d: run %s = %+v, want %+v", step, id, got, want)
		}
	}
	newest := map[string]*Reservation{}
	for k, want := range m.res {
		if got, ok := m.st.res.Get(k); !ok || got != want {
			t.Fatalf("step %d: reservation %q = %+v, want %+v", step, k, got, want)
		}
		if o := newest[want.RunID]; o == nil || want.RunN > o.RunN {
			newest[want.RunID] = want
		}
	}
	for i := range 24 {
		id := fmt.Sprintf("run_%d", i)
		got, ok := m.st.ResOfRun(id)
		if want := newest[id]; ok != (want != nil) || ok && got != want {
			t.Fatalf("step %d: reservation of %s = %+v, want %+v", step, id, got, want)
		}
	}
	reserved := map[string]bool{}
	m.st.EachReservedRun(func(id string) { reserved[id] = true })
	for id := range reserved {
		if newest[id] == nil {
			t.Fatalf("step %d: EachReservedRun walks %s, which has no reservation", step, id)
		}
	}
	if len(reserved) != len(newest) {
		t.Fatalf("step %d: EachReservedRun walks %d runs, %d have reservations", step, len(reserved), len(newest))
	}
	// The indexes answer as the maps do: the live count, what the sweep
	// (completed, failed, cancelled runs updated before 4) and the prune
	// (terminal reservations updated before 3) take, oldest first.
	live := 0
	var sweep, prune []aged[string]
	for id, c := range m.runs {
		if IsLive(c) {
			live++
		}
		if (c.Status == runs.Completed || c.Status == runs.Failed || c.Status == runs.Cancelled) && c.UpdatedAt < 4 {
			sweep = append(sweep, aged[string]{c.UpdatedAt, id})
		}
	}
	for k, r := range m.res {
		if runs.IsTerminal(r.Status) && r.UpdatedAt < 3 {
			prune = append(prune, aged[string]{r.UpdatedAt, k.Scope + "/" + k.Key})
		}
	}
	slices.SortFunc(sweep, agedComparer[string]{strings.Compare}.Compare)
	slices.SortFunc(prune, agedComparer[string]{strings.Compare}.Compare)
	var gotSweep, gotPrune []aged[string]
	for _, id := range m.st.Sweepable(func(at float64) bool { return at < 4 }) {
		c, _ := m.st.Run(id)
		gotSweep = append(gotSweep, aged[string]{c.UpdatedAt, id})
	}
	for _, k := range m.st.Prunable(func(at float64) bool { return at < 3 }) {
		r, _ := m.st.Res(k.Scope, k.Key)
		gotPrune = append(gotPrune, aged[string]{r.UpdatedAt, k.Scope + "/" + k.Key})
	}
	if m.st.Live() != live || !slices.Equal(gotSweep, sweep) || !slices.Equal(gotPrune, prune) {
		t.Fatalf("step %d: live %d, sweep %v, prune %v; model %d, %v, %v", step, m.st.Live(), gotSweep, gotPrune, live, sweep, prune)
	}
}

// runModel drives State with the operations ops encodes (two bytes a step),
// checking every version after every step.
func runModel(t testing.TB, ops []byte) {
	m := &stateModel{st: New(), runs: map[string]*Cached{}, res: map[storage.ReservationKey]*Reservation{}}
	var saved []*stateModel
	for i := 0; i+1 < len(ops); i += 2 {
		modelStep(m, &saved, ops[i], ops[i+1], i/2+1)
		checkModel(t, i/2+1, m)
	}
	for _, s := range saved {
		checkModel(t, -1, s)
	}
}

// TestStateModel drives random puts, removals, snapshots and restores of runs
// and reservations against plain maps: every version answers as its maps do
// and keeps its invariants (State.Check).
func TestStateModel(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewPCG(seed, 17))
		ops := make([]byte, 4000)
		for i := range ops {
			ops[i] = byte(rng.IntN(256))
		}
		runModel(t, ops)
	}
}

// FuzzStateModel is TestStateModel driven by the fuzzer (scripts/fuzz).
func FuzzStateModel(f *testing.F) {
	f.Add([]byte{3, 1, 3, 25, 5, 1, 7, 0, 0, 2, 8, 0, 2, 2})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 2000 {
			ops = ops[:2000]
		}
		runModel(t, ops)
	})
}

// The approval and steer queues: appends, and an answer's removal of a run of
// entries (the oldest, all, one in the middle, the newest), keep the order and
// the counts, and leave every earlier copy of the State (a checkpoint) as it
// was.
func TestQueues(t *testing.T) {
	entry := func(i int) *runs.Obj {
		return &runs.Obj{Keys: []string{"request_id"}, Vals: []runs.Value{runs.StringValue(fmt.Sprint(i))}}
	}
	ids := func(q []*runs.Obj) string {
		var out []string
		for _, e := range q {
			v, _ := e.Get("request_id")
			out = append(out, v.Str)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		from, to int
		want     string
	}{
		{0, 1, "1 2 3 4"}, {0, 5, ""}, {2, 3, "0 1 3 4"}, {4, 5, "0 1 2 3"}, {1, 4, "0 4"}, {3, 3, "0 1 2 3 4"},
	} {
		s := New()
		for i := range 5 {
			s.AppendApproval("r", entry(i))
			s.AppendSteer("r", fmt.Sprint(i))
		}
		saved := s
		s.RemoveApprovals("r", tc.from, tc.to)
		if got := ids(s.Approvals("r")); got != tc.want || s.ApprovalCount("r") != len(s.Approvals("r")) {
			t.Errorf("remove [%d, %d): %q (count %d), want %q", tc.from, tc.to, got, s.ApprovalCount("r"), tc.want)
		}
		if got := ids(saved.Approvals("r")); got != "0 1 2 3 4" {
			t.Errorf("remove [%d, %d) changed a copy: %q", tc.from, tc.to, got)
		}
		s.AppendApproval("r", entry(9))
		s.SetSteers("r", nil)
		if got := strings.Join(saved.Steers("r"), " "); got != "0 1 2 3 4" || saved.SteerCount("r") != 5 || s.SteerCount("r") != 0 {
			t.Errorf("steers of the copy %q (%d), of s %d", got, saved.SteerCount("r"), s.SteerCount("r"))
		}
		for _, st := range []*State{&s, &saved} {
			if err := st.Check(); err != nil {
				t.Errorf("remove [%d, %d): %v", tc.from, tc.to, err)
			}
		}
	}
}

// WithRecord keeps a record under LargeRecord bytes as its text (shared) and
// a larger one as its value (shared), and both read back the same; Check
// refuses a run with neither or with a small record kept as a value.
func TestCachedRecord(t *testing.T) {
	small := runs.StoredRecord([]byte(`{"run_id":"r","session_id":"s"}`))
	large := runs.StoredRecord([]byte(`{"run_id":"r","session_id":"` + strings.Repeat("s", LargeRecord) + `"}`))
	for _, rec := range []*runs.Obj{small, large} {
		text := runs.Rendered(rec)
		c := Cached{Status: runs.Queued}.WithRecord(rec, nil)
		if (c.rec != nil) != (len(text) >= LargeRecord) || string(c.Text()) != string(text) || string(runs.Rendered(c.Value())) != string(text) {
			t.Fatalf("%d bytes: value %v, text %.40q", len(text), c.rec != nil, c.Text())
		}
	}
	for _, c := range []*Cached{{Status: runs.Queued}, {Status: runs.Queued, rec: small}} {
		s := New()
		s.PutRun("r", c)
		if err := s.Check(); err == nil {
			t.Fatalf("Check passed a run with text %v and value %v", c.text != nil, c.rec != nil)
		}
	}
}

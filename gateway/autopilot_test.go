package gateway

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

const modelScenario = `{"scenarios":[{"name":"m","match":{"input":"^go"},"steps":[
	{"after":50,"observe":{"status":"running"}},
	{"after":0,"events":[{"event":"tool.started","tool":"t"}]},
	{"after":100,"approval":{}},
	{"after":30,"deliver_steers":true},
	{"after":70,"observe":{"status":"completed"}}],
	"if_denied":[{"after":20,"observe":{"status":"failed"}}],
	"on_stop":[{"after":40,"observe":{"status":"cancelled"}}]}]}`

// TestAutopilotModel drives admissions, answers, stops, manual observations,
// clock advances (now and then past the 24 h of durable retention), checkpoints,
// checkouts (answers, stops, checkpoints and checkouts now and then on a
// branch, whose checkpoints main is checked out to too), logical and real restarts (a new Gateway on the same store: the
// reservations are then read on demand) and resets at random on a
// frozen clock, and checks after every step every invariant the gateway holds
// (check: every branch's State, the due-step queue following the cursors of
// every main branch, timelines, transports), and that an advance leaves
// nothing overdue. A third of the admissions are keyed.
func TestAutopilotModel(t *testing.T) {
	set, perr := scenarios.Parse([]byte(modelScenario))
	if perr != nil {
		t.Fatal(perr)
	}
	g, _ := newClockGateway(t)
	fired := 0
	answered := map[string]int{}
	keyed := map[string]int{} // keyed admissions: created, replayed, conflict
	g.mu.Lock()
	g.auto.sets.Default = set
	g.opts.OnScenarioStep = func(string) { fired++ }
	g.mu.Unlock()
	restarts := 0
	store := &expiries{Store: g.db}
	restart := func() { // a real restart: a new process on the same store
		g.Close()
		opts := g.opts
		opts.OnScenarioStep = func(string) { fired++ }
		ng, err := New(store, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ng.Close() })
		ng.mu.Lock()
		ng.auto.sets.Default = set
		ng.mu.Unlock()
		g = ng
		restarts++
	}
	setClock(t, g, `{"set":1700000000000,"freeze":true}`)
	rng := rand.New(rand.NewPCG(7, 9))
	ids := map[string][]string{}
	var cps []struct{ ns, id string }
	spaces := []string{"a", "b"}
	seen := map[string]int{} // statuses seen at every 100th step: the walk reaches every branch
	look := func() {
		for _, ns := range spaces {
			for _, id := range ids[ns] {
				if rec, err := g.Get(Main(ns), id); err == nil {
					seen[runs.RecordStatus(runs.StoredRecord(rec))]++
				}
			}
		}
	}
	// on is main mostly, now and then branch x, whose answers and stops move
	// its positions (no step fires there) and whose checkpoints main may be
	// checked out to.
	on := func(ns string) Target {
		if rng.IntN(5) == 0 {
			return Target{NS: ns, Branch: "x"}
		}
		return Main(ns)
	}
	for step := 0; step < 3000; step++ {
		ns := spaces[rng.IntN(2)]
		pick := func() string {
			if len(ids[ns]) == 0 {
				return "none"
			}
			return ids[ns][rng.IntN(len(ids[ns]))]
		}
		op := rng.IntN(10)
		switch op {
		case 0, 1:
			input := "go " + strconv.Itoa(step)
			if rng.IntN(4) == 0 {
				input = "stay"
			}
			key := ""
			if rng.IntN(3) == 0 { // keyed: a reservation, replayed or conflicting when the key is taken
				key = "k" + strconv.Itoa(rng.IntN(20))
			}
			a, err := g.Create(Main(ns), Creation{Key: key, Fingerprint: "fp " + input, Sub: &runs.Submission{Message: runs.StringValue(input)}})
			if err != nil && !(key != "" && err.Status == 409) {
				t.Fatal(err)
			}
			switch {
			case err != nil:
				keyed["conflict"]++
			case a.Replayed:
				keyed["replayed"]++
			default:
				ids[ns] = append(ids[ns], a.RunID)
				if key != "" {
					keyed["created"]++
				}
			}
		case 2:
			choice := []string{"once", "deny"}[rng.IntN(2)]
			if _, err := g.Approve(on(ns), pick(), &runs.ApprovalAnswer{Choice: choice}, nil); err == nil {
				answered[choice]++
			}
		case 3:
			_, _ = g.Stop(on(ns), pick())
		case 4:
			_, _ = g.Observe(ns, pick(), runs.ObjectValue(&runs.Obj{Keys: []string{"status"}, Vals: []runs.Value{runs.StringValue("completed")}}), true)
		case 5, 6:
			advance := rng.IntN(200)
			if rng.IntN(200) == 0 {
				advance = 86400000 + rng.IntN(3600000) // keyed admissions prune (runs-api §11.3)
			}
			setClock(t, g, `{"advance":`+strconv.Itoa(advance)+`}`)
			g.mu.Lock()
			if e, ok := g.auto.due.Earliest(); ok && e.Due <= g.nowMs() {
				g.mu.Unlock()
				t.Fatalf("step %d: %+v overdue at %v after an advance", step, e, g.Now())
			}
			g.mu.Unlock()
		case 7:
			cp, err := g.CommitCheckpoint(ns, on(ns).Branch)
			if err != nil {
				t.Fatal(err)
			}
			cps = append(cps, struct{ ns, id string }{ns, cp.ID})
		case 8:
			if len(cps) > 0 {
				c := cps[rng.IntN(len(cps))]
				_ = g.Checkout(c.ns, on(c.ns).Branch, c.id)
			}
		case 9:
			if rng.IntN(10) != 0 { // rarely: they drop every run of the namespace
				break
			}
			switch rng.IntN(4) {
			case 0:
				_, _ = g.Reset(ns, false)
			case 1:
				restart()
				cps = nil             // timelines are not kept (runs-api §10.4)
				if rng.IntN(2) == 0 { // a day later: the file's old terminal runs expire
					setClock(t, g, `{"advance":`+strconv.Itoa(86400000+rng.IntN(3600000))+`}`)
				}
			default:
				_, _ = g.Restart(ns, rng.IntN(2) == 0)
			}
		}
		if step%100 == 99 {
			look()
		}
		g.mu.Lock()
		err := g.check()
		g.mu.Unlock()
		if err != nil {
			t.Fatalf("step %d (op %d): %v", step, op, err)
		}
	}
	if fired < 1000 || seen[runs.Completed] == 0 || seen[runs.Failed] == 0 || seen[runs.Cancelled] == 0 || seen[runs.WaitingForApproval] == 0 ||
		keyed["created"] == 0 || keyed["replayed"] == 0 || keyed["conflict"] == 0 || restarts == 0 || store.n == 0 {
		t.Fatalf("fired %d steps; statuses %v; answers %v; keyed %v", fired, seen, answered, keyed)
	}
	t.Logf("fired %d steps; statuses %v; answers %v; keyed %v; %d real restarts, %d prunes of the file's rows", fired, seen, answered, keyed, restarts, store.n)
}

// expiries counts the durable prunes of start-up rows (storage.Expiry).
type expiries struct {
	storage.Store
	n int
}

func (e *expiries) Apply(ctx context.Context, bs ...storage.Batch) error {
	for _, b := range bs {
		if b.Expire != nil {
			e.n++
		}
	}
	return e.Store.Apply(ctx, bs...)
}

// At most MaxNamespaces namespaces hold a scenario set (or its deletion) of
// their own.
func TestScenarioSetsBound(t *testing.T) {
	g, _ := newClockGateway(t)
	g.mu.Lock()
	g.opts.MaxNamespaces = 2
	g.mu.Unlock()
	set, _ := scenarios.Parse([]byte(modelScenario))
	if err := g.SetScenarios("a", set); err != nil {
		t.Fatal(err)
	}
	if err := g.DeleteScenarios("b"); err != nil {
		t.Fatal(err)
	}
	for _, err := range []*runs.Error{g.SetScenarios("c", set), g.DeleteScenarios("c")} {
		if err == nil || err.Status != 429 || err.Message != "too many namespaces with scenarios (max 2)" {
			t.Fatalf("got %v", err)
		}
	}
	if err := g.SetScenarios("b", set); err != nil || g.Scenarios("b") != set || g.Scenarios("c") != nil {
		t.Fatalf("replace: %v", err)
	}
}

// The scenario sets of all namespaces — the default once, every namespace's
// own — hold at most scenarios.MaxHeldValues values together: a set past it is
// refused with a 409 and nothing changes; a set replaced or deleted counts no
// more. A set of 300,000 numbers holds 300,009 values.
func TestScenarioSetsHeldBound(t *testing.T) {
	const msg = "scenario sets hold more than 1000000 values in all namespaces"
	numbers, perr := scenarios.Parse([]byte(`{"scenarios":[{"name":"n","steps":[{"after":0,"approval":{"x":[` +
		strings.Repeat("0,", 300_000) + `0]}}]}]}`))
	small, _ := scenarios.Parse([]byte(modelScenario))
	if perr != nil || small == nil {
		t.Fatal(perr)
	}
	g, err := New(storage.NewMemory(), Options{Scenarios: numbers, Wall: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	put := func(ns string, set *scenarios.Set, want string) {
		t.Helper()
		err := g.SetScenarios(ns, set)
		if got := ""; err != nil {
			got = err.Message
			if err.Status != 409 || got != want {
				t.Fatalf("SetScenarios(%s) = %d %s, want %q", ns, err.Status, got, want)
			}
		} else if want != "" {
			t.Fatalf("SetScenarios(%s) = nil, want %q", ns, want)
		}
	}
	put("a", numbers, "")
	put("b", numbers, "") // the default and two: 900,027 values
	put("c", numbers, msg)
	put("c", small, "")
	if g.Scenarios("c") != small {
		t.Fatal("c's set changed by a refused PUT")
	}
	put("a", small, "") // a's share goes with its set
	put("c", numbers, "")
	put("a", numbers, msg)
	if err := g.DeleteScenarios("b"); err != nil {
		t.Fatal(err)
	}
	put("a", numbers, "") // b's went with its deletion
}

// A step fired by an advance of a running clock reads its due time, but the
// checkpoint it commits records the clock running, as the request leaves it:
// checking that checkpoint out restores a running clock that read the due
// time then, not a clock frozen at it (controls §8.1, scenarios §2).
func TestAdvanceLiveClockStepCheckpointRuns(t *testing.T) {
	set, perr := scenarios.Parse([]byte(`{"scenarios":[{"name":"live","steps":[{"after":10000,"observe":{"status":"running"}}]}]}`))
	if perr != nil {
		t.Fatal(perr)
	}
	g, wall := newClockGateway(t)
	*wall = 1700000000000
	g.mu.Lock()
	g.auto.sets.Default = set
	g.mu.Unlock()
	if _, err := g.Create(Main("ns"), Creation{Sub: &runs.Submission{Message: runs.StringValue("go")}}); err != nil {
		t.Fatal(err)
	}
	v, _ := runs.Parse([]byte(`{"advance":15000}`))
	if st, err := g.SetClock(v); err != nil || st != (ClockState{Now: 1700000015000, OffsetMs: 15000}) {
		t.Fatalf("advance: %+v %v", st, err)
	}
	cps := g.Timeline("ns").Checkpoints
	step := cps[len(cps)-1]
	if step.At != 1700000010000 {
		t.Fatalf("the step's checkpoint: %+v", step)
	}
	*wall += 5000
	if err := g.Checkout("ns", "main", step.ID); err != nil {
		t.Fatal(err)
	}
	if st := g.Clock(); st != (ClockState{Now: 1700000015000, OffsetMs: 10000}) {
		t.Fatalf("clock after checking out the step's checkpoint: %+v, want running at offset 10000", st)
	}
}

// A step whose control fails ends the run's scenario without a checkpoint (the
// control failed) but with a run.changed: the run view's scenario is now null,
// and a follower of the change stream (the console's run page) hears of it.
func TestFailedStepIsHeard(t *testing.T) {
	set, perr := scenarios.Parse([]byte(`{"scenarios":[{"name":"s","steps":[{"after":10,"events":[{"event":"tool.started","tool":"t"}]}]}]}`))
	if perr != nil {
		t.Fatal(perr)
	}
	var heard []string
	g := newBoundGateway(t, Options{Scenarios: set, OnChange: func(c Change) { heard = append(heard, c.Kind+":"+c.RunID+":"+c.Status) }})
	setClock(t, g, `{"freeze":true}`)
	a, err := g.Create(Main("ns"), Creation{Sub: &runs.Submission{Message: runs.StringValue("go")}})
	if err != nil {
		t.Fatal(err)
	}
	done, _ := runs.Parse([]byte(`{"status":"completed"}`))
	if _, err := g.Observe("ns", a.RunID, done, true); err != nil {
		t.Fatal(err)
	}
	heard = nil
	setClock(t, g, `{"advance":10}`)
	if want := []string{"run.changed:" + a.RunID + ":completed", "clock::"}; !slices.Equal(heard, want) {
		t.Fatalf("heard %v, want %v", heard, want)
	}
	if v, err := g.RunView("ns", a.RunID); err != nil || v.Scenario != nil {
		t.Fatalf("view %+v %v", v.Scenario, err)
	}
}

// A branch keeps its runs' scenario positions as its public requests move
// them — an answer resumes the scenario, a stop enters on_stop — though no
// step fires there (only main is driven): main checked out to the branch's
// checkpoint then resumes each run from where the branch left it. The
// positions were copied with the branch and never moved, so a run answered
// on the branch came back to main running with its scenario still waiting for
// that answer, for ever (nothing pending to answer), and a run stopped on the
// branch came back stopping with its steps, not on_stop, still to fire.
func TestBranchMovesItsScenarioPositions(t *testing.T) {
	set, perr := scenarios.Parse([]byte(`{"scenarios":[{"name":"ask","steps":[
		{"after":0,"approval":{"command":"deploy"}},{"after":100,"observe":{"status":"completed","output":"done"}}],
		"on_stop":[{"after":50,"observe":{"status":"cancelled"}}]}]}`))
	if perr != nil {
		t.Fatal(perr)
	}
	g := newBoundGateway(t, Options{Scenarios: set})
	setClock(t, g, `{"set":1700000000000,"freeze":true}`)
	admit := func() string {
		t.Helper()
		a, err := g.Create(Main("ns"), Creation{Sub: &runs.Submission{Message: runs.StringValue("go")}})
		if err != nil {
			t.Fatal(err)
		}
		return a.RunID
	}
	answered, stopped := admit(), admit()
	setClock(t, g, `{"advance":0}`) // both wait for an answer
	x := Target{NS: "ns", Branch: "X"}
	if _, err := g.Approve(x, answered, &runs.ApprovalAnswer{Choice: "once"}, nil); err != nil {
		t.Fatal(err)
	}
	s, err := g.Stop(x, stopped)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Checkout("ns", "main", s.Checkpoint); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]scenarios.Position{
		answered: {Name: "ask", Step: "steps[1]", Due: 1700000000100},
		stopped:  {Name: "ask", Step: "on_stop[0]", Due: 1700000000050},
	} {
		if v, err := g.RunView("ns", id); err != nil || v.Scenario == nil || *v.Scenario != want {
			t.Fatalf("%s after the checkout: %+v %v, want %+v", id, v.Scenario, err, want)
		}
	}
	setClock(t, g, `{"advance":100}`)
	for id, want := range map[string]string{answered: runs.Completed, stopped: runs.Cancelled} {
		if rec, err := g.Get(Main("ns"), id); err != nil || runs.RecordStatus(runs.StoredRecord(rec)) != want {
			t.Fatalf("%s: %s %v, want %s", id, rec, err, want)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.check(); err != nil {
		t.Fatal(err)
	}
}

// A step whose control fails applies nothing (scenarios §3), not even
// the steer delivery that steers: deliver applies just before it: the queued
// texts stay queued. They were delivered, without a checkpoint, when an
// approval step's request_id was already pending (an approval observed by hand).
func TestFailedStepDeliversNoSteers(t *testing.T) {
	set, perr := scenarios.Parse([]byte(`{"scenarios":[{"name":"s","steers":"deliver","steps":[
		{"after":0,"observe":{"status":"running"}},{"after":100,"approval":{"request_id":"r1"}}]}]}`))
	if perr != nil {
		t.Fatal(perr)
	}
	g := newBoundGateway(t, Options{Scenarios: set})
	setClock(t, g, `{"set":1700000000000,"freeze":true}`)
	a, err := g.Create(Main("ns"), Creation{Sub: &runs.Submission{Message: runs.StringValue("go")}})
	if err != nil {
		t.Fatal(err)
	}
	setClock(t, g, `{"advance":0}`)
	if _, err := g.Steer(Main("ns"), a.RunID, "left, not right", nil, false); err != nil {
		t.Fatal(err)
	}
	ask, _ := runs.Parse([]byte(`{"status":"waiting_for_approval","approval":{"request_id":"r1"}}`))
	if _, err := g.Observe("ns", a.RunID, ask, true); err != nil {
		t.Fatal(err)
	}
	setClock(t, g, `{"advance":100}`)
	v, verr := g.RunView("ns", a.RunID)
	if verr != nil || v.Scenario != nil || !slices.Equal(v.Steers, []string{"left, not right"}) {
		t.Fatalf("after the failed step: scenario %+v, steers %q, %v; want no scenario and the text still queued", v.Scenario, v.Steers, verr)
	}
}

// A checkout that moves the frozen clock forward fires the steps of the other
// namespaces it passes, each at its own due time, as a clock set would
// (scenarios §2): they stayed due, unfired while the clock read past
// them, and fired at the next clock request reading its time — shifted. The
// namespace checked out gets its own positions back as they were: a step due
// at the checkpoint's time does not fire.
func TestCheckoutMovingTheClockFiresOtherNamespaces(t *testing.T) {
	set, perr := scenarios.Parse([]byte(`{"scenarios":[{"name":"s","steps":[
		{"after":0,"observe":{"status":"running"}},{"after":100,"events":[{"event":"tool.started","tool":"t"}]},{"after":1000,"observe":{"status":"completed"}}]}]}`))
	if perr != nil {
		t.Fatal(perr)
	}
	g := newBoundGateway(t, Options{Scenarios: set})
	admit := func(ns string) (string, string) {
		t.Helper()
		a, err := g.Create(Main(ns), Creation{Sub: &runs.Submission{Message: runs.StringValue("go")}})
		if err != nil {
			t.Fatal(err)
		}
		return a.RunID, a.Checkpoint
	}
	setClock(t, g, `{"set":1700000000500,"freeze":true}`)
	runA, cp := admit("a") // its first step is due at the checkpoint's time
	setClock(t, g, `{"set":1700000000000}`)
	runB, _ := admit("b")
	if err := g.Checkout("a", "main", cp); err != nil {
		t.Fatal(err)
	}
	if st := g.Clock(); st.Now != 1700000000500 {
		t.Fatalf("clock after the checkout: %+v", st)
	}
	rec, _ := g.Get(Main("b"), runB)
	if r := runs.StoredRecord(rec); runs.RecordStatus(r) != runs.Running || string(runs.MarshalValue(mustGet(r, "updated_at"))) != "1700000000.1" {
		t.Fatalf("b's run after the checkout: %s", rec)
	}
	if v, _ := g.RunView("b", runB); v.Scenario == nil || *v.Scenario != (scenarios.Position{Name: "s", Step: "steps[2]", Due: 1700000001100}) {
		t.Fatalf("b's position: %+v", v.Scenario)
	}
	if v, _ := g.RunView("a", runA); v.Status != runs.Queued || v.Scenario == nil || v.Scenario.Step != "steps[0]" {
		t.Fatalf("a's run: %s %+v", v.Status, v.Scenario)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.check(); err != nil {
		t.Fatal(err)
	}
}

func mustGet(o *runs.Obj, k string) runs.Value {
	v, _ := o.Get(k)
	return v
}

// setClock applies the clock request body to g (controls §5), failing the
// test when it is refused.
func setClock(t *testing.T, g *Gateway, body string) {
	t.Helper()
	if _, err := g.SetClockJSON([]byte(body)); err != nil {
		t.Fatal(err)
	}
}

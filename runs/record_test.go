package runs

import (
	"strings"
	"testing"
)

const queuedJSON = `{"object":"hermes.run","run_id":"` + testRunID + `","status":"queued","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"` + testRunID + `","model":"hermes-agent"}`

// startRecord is the admission record of {"input":"synthetic"} at the frozen base.
func startRecord() *Obj { return NewRecord(testRunID, testBase, &Submission{}) }

// recordOf parses a record from JSON text.
func recordOf(t *testing.T, s string) *Obj {
	t.Helper()
	v := mustParse(t, s)
	if v.Kind != Object {
		t.Fatalf("not an object: %s", s)
	}
	return v.Obj
}

func TestStatuses(t *testing.T) {
	cases := []struct {
		s               string
		valid, terminal bool
	}{
		{Queued, true, false}, {Running, true, false}, {WaitingForApproval, true, false}, {Stopping, true, false},
		{Completed, true, true}, {Failed, true, true}, {Cancelled, true, true}, {Interrupted, true, true},
		{"started", false, false}, {"", false, false}, {"Running", false, false}, {"expired", false, false},
	}
	for _, c := range cases {
		if ValidStatus(c.s) != c.valid || IsTerminal(c.s) != c.terminal {
			t.Errorf("%q: ValidStatus=%v IsTerminal=%v, want %v %v", c.s, ValidStatus(c.s), IsTerminal(c.s), c.valid, c.terminal)
		}
	}
	if got := RecordStatus(startRecord()); got != Queued {
		t.Errorf("RecordStatus = %q", got)
	}
	if got := RecordStatus(&Obj{}); got != "" {
		t.Errorf("RecordStatus(empty) = %q", got)
	}
}

func TestChanges(t *testing.T) {
	const head = `{"object":"hermes.run","run_id":"` + testRunID + `",`
	const mid = `"created_at":1700000000.0,"session_id":"` + testRunID + `","model":"hermes-agent"`
	waiting := head + `"status":"waiting_for_approval","updated_at":1700000000.0,` + mid + `,"last_event":"approval.request","approval":{"request_id":"r","event":"approval.request"}}`
	cases := []struct {
		name string
		in   string
		f    func(*Obj) *Obj
		want string
	}{
		{"stop queued", queuedJSON, func(r *Obj) *Obj { return Stopped(r, 1700000001.5) },
			head + `"status":"stopping","updated_at":1700000001.5,` + mid + `,"last_event":"run.stopping"}`},
		{"stop waiting removes approval, keeps last_event position", waiting, func(r *Obj) *Obj { return Stopped(r, 1700000002.0) },
			head + `"status":"stopping","updated_at":1700000002.0,` + mid + `,"last_event":"run.stopping"}`},
		{"interrupt keeps approval", waiting, func(r *Obj) *Obj { return Interrupt(r, 1700000002.0) },
			head + `"status":"interrupted","updated_at":1700000002.0,` + mid + `,"last_event":"run.interrupted","approval":{"request_id":"r","event":"approval.request"},"error":"The gateway restarted before this run settled."}`},
		{"interrupt queued: error then last_event", queuedJSON, func(r *Obj) *Obj { return Interrupt(r, 1700000002.0) },
			head + `"status":"interrupted","updated_at":1700000002.0,` + mid + `,"error":"The gateway restarted before this run settled.","last_event":"run.interrupted"}`},
		// acceptance 107: a scripted event keeps status and approval
		{"event on waiting", waiting, func(r *Obj) *Obj { return EventApplied(r, "tool.completed", 1700000003.0) },
			head + `"status":"waiting_for_approval","updated_at":1700000003.0,` + mid + `,"last_event":"tool.completed","approval":{"request_id":"r","event":"approval.request"}}`},
		{"event on queued", queuedJSON, func(r *Obj) *Obj { return EventApplied(r, "tool.started", 1700000003.0) },
			head + `"status":"queued","updated_at":1700000003.0,` + mid + `,"last_event":"tool.started"}`},
		{"approval responded", waiting, func(r *Obj) *Obj { return ApprovalResponded(r, 1700000004.0) },
			head + `"status":"running","updated_at":1700000004.0,` + mid + `,"last_event":"approval.responded"}`},
		{"steered", head + `"status":"running","updated_at":1700000000.0,` + mid + `}`, func(r *Obj) *Obj { return Steered(r, 1700000005.0) },
			head + `"status":"running","updated_at":1700000005.0,` + mid + `,"last_event":"run.steered"}`},
	}
	for _, c := range cases {
		in := recordOf(t, c.in)
		before := render(in)
		if got := render(c.f(in)); got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.name, got, c.want)
		}
		if render(in) != before {
			t.Errorf("%s modified its input", c.name)
		}
	}
}

// acceptance 62 and 63: a hydrated (sorted) waiting record interrupted by a stale owner.
func TestSortedThenInterrupt(t *testing.T) {
	rec := startRecord()
	o, err := ParseObserve(mustParse(t, `{"status":"waiting_for_approval","approval":{"command":"synthetic"}}`), true, nil)
	if err != nil {
		t.Fatal(errText(err))
	}
	ev := ApprovalEvent(o.Approval, testRunID, testBase, func() string { return "4f517459436b5145434675544552396b" })
	rec = ApplyObserve(rec, o, testBase, ev, nil)
	durable := mustParse(t, string(AppendSortedJSON(nil, ObjectValue(rec)))) // hydrated from the durable copy
	got := render(Interrupt(durable.Obj, 1700000002.0))
	want := `{"approval":{"choices":["once","session","always","deny"],"command":"synthetic","event":"approval.request","request_id":"4f517459436b5145434675544552396b","run_id":"` + testRunID + `","timestamp":1700000000.0},"created_at":1700000000.0,"last_event":"run.interrupted","model":"hermes-agent","object":"hermes.run","run_id":"` + testRunID + `","session_id":"` + testRunID + `","status":"interrupted","updated_at":1700000002.0,"error":"The gateway restarted before this run settled."}`
	if got != want {
		t.Errorf("interrupted hydrated record\n got %s\nwant %s", got, want)
	}
	// runs-api §4.2 example: a keyed running run after a stale restart.
	running := ApplyObserve(startRecord(), &Observe{Status: Running, Body: &Obj{}}, testBase, nil, nil)
	got = render(Interrupt(mustParse(t, string(AppendSortedJSON(nil, ObjectValue(running)))).Obj, 1700003600.5))
	want = `{"created_at":1700000000.0,"model":"hermes-agent","object":"hermes.run","run_id":"` + testRunID + `","session_id":"` + testRunID + `","status":"interrupted","updated_at":1700003600.5,"error":"The gateway restarted before this run settled.","last_event":"run.interrupted"}`
	if got != want {
		t.Errorf("interrupted running record\n got %s\nwant %s", got, want)
	}
}

func TestAppendSortedJSON(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"b":1,"a":{"z":[{"y":1,"x":2}],"c":null},"B":2}`, `{"B":2,"a":{"c":null,"z":[{"x":2,"y":1}]},"b":1}`},
		// code point order: U+E000 before U+10000, U+00E9 after "z"
		{`{"\ud800\udc00":1,"\ue000":2,"z":3,"é":4}`, `{"z":3,"é":4,"` + "\ue000" + `":2,"` + "\U00010000" + `":1}`},
		{`[{"b":1,"a":2},3]`, `[{"a":2,"b":1},3]`},
		{`"x"`, `"x"`},
	}
	for _, c := range cases {
		in := mustParse(t, c.in)
		before := string(MarshalValue(in))
		if got := string(AppendSortedJSON([]byte("x"), in)); got != "x"+c.want {
			t.Errorf("AppendSortedJSON(%s) = %s, want x%s", c.in, got, c.want)
		}
		if string(MarshalValue(in)) != before {
			t.Errorf("AppendSortedJSON(%s) modified its input", c.in)
		}
	}
}

func TestShouldPersist(t *testing.T) {
	q := startRecord()
	running := ApplyObserve(q, &Observe{Status: Running, Body: &Obj{}}, 1, nil, nil)
	running2 := EventApplied(running, "tool.started", 2)
	stopping := Stopped(running, 3)
	stopping2 := Stopped(stopping, 4)
	completed := ApplyObserve(running, &Observe{Status: Completed, Body: &Obj{}}, 5, nil, nil)
	withErr := running.Clone()
	withErr.Set("error", StringValue("x"))
	cases := []struct {
		name          string
		before, after *Obj
		want          bool
	}{
		{"status change", q, running, true},
		{"same status scripted event", running, running2, false},
		{"steer", running, Steered(running, 9), false},
		{"stop from running", running, stopping, true},
		{"repeated stop", stopping, stopping2, false},
		{"terminal", running, completed, true},
		{"interruption", running, Interrupt(running, 9), true},
		{"same status, error written", running, withErr, true},
	}
	for _, c := range cases {
		if got := ShouldPersist(c.before, c.after); got != c.want {
			t.Errorf("%s: ShouldPersist = %v, want %v", c.name, got, c.want)
		}
	}
}

// Rendered and RenderedSorted give the renderings in copies of their size
// (up to the allocator's size class, not a grown buffer's room), one after
// another from the reused buffer without mixing them up.
func TestRendered(t *testing.T) {
	o := mustParse(t, `{"b":1,"a":{"d":[{"y":1,"x":2}],"c":"`+strings.Repeat("z", 300)+`"}}`).Obj
	for range 3 {
		v, s := Rendered(o), RenderedSorted(o)
		if string(v) != string(MarshalValue(ObjectValue(o))) || cap(v) > len(v)*9/8+16 {
			t.Fatalf("Rendered = %s (cap %d)", v, cap(v))
		}
		if want := `{"a":{"c":"` + strings.Repeat("z", 300) + `","d":[{"x":2,"y":1}]},"b":1}`; string(s) != want || cap(s) > len(s)*9/8+16 {
			t.Fatalf("RenderedSorted = %s (cap %d), want %s", s, cap(s), want)
		}
	}
}

package scenarios

import "testing"

// testScenario: steps running@100, approval@0, completed@50; if_denied
// failed@10; on_stop cancelled@250.
func testScenario(t *testing.T) *Scenario {
	t.Helper()
	set, err := Parse([]byte(`{"scenarios":[{"name":"s","steps":[
		{"after":100,"observe":{"status":"running"}},
		{"after":0,"approval":{}},
		{"after":50,"observe":{"status":"completed"}}],
		"if_denied":[{"after":10,"observe":{"status":"failed"}}],
		"on_stop":[{"after":250,"observe":{"status":"cancelled"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return set.Scenarios[0]
}

func TestCursorTransitions(t *testing.T) {
	sc := testScenario(t)
	at := func(p Phase, next int, due float64, waiting bool, seq uint64) Cursor {
		return Cursor{Scenario: sc, Phase: p, Next: next, Due: due, Waiting: waiting, Order: 7, Seq: seq}
	}
	start := Start(sc, 7, 1000)
	if start != at(InSteps, 0, 1100, false, 0) {
		t.Fatalf("start %+v", start)
	}
	for _, c := range []struct {
		name string
		from Cursor
		op   func(Cursor) (Cursor, bool)
		want Cursor
		live bool
	}{
		{"fired → next step due after its delay", at(InSteps, 0, 1100, false, 0),
			func(c Cursor) (Cursor, bool) { return c.Fired(1100) }, at(InSteps, 1, 1100, false, 1), true},
		{"approval fired → waits", at(InSteps, 1, 1100, false, 1),
			func(c Cursor) (Cursor, bool) { return c.Fired(1100) }, at(InSteps, 2, 1100, true, 2), true},
		{"approve → resumes, after counted from the answer", at(InSteps, 2, 1100, true, 2),
			func(c Cursor) (Cursor, bool) { return c.Answered(false, 5000) }, at(InSteps, 2, 5050, false, 2), true},
		{"deny → if_denied from the answer", at(InSteps, 2, 1100, true, 2),
			func(c Cursor) (Cursor, bool) { return c.Answered(true, 5000) }, at(InIfDenied, 0, 5010, false, 2), true},
		{"answer while not waiting → unchanged", at(InSteps, 1, 1100, false, 1),
			func(c Cursor) (Cursor, bool) { return c.Answered(true, 5000) }, at(InSteps, 1, 1100, false, 1), true},
		{"last step fired → ended", at(InSteps, 2, 5050, false, 2),
			func(c Cursor) (Cursor, bool) { return c.Fired(5050) }, at(InSteps, 3, 5050, false, 3), false},
		{"stop → on_stop from the stop", at(InSteps, 1, 1100, false, 1),
			func(c Cursor) (Cursor, bool) { return c.Stopped(false, 1050) }, at(InOnStop, 0, 1300, false, 1), true},
		{"stop while waiting → on_stop", at(InSteps, 2, 1100, true, 2),
			func(c Cursor) (Cursor, bool) { return c.Stopped(false, 2000) }, at(InOnStop, 0, 2250, false, 2), true},
		{"stop in if_denied → on_stop", at(InIfDenied, 0, 5010, false, 2),
			func(c Cursor) (Cursor, bool) { return c.Stopped(false, 5001) }, at(InOnStop, 0, 5251, false, 2), true},
		{"repeated stop → unchanged", at(InOnStop, 0, 1300, false, 1),
			func(c Cursor) (Cursor, bool) { return c.Stopped(true, 1200) }, at(InOnStop, 0, 1300, false, 1), true},
		{"stop of a run a step made stopping → unchanged", at(InSteps, 1, 1100, false, 1),
			func(c Cursor) (Cursor, bool) { return c.Stopped(true, 1050) }, at(InSteps, 1, 1100, false, 1), true},
		{"stop while an on_stop approval waits → on_stop again", at(InOnStop, 1, 1300, true, 2),
			func(c Cursor) (Cursor, bool) { return c.Stopped(false, 1400) }, at(InOnStop, 0, 1650, false, 2), true},
		{"on_stop fired → ended", at(InOnStop, 0, 1300, false, 1),
			func(c Cursor) (Cursor, bool) { return c.Fired(1300) }, at(InOnStop, 1, 1300, false, 2), false},
		{"if_denied fired → ended", at(InIfDenied, 0, 5010, false, 2),
			func(c Cursor) (Cursor, bool) { return c.Fired(5010) }, at(InIfDenied, 1, 5010, false, 3), false},
		{"run finished while waiting → ended", at(InSteps, 2, 1100, true, 2),
			func(c Cursor) (Cursor, bool) { return c.Finished() }, at(InSteps, 2, 1100, true, 2), false},
		{"run finished with a step due → unchanged", at(InSteps, 1, 1100, false, 1),
			func(c Cursor) (Cursor, bool) { return c.Finished() }, at(InSteps, 1, 1100, false, 1), true},
	} {
		got, live := c.op(c.from)
		if got != c.want || live != c.live {
			t.Errorf("%s:\n got %+v %v\nwant %+v %v", c.name, got, live, c.want, c.live)
		}
	}
}

func TestCursorEdges(t *testing.T) {
	// An approval as the last step: the cursor waits; approving ends it,
	// denying enters if_denied.
	set, err := Parse([]byte(`{"scenarios":[{"name":"s","steps":[{"after":0,"approval":{}}],"on_stop":[]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	sc := set.Scenarios[0]
	c, live := Start(sc, 1, 0).Fired(0)
	if !live || !c.Waiting || c.Path() != "steps[1]" {
		t.Fatalf("%+v %v", c, live)
	}
	if _, live := c.Answered(false, 10); live {
		t.Fatal("approved last step: still live")
	}
	if d, live := c.Answered(true, 10); !live || d.Phase != InIfDenied || d.Due != 10 || d.Path() != "if_denied[0]" {
		t.Fatalf("deny: %+v %v", d, live)
	}
	// An empty on_stop ends the scenario at the stop.
	if _, live := c.Stopped(false, 5); live {
		t.Fatal("empty on_stop: still live")
	}
	// A denial inside if_denied resumes it.
	w := Cursor{Scenario: sc, Phase: InIfDenied, Next: 1, Waiting: true}
	if _, live := w.Answered(true, 1); live {
		t.Fatal("deny in if_denied with nothing left: still live")
	}
	// The queue entry: none while waiting.
	if _, ok := c.Entry(Key{"ns", "run"}); ok {
		t.Fatal("waiting cursor has an entry")
	}
	if e, ok := Start(sc, 3, 42).Entry(Key{"ns", "run"}); !ok || e != (Entry{Key{"ns", "run"}, 42, 3, 0}) {
		t.Fatalf("entry %+v", e)
	}
}

// Position names the next step and when it falls due; a cursor waiting for
// an approval answer has no due time.
func TestPosition(t *testing.T) {
	sc := testScenario(t)
	for _, c := range []struct {
		cur  Cursor
		want Position
	}{
		{Start(sc, 1, 1000), Position{Name: "s", Step: "steps[0]", Due: 1100}},
		{Cursor{Scenario: sc, Phase: InSteps, Next: 2, Due: 1100, Waiting: true}, Position{Name: "s", Step: "steps[2]", Waiting: true}},
		{Cursor{Scenario: sc, Phase: InOnStop, Next: 0, Due: 7}, Position{Name: "s", Step: "on_stop[0]", Due: 7}},
	} {
		if got := c.cur.Position(); got != c.want {
			t.Errorf("%+v: %+v, want %+v", c.cur, got, c.want)
		}
	}
}

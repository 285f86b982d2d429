package gateway

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Runs lists main's runs newest first, by pages, filtered by status; RunView
// shows one with its reservation keys, queues and transport.
func TestRunsView(t *testing.T) {
	wall := 1700000000000.0
	g := newBoundGateway(t, Options{Wall: func() float64 { return wall }})
	var ids []string
	for i := range 5 {
		key := ""
		if i%2 == 0 {
			key = fmt.Sprint("k", i)
		}
		a, err := g.Create(Main("v"), Creation{Key: key, Fingerprint: "fp", Sub: &runs.Submission{}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.RunID)
		wall += 1000
	}
	running, _ := runs.Parse([]byte(`{"status":"running"}`))
	if _, err := g.Observe("v", ids[1], running, true); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Steer(Main("v"), ids[1], "go left", nil, false); err != nil {
		t.Fatal(err)
	}
	var got []string
	cursor := ""
	for {
		page, next, err := g.Runs("v", "", 2, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page {
			got = append(got, s.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	want := slices.Clone(ids)
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Fatalf("pages %v, want %v", got, want)
	}
	page, next, err := g.Runs("v", runs.Running, 0, "")
	if err != nil || next != "" || len(page) != 1 || page[0].ID != ids[1] || page[0].QueuedSteers != 1 ||
		page[0].Transport != "buffering" || page[0].Keyed || !page[0].OwnerLocal {
		t.Fatalf("running: %+v %q %v", page, next, err)
	}
	if _, _, err := g.Runs("v", "", 0, "%%"); err == nil || err.Status != 400 || err.Message != runs.ErrCursor.Message {
		t.Fatalf("bad cursor: %v", err)
	}
	v, err := g.RunView("v", ids[0])
	if err != nil || !slices.Equal(v.ReservationKeys, []string{"k0"}) || !v.Keyed || v.CreatedAt != 1700000000 ||
		string(v.Record) == "" || v.Subscriber || v.EventsBuffered != 0 {
		t.Fatalf("view: %+v %v", v, err)
	}
	if v, err := g.RunView("v", ids[1]); err != nil || !slices.Equal(v.Steers, []string{"go left"}) || v.EventsBuffered != 1 {
		t.Fatalf("view of the steered run: %+v %v", v, err)
	}
}

// OnChange hears every committed change in commit order, under the gateway
// lock, before the call that made it returns; a clock move carries the clock
// it left.
func TestOnChange(t *testing.T) {
	var mu sync.Mutex
	var kinds []string
	var g *Gateway
	g = newBoundGateway(t, Options{OnChange: func(c Change) {
		if g.mu.TryLock() {
			g.mu.Unlock()
			t.Errorf("%s heard without the gateway lock", c.Kind)
		}
		mu.Lock()
		kinds = append(kinds, c.Kind+":"+c.Status)
		if c.Kind == "clock" && (c.Clock == nil || c.Clock.OffsetMs != 2*3600*1000) {
			t.Errorf("clock change %+v", c.Clock)
		}
		mu.Unlock()
	}})
	want := []string{"run.created:queued", "checkpoint:", "run.changed:completed", "run.event:",
		"checkpoint:", "clock:", "run.removed:", "checkpoint:"}
	heard := func(call string, n int) { // the first n changes are heard when call returns
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(kinds, want[:n]) {
			t.Fatalf("after %s: changes %v\nwant    %v", call, kinds, want[:n])
		}
	}
	a, err := g.Create(Main("default"), Creation{Sub: &runs.Submission{}})
	if err != nil {
		t.Fatal(err)
	}
	heard("Admit", 2)
	done, _ := runs.Parse([]byte(`{"status":"completed"}`))
	if _, err := g.Observe("default", a.RunID, done, true); err != nil {
		t.Fatal(err)
	}
	heard("Observe", 5)
	setClock(t, g, `{"advance":"2h"}`)
	heard("SetClock", 6)
	if _, err := g.Sweep("default"); err != nil {
		t.Fatal(err)
	}
	heard("Sweep", 8)
	g.Close()
	heard("Close", 8)
}

// With Options.Listening answering false, no change is queued at all; once it
// answers true, the changes committed from then on are heard.
func TestOnChangeOnlyWhileListening(t *testing.T) {
	var mu sync.Mutex
	var kinds []string
	var listening atomic.Bool
	g := newBoundGateway(t, Options{Listening: listening.Load, OnChange: func(c Change) {
		mu.Lock()
		kinds = append(kinds, c.Kind)
		mu.Unlock()
	}})
	if _, err := g.Create(Main("default"), Creation{Sub: &runs.Submission{}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(kinds) != 0 {
		t.Fatalf("heard %v while nobody listened", kinds)
	}
	mu.Unlock()
	listening.Store(true)
	if _, err := g.Create(Main("default"), Creation{Sub: &runs.Submission{}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"run.created", "checkpoint"}; !slices.Equal(kinds, want) {
		t.Fatalf("heard %v, want %v", kinds, want)
	}
}

// A run held only as a reservation (after a logical restart, in memory, where
// the reservation shares the vendor-ordered cached bytes) shows its record
// with the keys sorted, as hydration would copy it (runs-api §4.2 rule 3).
func TestRunViewOfReservationIsSorted(t *testing.T) {
	g := newBoundGateway(t, Options{Wall: func() float64 { return 1700000000000 }})
	a, err := g.Create(Main("v"), Creation{Key: "k", Fingerprint: "fp", Sub: &runs.Submission{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Restart("v", true); err != nil {
		t.Fatal(err)
	}
	v, err := g.RunView("v", a.RunID)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"created_at":1700000000.0,"model":"hermes-agent","object":"hermes.run","run_id":"` + a.RunID +
		`","session_id":"` + a.RunID + `","status":"queued","updated_at":1700000000.0}`
	if string(v.Record) != want {
		t.Fatalf("record %s\nwant   %s", v.Record, want)
	}
}

// RunCreate's order (runs-api §6.1): an intake failure comes before the sweep
// tick and changes nothing; a body failure comes after it, so the due sweep
// stays done (controls §11).
func TestCreateSweepsAfterIntake(t *testing.T) {
	wall := 1700000000000.0
	g := newBoundGateway(t, Options{Wall: func() float64 { return wall }})
	a, err := g.Create(Main("v"), Creation{Sub: &runs.Submission{}})
	if err != nil {
		t.Fatal(err)
	}
	completed, _ := runs.Parse([]byte(`{"status":"completed"}`))
	if _, err := g.Observe("v", a.RunID, completed, true); err != nil {
		t.Fatal(err)
	}
	wall += 4000 * 1000 // past the cache retention and a sweep tick
	intake := runs.Admin(400, "intake")
	if _, err := g.Create(Main("v"), Creation{Intake: intake, Sub: &runs.Submission{}}); err != intake {
		t.Fatalf("Create with an intake error = %v", err)
	}
	if _, err := g.RunView("v", a.RunID); err != nil {
		t.Fatalf("the run is gone after an intake error: %v", err)
	}
	body := runs.Admin(400, "body")
	if _, err := g.Create(Main("v"), Creation{Body: body, Sub: &runs.Submission{}}); err != body {
		t.Fatalf("Create with a body error = %v", err)
	}
	if _, err := g.RunView("v", a.RunID); err == nil || err.Status != 404 {
		t.Fatalf("the run is still there after the sweep a body error leaves done: %v", err)
	}
}

package gateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// Runs and transports across a branch, a checkout and a
// change (controls §8.4, §8.5; runs-api §6.4.1): every branch sees exactly its
// own runs, with the records they had there, and the transports of the runs
// admitted on it since its transports were last destroyed.
func TestBranchLineage(t *testing.T) {
	db := storage.NewMemory()
	wall := 1700000000000.0
	g, err := New(db, Options{Wall: func() float64 { return wall }, SubscribeWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	main, feature := Main("default"), Target{NS: "default", Branch: "feature"}
	admit := func(tg Target, n int) []string {
		t.Helper()
		ids := make([]string, n)
		for i := range ids {
			a, err := g.Create(tg, Creation{Sub: &runs.Submission{}})
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = a.RunID
		}
		return ids
	}
	visible := func(tg Target, ids []string, want bool) {
		t.Helper()
		for _, id := range ids {
			_, err := g.Get(tg, id)
			if (err == nil) != want {
				t.Fatalf("%s: Get(%s) = %v, want visible %v", tg.Branch, id, err, want)
			}
		}
	}
	record := func(tg Target, id string) string {
		t.Helper()
		b, err := g.Get(tg, id)
		if err != nil {
			t.Fatalf("%s: Get(%s) = %v", tg.Branch, id, err)
		}
		return string(b)
	}
	subscribable := func(tg Target, id string) bool {
		t.Helper()
		_, err := g.Subscribe(context.Background(), tg, id, true)
		return err == nil
	}

	early := admit(main, 5000)
	cp, cerr := g.CommitCheckpoint("default", "main")
	if cerr != nil {
		t.Fatal(cerr)
	}
	if cp.Records != 2*5000+1 { // runs and owners, and the sweep schedule the first admission set
		t.Fatalf("checkpoint records = %d", cp.Records)
	}
	if _, err := g.Branch("default", "feature", cp.ID); err != nil {
		t.Fatal(err)
	}
	wall += 1000
	onMain := admit(main, 100)
	onFeature := admit(feature, 100)
	if onFeature[0] != runs.RunID(runs.BranchStorageNS("default", "feature"), 5001) || onMain[0] != runs.RunID("hermes", 5001) {
		t.Fatalf("ids after the fork: %s %s", onMain[0], onFeature[0])
	}
	visible(main, early, true)
	visible(main, onMain, true)
	visible(main, onFeature, false)
	visible(feature, early, true)
	visible(feature, onFeature, true)
	visible(feature, onMain, false)

	// A change on main is main's alone.
	if _, err := g.Observe("default", early[7], runs.ObjectValue(&runs.Obj{Keys: []string{"status"},
		Vals: []runs.Value{runs.StringValue("running")}}), true); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"object":"hermes.run","run_id":"%s","status":"queued","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"%s","model":"hermes-agent"}`, early[7], early[7])
	if got := record(feature, early[7]); got != want {
		t.Fatalf("feature sees %s", got)
	}
	if got := record(main, early[7]); got == want {
		t.Fatal("main's change is missing")
	}

	// Transports: main has those of every run admitted on it; feature those of
	// its own admissions only.
	if !subscribable(main, early[0]) || !subscribable(main, onMain[99]) || !subscribable(feature, onFeature[0]) {
		t.Fatal("a transport is missing")
	}
	if subscribable(feature, early[0]) || subscribable(feature, onMain[0]) {
		t.Fatal("feature has a transport of a run admitted on main")
	}

	// Checkout main at the checkpoint: the later runs are gone, their ids come
	// back with the next admissions (the counter is restored) with the new time,
	// and every transport of main was destroyed but those of new admissions.
	if err := g.Checkout("default", "main", cp.ID); err != nil {
		t.Fatal(err)
	}
	visible(main, onMain, false)
	wall += 1000
	again := admit(main, 100)
	for i := range again {
		if again[i] != onMain[i] {
			t.Fatalf("admission %d after checkout: %s, want %s", i, again[i], onMain[i])
		}
	}
	if got := record(main, again[0]); got != fmt.Sprintf(`{"object":"hermes.run","run_id":"%s","status":"queued","updated_at":1700000002.0,"created_at":1700000002.0,"session_id":"%s","model":"hermes-agent"}`, again[0], again[0]) {
		t.Fatalf("re-admitted run: %s", got)
	}
	if subscribable(main, early[0]) || !subscribable(main, again[0]) {
		t.Fatal("transports after checkout")
	}
	visible(feature, onFeature, true)
	visible(feature, onMain, false)
	if got := record(feature, early[7]); got != want {
		t.Fatalf("feature after main's checkout sees %s", got)
	}
}

//go:build browser

package console_test

import (
	"context"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// TestBrowserLiveAfterCheckoutAndReset: another client checks main out to an
// earlier checkpoint, then resets the namespace, and the runs view and the
// Timeline follow from the stream (branch.restored, namespace.reset) with no
// Refresh pressed. Neither sent a frame, so both views stayed as they were
// until the next change.
func TestBrowserLiveAfterCheckoutAndReset(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	ctl := srv.Control()
	bg := context.Background()
	for i := 0; i < 3; i++ {
		submitRun(t, srv.URL(), "")
	}
	cp, err := ctl.Checkpoint(bg, "main")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		submitRun(t, srv.URL(), "")
	}
	ctx := browser(t)
	do(t, ctx, "open the runs", chromedp.Navigate(srv.URL()+"/__admin/ui/#/runs"))
	waitText(t, ctx, "#stream-state", "stream: live")
	const rows = `document.querySelectorAll('#runs-body tbody tr').length`
	const ids = `[...document.querySelectorAll('#runs-body tbody tr td:first-child a')].map((a) => a.textContent)`
	until(t, ctx, rows+` === 5`, "the runs view shows the 5 runs")

	if err := ctl.Checkout(bg, "main", cp); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, rows+` === 3`, "the runs view shows the 3 runs of the checkpoint")
	if got, want := eval[[]string](t, ctx, ids), listRuns(t, srv, 3); !slices.Equal(got, want) {
		t.Fatalf("after the checkout the view shows %v, want %v", got, want)
	}
	if _, err := ctl.Reset(bg, false); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "#runs-body", "No runs in namespace default yet.")

	for i := 0; i < 2; i++ {
		submitRun(t, srv.URL(), "")
	}
	back, err := ctl.Checkpoint(bg, "main")
	if err != nil {
		t.Fatal(err)
	}
	submitRun(t, srv.URL(), "")
	do(t, ctx, "open the timeline", chromedp.Navigate(srv.URL()+"/__admin/ui/#/timeline"))
	const cps = `document.querySelectorAll('#timeline-body tbody tr').length`
	until(t, ctx, cps+` === 5`, "the timeline shows 5 checkpoints")
	waitText(t, ctx, "#timeline-body p", "main → cp_00000005")
	if err := ctl.Checkout(bg, "main", back); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "#timeline-body p", "main → "+back)
	if _, err := ctl.Reset(bg, true); err != nil {
		t.Fatal(err)
	}
	// The timeline read after the reset starts the namespace's again.
	until(t, ctx, cps+` === 1`, "the timeline shows only the new first checkpoint")
	waitText(t, ctx, "#timeline-body p", "main → cp_00000001")
}

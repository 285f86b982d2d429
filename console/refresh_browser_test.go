//go:build browser

package console_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// The views that refresh by themselves leave the user's place alone
// (docs/console.md, Refreshes keep your place): the focus, a text selection
// and the rows on screen stay while rows come in above them.

// markPlace puts the user somewhere in a long list: the focus-th element
// matching focus scrolled to the middle of the window and focused, the
// text of the sel-th element matching sel selected.
func markPlace(t *testing.T, ctx context.Context, focus string, fi int, sel string, si int) {
	t.Helper()
	got := eval[string](t, ctx, fmt.Sprintf(`(() => {
		window.focused = document.querySelectorAll(%q)[%d];
		window.focused.scrollIntoView({ block: 'center' });
		window.focused.focus();
		window.top0 = window.focused.getBoundingClientRect().top;
		getSelection().selectAllChildren(document.querySelectorAll(%q)[%d]);
		return window.selected = getSelection().toString();
	})()`, focus, fi, sel, si))
	if got == "" {
		t.Fatalf("nothing selected in %s", sel)
	}
}

// checkPlace fails the test unless the focus, the selection and the place on
// screen that markPlace took are as they were.
func checkPlace(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	if !eval[bool](t, ctx, `document.activeElement === window.focused`) {
		t.Errorf("%s: the focus is on %s, want it kept", what, eval[string](t, ctx, `document.activeElement.outerHTML.slice(0, 120)`))
	}
	if got, want := eval[string](t, ctx, `getSelection().toString()`), eval[string](t, ctx, `window.selected`); got != want {
		t.Errorf("%s: the selection is %q, want %q", what, got, want)
	}
	// Scroll offsets are whole pixels: the row's top can move by less than one.
	if moved := eval[float64](t, ctx, `window.focused.getBoundingClientRect().top - window.top0`); moved <= -1 || moved >= 1 {
		t.Errorf("%s: the focused row moved %vpx on screen, want less than 1", what, moved)
	}
}

// TestBrowserJournalKeepsPlace: the live Journal's refresh with new requests
// leaves the focused run link, the selected text and the rows on screen as
// they were; it drew a new table each time something changed.
func TestBrowserJournalKeepsPlace(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	for i := 0; i < 60; i++ {
		submitRun(t, srv.URL(), "")
	}
	ctx := browser(t)
	do(t, ctx, "open the journal", chromedp.Navigate(srv.URL()+"/__admin/ui/#/journal"))
	const rows = `document.querySelectorAll('#journal-body tbody tr').length`
	until(t, ctx, rows+` === 60`, "the journal shows the 60 submissions")
	markPlace(t, ctx, `#journal-body tbody a`, 40, `#journal-body tbody a`, 41)
	for i := 0; i < 3; i++ {
		submitRun(t, srv.URL(), "")
	}
	until(t, ctx, rows+` === 63`, "the live journal shows the 3 new submissions")
	checkPlace(t, ctx, "after the journal's refresh")
}

// TestBrowserTimelineKeepsPlace: a new checkpoint's refresh of the Timeline
// leaves the focused Checkout button, the selected checkpoint id and the rows
// on screen as they were; it drew a new table on every checkpoint, so in a
// busy suite a button could not keep the focus, nor a click land.
func TestBrowserTimelineKeepsPlace(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	for i := 0; i < 60; i++ {
		submitRun(t, srv.URL(), "")
	}
	tl, err := srv.Control().Timeline(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := len(tl.Checkpoints)
	ctx := browser(t)
	do(t, ctx, "open the timeline", chromedp.Navigate(srv.URL()+"/__admin/ui/#/timeline"))
	waitText(t, ctx, "#stream-state", "stream: live")
	const rows = `document.querySelectorAll('#timeline-body tbody tr').length`
	until(t, ctx, fmt.Sprintf(`%s === %d`, rows, n), "the timeline shows every checkpoint")
	markPlace(t, ctx, `#timeline-body tbody button`, 40, `#timeline-body tbody code`, 41)
	head, err := srv.Control().Checkpoint(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	until(t, ctx, fmt.Sprintf(`%s === %d`, rows, n+1), "the timeline shows the new checkpoint")
	checkPlace(t, ctx, "after the timeline's refresh")
	if got, want := text(t, ctx, "#timeline-body p"), "Branch heads: main → "+head; got != want {
		t.Errorf("the timeline shows %q, want %q", got, want)
	}
}

// TestBrowserFaultHitsKeepFocus: a rule that fires changes its Hits in the
// Faults view but leaves its focused Remove button and its selected id alone;
// every change of a count drew a new table.
func TestBrowserFaultHitsKeepFocus(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	if _, err := srv.Control().AddFault(context.Background(), map[string]any{"operationId": "RunGet", "status": 503}); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	do(t, ctx, "open the faults", chromedp.Navigate(srv.URL()+"/__admin/ui/#/faults"))
	remove := `#fault-list button[aria-label="Remove fault fault_1"]`
	do(t, ctx, "see the rule", chromedp.WaitVisible(css(remove)))
	markPlace(t, ctx, remove, 0, `#fault-list tbody code`, 0)
	for i := 0; i < 3; i++ {
		res, err := http.Get(srv.URL() + "/v1/runs/run_missing")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 503 {
			t.Fatalf("GET /v1/runs/run_missing: %d, want the rule's 503", res.StatusCode)
		}
	}
	until(t, ctx, `document.querySelector('#fault-list tbody tr').cells[4].textContent === '3'`, "the rule's 3 hits shown")
	checkPlace(t, ctx, "after the rule fired")
}

// TestBrowserRunKeepsOpen: a change of the run redraws its page's facts but
// leaves the "Record and full view (JSON)" section open, with the keyboard's
// focus on it; it was drawn again, closed, on every change.
func TestBrowserRunKeepsOpen(t *testing.T) {
	srv, ctx, id := openRun(t, "")
	waitText(t, ctx, "#run-summary", "queued")
	eval[bool](t, ctx, `(() => {
		window.focused = document.querySelector('#run-summary details summary');
		window.focused.focus();
		window.focused.click();
		return window.focused.parentElement.open;
	})()`)
	if _, err := srv.Control().Observe(context.Background(), id, map[string]any{"status": "running"}); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, `document.querySelector('#run-summary .badge').textContent === 'running'`, "the run page shows running")
	waitText(t, ctx, "#run-summary pre.json", `"status": "running"`)
	if !eval[bool](t, ctx, `document.querySelector('#run-summary details').open`) {
		t.Errorf("after the run changed the JSON section is closed, want it left open")
	}
	if !eval[bool](t, ctx, `document.activeElement === window.focused`) {
		t.Errorf("after the run changed the focus is on %s, want it kept on the JSON section", eval[string](t, ctx, `document.activeElement.outerHTML.slice(0, 120)`))
	}
}

// TestBrowserWatchKeepsPlace: a new frame leaves the Watch panel where the
// user scrolled it, and a selection in it, unless it was at the bottom, which
// it follows; every frame scrolled it to the bottom and rewrote its text.
func TestBrowserWatchKeepsPlace(t *testing.T) {
	srv, ctx, id := openRun(t, "")
	waitText(t, ctx, "main", "Mirrored from the control-plane stream") // the stream is live
	emit := func(n int) {
		t.Helper()
		events := make([]any, n)
		for i := range events {
			events[i] = map[string]any{"event": "message.delta", "delta": "chunk of the answer"}
		}
		if _, err := srv.Control().Events(context.Background(), id, events...); err != nil {
			t.Fatal(err)
		}
	}
	log := fmt.Sprintf(`document.querySelector('pre[data-frames=%q]')`, id)
	atBottom := log + `.scrollTop + ` + log + `.clientHeight >= ` + log + `.scrollHeight - 1`
	emit(60)
	waitText(t, ctx, "#watch-h", "60 frames")
	if !eval[bool](t, ctx, log+`.scrollHeight > 2 * `+log+`.clientHeight`) {
		t.Fatalf("60 frames do not overflow the panel")
	}
	if !eval[bool](t, ctx, atBottom) {
		t.Errorf("the panel does not follow the newest frames")
	}
	selected := eval[string](t, ctx, `(() => {
		const log = `+log+`;
		log.scrollTop = 0;
		getSelection().setBaseAndExtent(log.firstChild, 0, log.firstChild, 20);
		return getSelection().toString();
	})()`)
	emit(1)
	waitText(t, ctx, "#watch-h", "61 frames")
	if top := eval[float64](t, ctx, log+`.scrollTop`); top != 0 {
		t.Errorf("a new frame scrolled the panel to %v, want it left at the top", top)
	}
	if got := eval[string](t, ctx, `getSelection().toString()`); got != selected || selected == "" {
		t.Errorf("after a new frame the selection is %q, want %q", got, selected)
	}
	eval[bool](t, ctx, `(`+log+`.scrollTop = `+log+`.scrollHeight, true)`)
	emit(1)
	waitText(t, ctx, "#watch-h", "62 frames")
	if !eval[bool](t, ctx, atBottom) {
		t.Errorf("scrolled to the bottom, the panel does not follow a new frame")
	}
	// Past 1,000 frames each new one drops the oldest: the selection stays
	// on its text, and the panel shows what it shows drawn afresh.
	emit(1000)
	waitText(t, ctx, "#watch-h", "1000 frames (62 older dropped)")
	selected = eval[string](t, ctx, `(() => {
		const text = `+log+`.firstChild, at = text.data.length >> 1;
		getSelection().setBaseAndExtent(text, at, text, at + 40);
		return getSelection().toString();
	})()`)
	emit(1)
	waitText(t, ctx, "#watch-h", "1000 frames (63 older dropped)")
	if got := eval[string](t, ctx, `getSelection().toString()`); got != selected || selected == "" {
		t.Errorf("after a frame dropped the oldest the selection is %q, want %q", got, selected)
	}
	shown := eval[string](t, ctx, log+`.textContent`)
	eval[bool](t, ctx, `(location.hash = '#/runs', true)`)
	waitText(t, ctx, "#runs-body", id)
	eval[bool](t, ctx, `(location.hash = '#/runs/`+id+`', true)`)
	waitText(t, ctx, "#watch-h", "1000 frames (63 older dropped)")
	if fresh := eval[string](t, ctx, log+`.textContent`); fresh != shown {
		t.Errorf("the panel showed %d characters, drawn afresh it shows %d", len(shown), len(fresh))
	}
}

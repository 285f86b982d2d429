//go:build browser

package console_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/control"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// TestBrowserLoadMore: "Load more" pressed while a refresh of the runs view
// is on its way (a stream frame or Refresh, every 150 ms in a busy suite)
// still adds the next page; it was turned into a second refresh of the
// runs already shown.
func TestBrowserLoadMore(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	for i := 0; i < 120; i++ {
		submitRun(t, srv.URL(), "")
	}
	ctx := browser(t)
	do(t, ctx, "open the runs", chromedp.Navigate(srv.URL()+"/__admin/ui/#/runs"))
	rows := `document.querySelectorAll('#runs-body tbody tr').length`
	waitText(t, ctx, "#runs-body", "Runs in default")
	if n := eval[float64](t, ctx, rows); n != 50 {
		t.Fatalf("the first page shows %v runs, want 50", n)
	}
	// Slow answers, so the refresh is still on its way when Load more is pressed.
	eval[bool](t, ctx, `(() => {
		const f = window.fetch;
		window.fetch = (u, o) => String(u).includes('/hermes/runs?')
			? new Promise((ok) => setTimeout(ok, 300)).then(() => f(u, o)) : f(u, o);
		return true;
	})()`)
	eval[bool](t, ctx, `[...document.querySelectorAll('main button')].find((b) => b.textContent === 'Refresh').click(), true`)
	eval[bool](t, ctx, `[...document.querySelectorAll('main button')].find((b) => b.textContent === 'Load more').click(), true`)
	deadline := time.Now().Add(5 * time.Second)
	for eval[float64](t, ctx, rows) != 100 {
		if time.Now().After(deadline) {
			t.Fatalf("after Refresh and Load more the view shows %v runs, want 100", eval[float64](t, ctx, rows))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBrowserBadRunLink: a run link whose escapes do not decode
// (#/runs/%E0, from a pasted or hand-edited URL) shows the run page's 404,
// not an uncaught URIError and the previous view.
func TestBrowserBadRunLink(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	ctx := browser(t)
	do(t, ctx, "open a bad run link", chromedp.Navigate(srv.URL()+"/__admin/ui/#/runs/%E0"))
	waitText(t, ctx, "#run-summary", "404")
}

// TestBrowserErrorWithoutEnvelope: a failed call whose answer is not the
// emulator's JSON envelope (a proxy's 502 page) still says what failed; the
// toast was empty.
func TestBrowserErrorWithoutEnvelope(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	ctx := browser(t)
	do(t, ctx, "open the faults", chromedp.Navigate(srv.URL()+"/__admin/ui/#/faults"))
	waitText(t, ctx, "#fault-list", "No fault rules")
	eval[bool](t, ctx, `(() => {
		const f = window.fetch;
		window.fetch = (u, o) => o && o.method === 'DELETE'
			? Promise.resolve(new Response('<html>Bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }))
			: f(u, o);
		return true;
	})()`)
	do(t, ctx, "clear the faults", chromedp.Click(css(`#clear-faults`)),
		chromedp.WaitVisible(css(`#confirm-yes`)), chromedp.Click(css(`#confirm-yes`)))
	waitText(t, ctx, "#toast", "502 <html>Bad gateway</html>")
}

// TestBrowserRefreshKeepsLoaded: a refresh of the runs view (here a new
// run's stream frames) after Load more has brought in more than 1,000 runs
// keeps every run loaded, adds the new one on top, leaves the focused row,
// the selected text and the row in view where they were, and Load more then
// brings the rest without a duplicate. The refresh reloaded at most 1,000
// runs and so cut the list back.
func TestBrowserRefreshKeepsLoaded(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	for i := 0; i < 1060; i++ {
		submitRun(t, srv.URL(), "")
	}
	ctx := browser(t)
	do(t, ctx, "open the runs", chromedp.Navigate(srv.URL()+"/__admin/ui/#/runs"))
	waitText(t, ctx, "#stream-state", "stream: live")
	const rows = `document.querySelectorAll('#runs-body tbody tr').length`
	for n := 50; n < 1050; n += 50 {
		until(t, ctx, rows+` === `+strconv.Itoa(n), "the runs view shows "+strconv.Itoa(n)+" runs")
		eval[bool](t, ctx, `[...document.querySelectorAll('main button')].find((b) => b.textContent === 'Load more').click(), true`)
	}
	until(t, ctx, rows+` === 1050`, "Load more brings the view to 1050 runs")
	// The keyboard on the link of the 1,000th run, in the middle of the
	// window; the 1,001st run's id selected.
	links := `#runs-body tbody tr td:first-child a`
	markPlace(t, ctx, links, 999, links, 1000)
	if _, err := srv.Control().Clock().Advance(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	newest := submitRun(t, srv.URL(), "")
	until(t, ctx, `document.querySelector('#runs-body tbody a').textContent === '`+newest+`'`, "the new run on top")
	want := append([]string{newest}, listRuns(t, srv, 1061)[1:1051]...)
	ids := `[...document.querySelectorAll('#runs-body tbody tr td:first-child a')].map((a) => a.textContent)`
	if got := eval[[]string](t, ctx, ids); !slices.Equal(got, want) {
		t.Fatalf("after the refresh the view shows %d runs, want the new one and the 1050 loaded (%d)", len(got), len(want))
	}
	checkPlace(t, ctx, "after the refresh")
	// At the head of the list a new run shows on top and pushes the others down.
	eval[bool](t, ctx, `window.scrollTo(0, 0), true`)
	if _, err := srv.Control().Clock().Advance(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	newer := submitRun(t, srv.URL(), "")
	until(t, ctx, `document.querySelector('#runs-body tbody a').textContent === '`+newer+`'`, "the newer run on top")
	if y := eval[float64](t, ctx, `window.scrollY`); y != 0 {
		t.Errorf("at the head of the list a refresh scrolled the window to %v, want 0", y)
	}
	eval[bool](t, ctx, `[...document.querySelectorAll('main button')].find((b) => b.textContent === 'Load more').click(), true`)
	until(t, ctx, rows+` === 1062`, "Load more brings the last 10 runs")
	if got, all := eval[[]string](t, ctx, ids), listRuns(t, srv, 1062); !slices.Equal(got, all) {
		t.Errorf("after Load more the view shows %d runs, want the namespace's %d in order, each once", len(got), len(all))
	}
	if !eval[bool](t, ctx, `[...document.querySelectorAll('main button')].find((b) => b.textContent === 'Load more').hidden`) {
		t.Errorf("Load more is still offered with every run shown")
	}
}

// listRuns lists the default namespace's runs, newest first, past the
// browser; there must be n of them.
func listRuns(t *testing.T, srv *emulator.Server, n int) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for {
		page, err := srv.Control().Runs(context.Background(), control.RunsQuery{Limit: 1000, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Runs {
			ids = append(ids, r.RunId)
		}
		if page.Next == nil {
			break
		}
		cursor = *page.Next
	}
	if len(ids) != n {
		t.Fatalf("the namespace holds %d runs, want %d", len(ids), n)
	}
	return ids
}

// TestBrowserLoadMoreTwice: "Load more" pressed again while the first press
// is on its way, when that first press brings the last runs, adds nothing;
// the second press started over without a cursor and added the first page
// again, every run of it twice.
func TestBrowserLoadMoreTwice(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	for i := 0; i < 60; i++ {
		submitRun(t, srv.URL(), "")
	}
	ctx := browser(t)
	do(t, ctx, "open the runs", chromedp.Navigate(srv.URL()+"/__admin/ui/#/runs"))
	const rows = `document.querySelectorAll('#runs-body tbody tr').length`
	until(t, ctx, rows+` === 50`, "the first page")
	eval[bool](t, ctx, `(() => {
		window.runCalls = 0;
		const f = window.fetch;
		window.fetch = (u, o) => String(u).includes('/hermes/runs?')
			? (window.runCalls++, new Promise((ok) => setTimeout(ok, 300)).then(() => f(u, o))) : f(u, o);
		const more = [...document.querySelectorAll('main button')].find((b) => b.textContent === 'Load more');
		more.click();
		more.click();
		return true;
	})()`)
	until(t, ctx, rows+` === 60`, "the last 10 runs")
	time.Sleep(time.Second) // a second page would have arrived
	ids := eval[[]string](t, ctx, `[...document.querySelectorAll('#runs-body tbody tr td:first-child a')].map((a) => a.textContent)`)
	if want := listRuns(t, srv, 60); !slices.Equal(ids, want) {
		t.Errorf("after two presses of Load more the view shows %d runs, want the namespace's 60 in order, each once", len(ids))
	}
	if n := eval[float64](t, ctx, `window.runCalls`); n != 1 {
		t.Errorf("two presses of Load more made %v listing calls, want 1", n)
	}
}

// TestBrowserRefreshAfterCheckout: when runs the view loaded are gone (a
// checkout to before half of them, the last one loaded among them), a
// refresh shows the loaded runs that remain, and Load more goes on after
// them with every other remaining run, each once. (The checkout's
// branch.restored frame refreshes the view; Refresh, pressed too, finds the
// same runs.)
func TestBrowserRefreshAfterCheckout(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	for i := 0; i < 80; i++ {
		submitRun(t, srv.URL(), "")
	}
	cp, err := srv.Control().Checkpoint(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 80; i++ {
		submitRun(t, srv.URL(), "")
	}
	all := listRuns(t, srv, 160)
	ctx := browser(t)
	do(t, ctx, "open the runs", chromedp.Navigate(srv.URL()+"/__admin/ui/#/runs"))
	const rows = `document.querySelectorAll('#runs-body tbody tr').length`
	const ids = `[...document.querySelectorAll('#runs-body tbody tr td:first-child a')].map((a) => a.textContent)`
	button := func(label string) string {
		return `[...document.querySelectorAll('main button')].find((b) => b.textContent === '` + label + `')`
	}
	until(t, ctx, rows+` === 50`, "the first page")
	eval[bool](t, ctx, button("Load more")+`.click(), true`)
	until(t, ctx, rows+` === 100`, "Load more brings the view to 100 runs")
	if err := srv.Control().Checkout(context.Background(), "main", cp); err != nil {
		t.Fatal(err)
	}
	left := listRuns(t, srv, 80)
	if slices.Contains(left, all[99]) {
		t.Fatalf("the last run loaded, %s, survived the checkout: the test needs another seed", all[99])
	}
	var want []string // the loaded runs that remain
	for _, id := range left {
		if slices.Index(all, id) < 100 {
			want = append(want, id)
		}
	}
	eval[bool](t, ctx, button("Refresh")+`.click(), true`)
	until(t, ctx, rows+` === `+strconv.Itoa(len(want)), "the refresh shows the loaded runs that remain")
	if got := eval[[]string](t, ctx, ids); !slices.Equal(got, want) {
		t.Fatalf("after the checkout the view shows %d runs, want the %d loaded ones that remain, in order", len(got), len(want))
	}
	for !eval[bool](t, ctx, button("Load more")+`.hidden`) {
		n := eval[float64](t, ctx, rows)
		eval[bool](t, ctx, button("Load more")+`.click(), true`)
		until(t, ctx, rows+` > `+strconv.Itoa(int(n)), "Load more adds runs")
	}
	if got := eval[[]string](t, ctx, ids); !slices.Equal(got, left) {
		t.Errorf("after Load more the view shows %d runs, want the namespace's %d in order, each once", len(got), len(left))
	}
}

// TestBrowserRefreshAfterBurst: 300 runs created while a refresh of 100
// loaded runs waits (as in a background tab) are read in two pages — the 100
// it showed, then the rest up to the last run loaded in one page of up to
// 1,000 — and a refresh queued meanwhile, if any, in one; the rest was read
// 50 at a time.
func TestBrowserRefreshAfterBurst(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	for i := 0; i < 100; i++ {
		submitRun(t, srv.URL(), "")
	}
	ctx := browser(t)
	do(t, ctx, "open the runs", chromedp.Navigate(srv.URL()+"/__admin/ui/#/runs"))
	waitText(t, ctx, "#stream-state", "stream: live")
	const rows = `document.querySelectorAll('#runs-body tbody tr').length`
	until(t, ctx, rows+` === 50`, "the first page")
	eval[bool](t, ctx, `[...document.querySelectorAll('main button')].find((b) => b.textContent === 'Load more').click(), true`)
	until(t, ctx, rows+` === 100`, "Load more brings the view to 100 runs")
	// Listing calls wait until released, and are counted from then on.
	eval[bool](t, ctx, `(() => {
		window.runCalls = 0;
		let release;
		window.released = new Promise((ok) => { release = ok; });
		window.release = release;
		const f = window.fetch;
		window.fetch = (u, o) => String(u).includes('/hermes/runs?')
			? window.released.then(() => { window.runCalls++; return f(u, o); }) : f(u, o);
		return true;
	})()`)
	if _, err := srv.Control().Clock().Advance(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		submitRun(t, srv.URL(), "")
	}
	time.Sleep(500 * time.Millisecond) // the frames arrive, the refreshes wait
	eval[bool](t, ctx, `(window.release(), true)`)
	until(t, ctx, rows+` === 400`, "the refresh shows the 300 new runs and the 100 loaded")
	time.Sleep(time.Second) // a further call would have been made
	if got, want := eval[[]string](t, ctx, `[...document.querySelectorAll('#runs-body tbody tr td:first-child a')].map((a) => a.textContent)`), listRuns(t, srv, 400); !slices.Equal(got, want) {
		t.Errorf("after the refresh the view shows %d runs, want the namespace's 400 in order, each once", len(got))
	}
	// Two pages, and a third call when a frame came after the refresh began
	// (it queues one more); 50 at a time took 8.
	if n := eval[float64](t, ctx, `window.runCalls`); n < 2 || n > 3 {
		t.Errorf("the refreshes made %v listing calls, want 2 or 3", n)
	}
}

// TestBrowserNamespaceStartsOver: picking another namespace shows its newest
// runs, as a change of the status filter does, and picking the first one
// again its newest page, not the runs Load more had brought there. (The
// runs view is shown again in place since the namespace picker no longer
// draws the view anew: TestBrowserNamespaceKeepsTyping.)
func TestBrowserNamespaceStartsOver(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	for i := 0; i < 60; i++ {
		submitRun(t, srv.URL(), "")
	}
	var t1 []string
	for i := 0; i < 3; i++ {
		t1 = append([]string{submitRun(t, srv.URL()+"/ns/t1", "")}, t1...)
	}
	ctx := browser(t)
	do(t, ctx, "open the runs", chromedp.Navigate(srv.URL()+"/__admin/ui/#/runs"))
	const rows = `document.querySelectorAll('#runs-body tbody tr').length`
	const ids = `[...document.querySelectorAll('#runs-body tbody tr td:first-child a')].map((a) => a.textContent)`
	const more = `[...document.querySelectorAll('main button')].find((b) => b.textContent === 'Load more')`
	until(t, ctx, rows+` === 50`, "the first page")
	eval[bool](t, ctx, more+`.click(), true`)
	until(t, ctx, rows+` === 60`, "Load more brings the view to 60 runs")
	pickNamespace(t, ctx, "t1")
	waitText(t, ctx, "#runs-body caption", "Runs in t1")
	if got := eval[[]string](t, ctx, ids); !slices.Equal(got, t1) {
		t.Errorf("in t1 the view shows %v, want t1's runs %v", got, t1)
	}
	if !eval[bool](t, ctx, more+`.hidden`) {
		t.Error("in t1 Load more is offered, want it hidden with t1's 3 runs shown")
	}
	pickNamespace(t, ctx, "default")
	waitText(t, ctx, "#runs-body caption", "Runs in default")
	if got, want := eval[[]string](t, ctx, ids), listRuns(t, srv, 60)[:50]; !slices.Equal(got, want) {
		t.Errorf("back in default the view shows %d runs, want the newest 50", len(got))
	}
	if eval[bool](t, ctx, more+`.hidden`) {
		t.Error("back in default Load more is hidden, want it offered")
	}
}

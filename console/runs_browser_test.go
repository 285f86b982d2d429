//go:build browser

package console_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hermes-emulator/hermes-emulator/emulator"
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

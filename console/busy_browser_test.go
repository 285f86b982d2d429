//go:build browser

package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// TestBrowserBusy: while a suite drives the emulator hard, a view refreshes
// a few times a second, not once per stream frame — every submission is a
// checkpoint frame, every poll a fault rule answers a fault frame, and a fetch and a
// full redraw of the timeline per frame would flood the emulator and hang
// the tab.
func TestBrowserBusy(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	ctx := browser(t)
	// A rule that fires on every poll.
	res, err := http.Post(srv.URL()+"/__admin/faults", "application/json",
		strings.NewReader(`{"operationId":"RunGet","status":503}`))
	if err != nil || res.StatusCode != 201 {
		t.Fatalf("add fault: %v %v", res, err)
	}
	res.Body.Close()
	for _, c := range []struct{ view, route, ready string }{
		{"timeline", "/__admin/timeline?", "#timeline-body"},
		{"clock", "/__admin/clock?", "#clock-now"},
		{"faults", "/__admin/faults?", "#fault-list"},
	} {
		do(t, ctx, "open "+c.view, chromedp.Navigate(srv.URL()+"/__admin/ui/#/"+c.view))
		waitText(t, ctx, "#stream-state", "stream: live")
		waitText(t, ctx, c.ready, "")
		time.Sleep(300 * time.Millisecond) // the view's first answers
		eval[bool](t, ctx, fmt.Sprintf(`(() => {
			window.calls = 0;
			const f = window.fetch;
			window.fetch = (u, o) => { if (String(u).includes(%q)) window.calls++; return f(u, o); };
			return true;
		})()`, c.route))
		start := time.Now()
		for i := 0; i < 200; i++ {
			id := submitRun(t, srv.URL(), "")
			res, err := http.Get(srv.URL() + "/v1/runs/" + id)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
		}
		took := time.Since(start)
		time.Sleep(time.Second) // the frames arrive and the view settles
		// At most one refresh per 150 ms while the submissions last, one
		// after, and the views' own polls.
		limit := float64(int(took/(150*time.Millisecond)) + 5)
		if n := eval[float64](t, ctx, `window.calls`); n > limit {
			t.Errorf("%s view: %v fetches of %s for 200 submissions and polls in %v, want at most %v", c.view, n, c.route, took, limit)
		}
	}
}

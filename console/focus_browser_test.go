//go:build browser

package console_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// TestBrowserPollKeepsFocus: the views that poll (Faults every 2 s, the live
// Journal every 1.5 s) keep the keyboard's place when nothing changed — a
// redraw of the same table replaced the focused Remove button or run link,
// so Enter pressed a moment later did nothing.
func TestBrowserPollKeepsFocus(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	res, err := http.Post(srv.URL()+"/__admin/faults", "application/json", strings.NewReader(`{"operationId":"RunGet","status":503}`))
	if err != nil || res.StatusCode != 201 {
		t.Fatalf("add fault: %v %v", res, err)
	}
	res.Body.Close()
	submitRun(t, srv.URL(), "")
	ctx := browser(t)
	for _, c := range []struct{ view, sel string }{
		{"faults", `#fault-list button[aria-label="Remove fault fault_1"]`},
		{"journal", `#journal-body a[href^="#/runs/run_"]`},
	} {
		do(t, ctx, "open "+c.view, chromedp.Navigate(srv.URL()+"/__admin/ui/#/"+c.view), chromedp.WaitVisible(css(c.sel)))
		eval[bool](t, ctx, `document.querySelector('`+c.sel+`').focus(), true`)
		time.Sleep(2500 * time.Millisecond) // past a poll
		if !eval[bool](t, ctx, `document.activeElement === document.querySelector('`+c.sel+`')`) {
			t.Errorf("%s: after a poll the focus is on %s, want it kept on %s", c.view,
				eval[string](t, ctx, `document.activeElement.tagName`), c.sel)
		}
	}
}

//go:build browser

package console_test

import (
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// TestBrowserLongTimeline: a timeline of 10,000 checkpoints in one chain
// (--max-checkpoints raised past its default of 1,000) shows in the
// Timeline view; the tree was walked by recursion, one level a checkpoint,
// and overflowed the browser's stack.
func TestBrowserLongTimeline(t *testing.T) {
	const n = 10000
	srv := emulatortest.New(t, emulator.Options{AdminKey: key, MaxCheckpoints: n + 10, ClockStart: 1700000000000, FreezeClock: true})
	for i := 0; i < n; i++ {
		req, _ := http.NewRequest("POST", srv.URL()+"/__admin/checkpoints", nil)
		req.Header.Set("X-Mockingbird-Admin-Key", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 201 {
			t.Fatalf("commit a checkpoint: %v %v", res, err)
		}
		res.Body.Close()
	}
	ctx := browser(t)
	do(t, ctx, "open the timeline", chromedp.Navigate(srv.URL()+"/__admin/ui/#/timeline"),
		chromedp.WaitVisible(css(`#key-dialog`)),
		chromedp.SendKeys(css(`#key-input`), key),
		chromedp.Click(css(`#key-save`)))
	do(t, ctx, "see the first checkpoint", chromedp.WaitVisible(css(`button[aria-label="Check out cp_00000001 on main"]`)))
	if rows := eval[float64](t, ctx, `document.querySelectorAll('#timeline-body tbody tr').length`); rows < n {
		t.Errorf("the timeline shows %v checkpoints, want %d or more", rows, n)
	}
}

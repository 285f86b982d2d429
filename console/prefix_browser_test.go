//go:build browser

package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// TestBrowserPrefix: the console opened behind a namespace prefix
// (/ns/<name>/__admin/ui/, docs/console.md) works in that namespace — its
// box shows the name and the runs view lists that namespace's runs — even
// when the tab picked another namespace before.
func TestBrowserPrefix(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	ctx := browser(t)
	res, err := http.Post(srv.URL()+"/ns/t9/v1/runs", "application/json", strings.NewReader(`{"input":"x"}`))
	if err != nil || res.StatusCode != 202 {
		t.Fatalf("submit in t9: %v %v", res, err)
	}
	res.Body.Close()

	// The tab first works in default, as a user who opened the plain console.
	do(t, ctx, "open the console", chromedp.Navigate(srv.URL()+"/__admin/ui/#/runs"))
	waitText(t, ctx, "#runs-body", "No runs in namespace default")

	do(t, ctx, "open the console behind /ns/t9", chromedp.Navigate(srv.URL()+"/ns/t9/__admin/ui/#/runs"))
	waitText(t, ctx, "#runs-body", "Runs in t9")
	if got := eval[string](t, ctx, `document.querySelector('#ns').value`); got != "t9" {
		t.Errorf("namespace box behind /ns/t9: %q, want t9", got)
	}
	if n := eval[float64](t, ctx, `document.querySelectorAll('#runs-body a[href^="#/runs/run_"]').length`); n != 1 {
		t.Errorf("behind /ns/t9 the runs view lists %v runs, want the 1 run of t9", n)
	}
}

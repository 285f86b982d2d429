//go:build browser

// The console in a real browser: headless Chromium driven through the
// DevTools protocol (chromedp) against a real emulator with a listener and an
// admin key. Run with scripts/browser-test, or
// `go test -tags browser ./console/...` when chromium is installed.
// The screenshots are taken every run and written to docs/console/ with
// -shots (scripts/browser-test -shots): a plain run leaves the tree as it
// was (Chromium's anti-aliasing differs by a few bytes between runs).
package console_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// browser starts headless Chromium at 1280×800 and returns a context of its
// first tab; page errors (uncaught exceptions, console.error calls) fail the
// test when it ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	var exe string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		t.Fatal("no chromium on PATH: scripts/browser-test installs it (apt-get install -y chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 800), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	var (
		mu     sync.Mutex
		errs   []string
		closed = make(chan struct{})
	)
	messages := chromedp.Console(ctx)
	go func() {
		defer close(closed)
		for m, err := range messages {
			if err != nil {
				return
			}
			// Browser log entries (Source set) include the expected 401 of the
			// first call, before the key is entered; only the page's own
			// errors count.
			if m.IsException() || (m.Type == chromedp.ConsoleError && m.Source == "") {
				mu.Lock()
				errs = append(errs, m.String())
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancelTab()
		<-closed
		for _, e := range errs {
			t.Errorf("page %s", e)
		}
	})
	return ctx
}

// do runs browser actions with a deadline and fails the test on error.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// text is the text content of the first element matching sel ("" when none).
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return eval[string](t, ctx, fmt.Sprintf(`(document.querySelector(%q)||{}).textContent||""`, sel))
}

// waitText waits until the text of sel contains want.
func waitText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := text(t, ctx, sel)
		if strings.Contains(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: text %q does not contain %q after 10s", sel, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// until waits until the JavaScript expression cond is true; what says what
// was awaited.
func until(t *testing.T, ctx context.Context, cond, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !eval[bool](t, ctx, cond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s, still not: %s (%s)", what, cond)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// submit presses the send button of the request card named action.
func submit(action string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(css(fmt.Sprintf(`form[data-action=%q] button[type=submit]`, action)))
}

var shots = flag.Bool("shots", false, "write the screenshots to docs/console/")

// shot takes a screenshot of the viewport and, with -shots, saves it to
// docs/console/<name>.png.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	// No toast (it fades on a timer), no focus (a blinking caret), at the top
	// of the page: the same picture every run.
	eval[bool](t, ctx, `document.getElementById('toast').classList.remove('show'), document.activeElement.blur(), window.scrollTo(0, 0), true`)
	time.Sleep(300 * time.Millisecond) // the toast's fade and the last render
	c, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if !*shots {
		return
	}
	dir := filepath.Join("..", "docs", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// openRun starts an emulator on a frozen clock, submits a run (with the
// Idempotency-Key key unless it is "") and opens the run's page once the
// console's control-plane stream is live.
func openRun(t *testing.T, key string) (*emulator.Server, context.Context, string) {
	t.Helper()
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	id := submitRun(t, srv.URL(), key)
	ctx := browser(t)
	do(t, ctx, "open the run", chromedp.Navigate(srv.URL()+"/__admin/ui/#/runs/"+id))
	waitText(t, ctx, "#stream-state", "stream: live")
	return srv, ctx, id
}

// submitRun submits a run as an application would, with an Idempotency-Key
// when key is not "", and returns its id.
func submitRun(t *testing.T, base, key string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/runs", strings.NewReader(`{"input":"Tidy the build directory"}`))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out struct {
		RunID string `json:"run_id"`
	}
	if res.StatusCode != 202 || json.Unmarshal(b, &out) != nil || out.RunID == "" {
		t.Fatalf("submit: %d %s", res.StatusCode, b)
	}
	return out.RunID
}

type clockState struct {
	Now    float64 `json:"now"`
	Frozen bool    `json:"frozen"`
}

// clock reads GET /__admin/clock past the browser.
func clock(base string) (clockState, error) {
	var st clockState
	req, _ := http.NewRequest("GET", base+"/__admin/clock", nil)
	req.Header.Set("X-Mockingbird-Admin-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer res.Body.Close()
	err = json.NewDecoder(res.Body).Decode(&st)
	return st, err
}

// TestBrowser drives the console: enter the key, see a submitted run appear
// live, play it to completion with the buttons and watch its frames, add and
// clear a fault, advance the frozen clock, unfreeze and freeze it.
func TestBrowser(t *testing.T) {
	// A frozen clock and the emulator's deterministic run ids keep the
	// screenshots the same from one run to the next.
	srv := emulatortest.New(t, emulator.Options{AdminKey: key, ClockStart: 1700000000000, FreezeClock: true})
	ctx := browser(t)

	// The shell loads without the key; the first call answers 401 and the
	// page asks for the key.
	do(t, ctx, "open the console", chromedp.Navigate(srv.URL()+"/__admin/ui/"),
		chromedp.WaitVisible(css(`#key-dialog`)),
		chromedp.SendKeys(css(`#key-input`), key),
		chromedp.Click(css(`#key-save`)))

	t.Run("run", func(t *testing.T) {
		waitText(t, ctx, "#stream-state", "stream: live")
		waitText(t, ctx, "#runs-body", "No runs in namespace default")
		submitRun(t, srv.URL(), "delivery-1")
		id := submitRun(t, srv.URL(), "")
		link := fmt.Sprintf(`#runs-body a[href="#/runs/%s"]`, id)
		do(t, ctx, "see the run appear", chromedp.WaitVisible(css(link)))
		waitText(t, ctx, "#runs-body", "queued")
		shot(t, ctx, "runs")

		do(t, ctx, "open the run", chromedp.Click(css(link)))
		waitText(t, ctx, "#run-summary", "queued")
		// The Complete card shows its request and copies it as curl.
		shown := text(t, ctx, `form[data-action="complete"] pre.req`)
		want := "POST /__admin/hermes/runs/" + id + "/observe?namespace=default\n" +
			`{"status":"completed","output":"Done.","usage":{"input_tokens":12,"output_tokens":34,"total_tokens":46}}`
		if shown != want {
			t.Errorf("the Complete card shows %q, want %q", shown, want)
		}
		curl := eval[string](t, ctx, `document.querySelector('form[data-action="complete"]').dataset.curl`)
		wantCurl := "curl -sS -X POST '" + srv.URL() + "/__admin/hermes/runs/" + id + "/observe?namespace=default' \\\n" +
			"  -H \"x-mockingbird-admin-key: $MOCKINGBIRD_ADMIN_KEY\" \\\n" +
			"  -H 'content-type: application/json' \\\n" +
			`  -d '{"status":"completed","output":"Done.","usage":{"input_tokens":12,"output_tokens":34,"total_tokens":46}}'`
		if curl != wantCurl {
			t.Errorf("the Complete card's curl is\n%s\nwant\n%s", curl, wantCurl)
		}
		do(t, ctx, "mark running", submit("running"))
		waitText(t, ctx, "#run-summary", "running")
		// An approval request shows as pending; running again clears it.
		do(t, ctx, "ask for approval", submit("approval"))
		waitText(t, ctx, "#run-summary", "Pending approvals (1)")
		waitText(t, ctx, "#run-summary", `"command":"rm -rf build/"`)
		do(t, ctx, "mark running", submit("running"))
		waitText(t, ctx, "#run-summary", "Pending approvals (0)")
		// The application steers; the queued text shows until delivered.
		res, err := http.Post(srv.URL()+"/v1/runs/"+id+"/steer", "application/json", strings.NewReader(`{"input":"also run the tests"}`))
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("steer: %v %v", res, err)
		}
		res.Body.Close()
		waitText(t, ctx, "#run-summary", "Queued steers (1)also run the tests")
		do(t, ctx, "deliver steers", submit("deliver"))
		waitText(t, ctx, "#run-summary", "Queued steers (0)")
		do(t, ctx, "start a tool", submit("tool-started"))
		do(t, ctx, "send a delta", submit("delta"))
		frames := fmt.Sprintf(`pre[data-frames=%q]`, id)
		waitText(t, ctx, frames, `"event":"message.delta"`)
		waitText(t, ctx, frames, `"event":"tool.started"`)
		do(t, ctx, "complete", submit("complete"))
		waitText(t, ctx, "#run-summary", "completed")
		waitText(t, ctx, frames, `"event":"run.completed"`)
		if got := text(t, ctx, frames); !strings.HasPrefix(got, "data: {") {
			t.Errorf("frames start %q, want SSE data lines", got)
		}
		shot(t, ctx, "run")

		// A narrow window: one column, nothing wider than the window.
		do(t, ctx, "narrow window", chromedp.EmulateViewport(420, 860))
		if !eval[bool](t, ctx, `document.documentElement.scrollWidth <= window.innerWidth`) {
			t.Errorf("at 420 px the page is %v px wide", eval[float64](t, ctx, `document.documentElement.scrollWidth`))
		}
		shot(t, ctx, "run-narrow")
		do(t, ctx, "wide window", chromedp.EmulateViewport(1280, 800))
	})

	t.Run("journal", func(t *testing.T) {
		submitRun(t, srv.URL(), "")
		do(t, ctx, "open the journal", chromedp.Navigate(srv.URL()+"/__admin/ui/#/journal"))
		waitText(t, ctx, "#journal-body", "POST /v1/runs")
		waitText(t, ctx, "#journal-body", "RunCreate")
	})

	t.Run("timeline", func(t *testing.T) {
		// Check out the first checkpoint (before any run): the runs go.
		do(t, ctx, "open the timeline", chromedp.Navigate(srv.URL()+"/__admin/ui/#/timeline"))
		first := css(`button[aria-label="Check out cp_00000001 on main"]`)
		do(t, ctx, "see the first checkpoint", chromedp.WaitVisible(first))
		shot(t, ctx, "timeline")
		do(t, ctx, "check out cp_00000001", chromedp.Click(first),
			chromedp.WaitVisible(css(`#confirm-yes`)), chromedp.Click(css(`#confirm-yes`)))
		waitText(t, ctx, "#toast", "Checked out cp_00000001")
		do(t, ctx, "back to the runs", chromedp.Navigate(srv.URL()+"/__admin/ui/#/runs"))
		waitText(t, ctx, "#runs-body", "No runs in namespace default")
	})

	t.Run("namespace", func(t *testing.T) {
		do(t, ctx, "open the runs", chromedp.Navigate(srv.URL()+"/__admin/ui/#/runs"))
		pick := func(ns string) {
			eval[bool](t, ctx, fmt.Sprintf(`(i => (i.value = %q, i.dispatchEvent(new Event('change')), true))(document.querySelector('#ns'))`, ns))
		}
		pick("t1")
		waitText(t, ctx, "#runs-body", "No runs in namespace t1")
		waitText(t, ctx, "#stream-state", "stream: live")
		pick("default")
		waitText(t, ctx, "#runs-body", "No runs in namespace default")
	})

	t.Run("faults", func(t *testing.T) {
		// By keyboard: the Faults link, then the preset's button, with Enter.
		do(t, ctx, "open the runs", chromedp.Navigate(srv.URL()+"/__admin/ui/#/runs"))
		eval[bool](t, ctx, `document.querySelector('nav a[data-view="faults"]').focus(), true`)
		do(t, ctx, "Enter on the Faults link", chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(css(`button[data-preset="hermes_throttled"]`)))
		waitText(t, ctx, "#fault-list", "No fault rules")
		eval[bool](t, ctx, `document.querySelector('button[data-preset="hermes_throttled"]').focus(), true`)
		do(t, ctx, "Enter on the preset", chromedp.KeyEvent(kb.Enter))
		waitText(t, ctx, "#fault-list", "hermes_throttled")
		waitText(t, ctx, "#fault-list", "status 429")
		shot(t, ctx, "faults")
		do(t, ctx, "clear the faults", chromedp.Click(css(`#clear-faults`)),
			chromedp.WaitVisible(css(`#confirm-yes`)), chromedp.Click(css(`#confirm-yes`)))
		waitText(t, ctx, "#fault-list", "No fault rules")
	})

	t.Run("clock", func(t *testing.T) {
		// Frozen since start (the checkout above restored that): advance it.
		do(t, ctx, "open the clock", chromedp.Navigate(srv.URL()+"/__admin/ui/#/clock"))
		waitText(t, ctx, "#clock-frozen", "frozen")
		st, err := clock(srv.URL())
		if err != nil || !st.Frozen {
			t.Fatalf("clock: %+v, %v; want frozen", st, err)
		}
		waitText(t, ctx, "#clock-now", fmt.Sprintf("(%d ms)", int64(st.Now)))
		shot(t, ctx, "clock")
		do(t, ctx, "advance 15m", submit("advance"))
		waitText(t, ctx, "#clock-now", fmt.Sprintf("(%d ms)", int64(st.Now)+900000))
		if after, err := clock(srv.URL()); err != nil || after.Now != st.Now+900000 {
			t.Errorf("clock after Advance 15m: %+v, %v; want now %v", after, err, st.Now+900000)
		}
		do(t, ctx, "unfreeze", submit("unfreeze"))
		waitText(t, ctx, "#clock-frozen", "running")
		do(t, ctx, "freeze", submit("freeze"))
		waitText(t, ctx, "#clock-frozen", "frozen")
		if after, err := clock(srv.URL()); err != nil || !after.Frozen {
			t.Errorf("clock after Freeze: %+v, %v; want frozen", after, err)
		}
	})

	// After the clock view: the run moves the clock, which the clock screenshot shows.
	t.Run("scenarios", func(t *testing.T) { testScenarios(t, ctx, srv) })

	t.Run("narrow", func(t *testing.T) {
		// Every view fits a narrow window: nothing wider than 420 px (wide
		// tables scroll inside their box).
		do(t, ctx, "narrow window", chromedp.EmulateViewport(420, 860))
		defer do(t, ctx, "wide window", chromedp.EmulateViewport(1280, 800))
		for _, view := range []string{"runs", "clock", "faults", "journal", "timeline", "scenarios"} {
			do(t, ctx, "open "+view, chromedp.Navigate(srv.URL()+"/__admin/ui/#/"+view), chromedp.WaitVisible(css(`main h2`)))
			time.Sleep(200 * time.Millisecond) // the view's first answers
			if w := eval[float64](t, ctx, `document.documentElement.scrollWidth`); w > 420 {
				t.Errorf("%s at 420 px is %v px wide", view, w)
			}
		}
	})
}

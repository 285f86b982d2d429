//go:build browser

package console_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// A timer or a stream frame leaves alone what the user is typing or has
// selected (docs/console.md, Refreshes keep your place).

// getRun reads a run as an application would, a RunGet in the journal.
func getRun(t *testing.T, base, id string) {
	t.Helper()
	res, err := http.Get(base + "/v1/runs/" + id)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET /v1/runs/%s: %d", id, res.StatusCode)
	}
}

// TestBrowserJournalPollKeepsFilter: the live Journal's poll asks for the
// filter last applied with Filter or Enter, not for what is half typed in
// Operation; it read the fields as they were, so "RunG" showed "No requests
// journaled that match." before the user pressed Enter.
func TestBrowserJournalPollKeepsFilter(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	id := submitRun(t, srv.URL(), "")
	submitRun(t, srv.URL(), "")
	getRun(t, srv.URL(), id)
	ctx := browser(t)
	do(t, ctx, "open the journal", chromedp.Navigate(srv.URL()+"/__admin/ui/#/journal"))
	const rows = `document.querySelectorAll('#journal-body tbody tr').length`
	const ops = `[...document.querySelectorAll('#journal-body tbody tr')].map((tr) => tr.cells[3].textContent).join(' ')`
	// shows waits for the journal to show n rows or none; it fails unless it
	// shows the n rows with operations want, newest first.
	shows := func(what string, n int, want string) {
		t.Helper()
		until(t, ctx, fmt.Sprintf(`%s === %d || !!document.querySelector('#journal-body p.empty')`, rows, n), what)
		if got := eval[string](t, ctx, ops); got != want {
			t.Fatalf("%s: the journal shows %q (%s), want %q", what, got, text(t, ctx, "#journal-body"), want)
		}
	}
	shows("the journal", 3, "RunGet RunCreate RunCreate")
	operation := css(`#main input[placeholder="RunCreate"]`)
	do(t, ctx, "type RunG", chromedp.SendKeys(operation, "RunG"))
	getRun(t, srv.URL(), id)
	shows("a poll while RunG is typed", 4, "RunGet RunGet RunCreate RunCreate")
	do(t, ctx, "type et and Enter", chromedp.SendKeys(operation, "et"+kb.Enter))
	shows("the journal filtered by RunGet", 2, "RunGet RunGet")
	do(t, ctx, "type RunGetX", chromedp.SendKeys(operation, "X"))
	getRun(t, srv.URL(), id)
	shows("a poll while RunGetX is typed", 3, "RunGet RunGet RunGet")
}

// TestBrowserClockKeepsSelection: the running clock's tick rewrites only its
// time, so a selection elsewhere in the Clock view stays, and it holds the
// time while a selection touches it; it rewrote Now, State and Offset every
// second, clearing any selection in them.
func TestBrowserClockKeepsSelection(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000})
	ctx := browser(t)
	do(t, ctx, "open the clock", chromedp.Navigate(srv.URL()+"/__admin/ui/#/clock"))
	waitText(t, ctx, "#clock-frozen", "running")
	sel := func(q string) string {
		t.Helper()
		return eval[string](t, ctx, fmt.Sprintf(`getSelection().selectAllChildren(document.querySelector(%q)), getSelection().toString()`, q))
	}
	if got := sel("#clock-frozen"); got != "running" {
		t.Fatalf("selected %q in State, want running", got)
	}
	now := text(t, ctx, "#clock-now")
	until(t, ctx, fmt.Sprintf(`document.querySelector('#clock-now').textContent !== %q`, now), "the running clock ticks")
	if got := eval[string](t, ctx, `getSelection().toString()`); got != "running" {
		t.Errorf("after a tick the selection is %q, want running", got)
	}
	shown := sel("#clock-time")
	if shown == "" {
		t.Fatal("nothing selected in the time")
	}
	until(t, ctx, `!document.querySelector('#clock-held').hidden`, "a tick holds the selected time")
	if got := text(t, ctx, "#clock-time"); got != shown {
		t.Errorf("while selected the time shows %q, want %q held", got, shown)
	}
	if got := eval[string](t, ctx, `getSelection().toString()`); got != shown {
		t.Errorf("after a held tick the selection is %q, want %q", got, shown)
	}
	eval[bool](t, ctx, `getSelection().removeAllRanges(), true`)
	until(t, ctx, fmt.Sprintf(`document.querySelector('#clock-time').textContent !== %q && document.querySelector('#clock-held').hidden`, shown),
		"the time ticks again once the selection is gone")
}

// TestBrowserClockKeepsSetEmpty: the Clock view offers the time in "Set to"
// once; it refilled the field whenever a tick found it empty, so a user who
// cleared it to type an epoch had the date back within a second.
func TestBrowserClockKeepsSetEmpty(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000})
	ctx := browser(t)
	do(t, ctx, "open the clock", chromedp.Navigate(srv.URL()+"/__admin/ui/#/clock"))
	waitText(t, ctx, "#clock-frozen", "running")
	const input = `document.querySelector('form[data-action="set"] input')`
	until(t, ctx, input+`.value !== ''`, "Set to is offered the time")
	now := eval[string](t, ctx, `(i => (i.focus(), i.select(), document.execCommand('delete'), document.querySelector('#clock-time').textContent))(`+input+`)`)
	until(t, ctx, fmt.Sprintf(`document.querySelector('#clock-time').textContent !== %q`, now), "the running clock ticks")
	if got := eval[string](t, ctx, input+`.value`); got != "" {
		t.Errorf("after a tick Set to holds %q, want it left empty", got)
	}
	if got, want := text(t, ctx, `form[data-action="set"] pre.req`), `POST /__admin/clock?namespace=default`+"\n"+`{"set":""}`; got != want {
		t.Errorf("the Set card shows %q, want %q", got, want)
	}
}

// countAnswers makes the page count, in window.answers[path], the answers it
// reads from then on and the calls that fail; a view has drawn an answer or
// a failure by the time the test can read its count, as the rest of the load
// that met it runs in the same task.
func countAnswers(t *testing.T, ctx context.Context) {
	t.Helper()
	eval[bool](t, ctx, `(() => {
		window.answers = {};
		const f = window.fetch;
		window.fetch = async (...a) => {
			const path = new URL(a[0], location.href).pathname;
			let res;
			try {
				res = await f.apply(window, a);
			} catch (e) {
				window.answers[path] = (window.answers[path] || 0) + 1;
				throw e;
			}
			const read = res.text.bind(res);
			res.text = async () => {
				const s = await read();
				window.answers[path] = (window.answers[path] || 0) + 1;
				return s;
			};
			return res;
		};
		return true;
	})()`)
}

// TestBrowserEmptyTextKeepsSelection: the Faults view's poll leaves the
// text it shows without rules as it is; every poll (2 s) wrote it again,
// clearing a selection in it.
func TestBrowserEmptyTextKeepsSelection(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	ctx := browser(t)
	do(t, ctx, "open the faults", chromedp.Navigate(srv.URL()+"/__admin/ui/#/faults"))
	waitText(t, ctx, "#fault-list", "No fault rules")
	countAnswers(t, ctx)
	const want = "No fault rules: every vendor request is answered normally."
	if got := eval[string](t, ctx, `getSelection().selectAllChildren(document.querySelector('#fault-list p.empty')), getSelection().toString()`); got != want {
		t.Fatalf("selected %q, want %q", got, want)
	}
	until(t, ctx, `(window.answers['/__admin/faults'] || 0) >= 1`, "a poll of the faults answered")
	if got := eval[string](t, ctx, `getSelection().toString()`); got != want {
		t.Errorf("after a poll the selection is %q, want %q", got, want)
	}
}

// TestBrowserRunFactsKeepSelection: a change of the run rewrites the facts
// of its page that changed and leaves the others, with a selection in them,
// as they are; every refresh (every checkpoint of the namespace) drew them
// all again.
func TestBrowserRunFactsKeepSelection(t *testing.T) {
	srv, ctx, id := openRun(t, "polish-key")
	waitText(t, ctx, "#run-summary", "queued")
	if got := eval[string](t, ctx, `getSelection().selectAllChildren(document.querySelector('#run-summary dl.facts dd:nth-of-type(6)')), getSelection().toString()`); got != "polish-key" {
		t.Fatalf("selected %q in Reservation, want polish-key", got)
	}
	if _, err := srv.Control().Observe(context.Background(), id, map[string]any{"status": "running"}); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, `document.querySelector('#run-summary .badge').textContent === 'running'`, "the run page shows running")
	if got := eval[string](t, ctx, `getSelection().toString()`); got != "polish-key" {
		t.Errorf("after the run changed the selection is %q, want polish-key", got)
	}
}

// TestBrowserRunJSONKeepsSelection: a change of the run rewrites the lines
// of the page's JSON that changed and leaves a selection in another line as
// it is; the whole text was written again on every change (each event of a
// run that streams).
func TestBrowserRunJSONKeepsSelection(t *testing.T) {
	srv, ctx, id := openRun(t, "polish-key")
	waitText(t, ctx, "#run-summary pre.json", `"status": "queued"`)
	got := eval[string](t, ctx, `(() => {
		document.querySelector('#run-summary details').open = true;
		const text = document.querySelector('#run-summary pre.json').firstChild, at = text.data.indexOf('"polish-key"');
		getSelection().setBaseAndExtent(text, at, text, at + '"polish-key"'.length);
		return getSelection().toString();
	})()`)
	if got != `"polish-key"` {
		t.Fatalf("selected %q in the JSON, want the key", got)
	}
	if _, err := srv.Control().Observe(context.Background(), id, map[string]any{"status": "running"}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Control().Events(context.Background(), id, map[string]any{"event": "message.delta", "delta": "chunk"}); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, `(t => t.includes('"status": "running"') && t.includes('"events_buffered": 1'))(document.querySelector('#run-summary pre.json').textContent)`,
		"the JSON shows the run running with its event")
	if got := eval[string](t, ctx, `getSelection().toString()`); got != `"polish-key"` {
		t.Errorf("after the run changed the selection is %q, want the key", got)
	}
	// An approval adds lines after the key's.
	if _, err := srv.Control().Observe(context.Background(), id, map[string]any{"status": "waiting_for_approval", "approval": map[string]any{"command": "ls"}}); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "#run-summary pre.json", `"command": "ls"`)
	if got := eval[string](t, ctx, `getSelection().toString()`); got != `"polish-key"` {
		t.Errorf("after an approval came the selection is %q, want the key", got)
	}
	// The lines rewritten in place read as the JSON drawn afresh.
	shown := text(t, ctx, "#run-summary pre.json")
	eval[bool](t, ctx, `(location.hash = '#/runs', true)`)
	waitText(t, ctx, "#runs-body", id)
	eval[bool](t, ctx, `(location.hash = '#/runs/`+id+`', true)`)
	waitText(t, ctx, "#run-summary pre.json", `"command": "ls"`)
	if fresh := text(t, ctx, "#run-summary pre.json"); fresh != shown {
		t.Errorf("the JSON showed\n%s\ndrawn afresh it shows\n%s", shown, fresh)
	}
}

// TestBrowserNoticeKeepsSelection: while the emulator is gone, the live
// Journal's poll leaves its notice, which says the same each time, as it is;
// every poll (1.5 s) drew it again, clearing a selection in it.
func TestBrowserNoticeKeepsSelection(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	ctx := browser(t)
	do(t, ctx, "open the journal", chromedp.Navigate(srv.URL()+"/__admin/ui/#/journal"))
	waitText(t, ctx, "#journal-body p.empty", "No requests journaled")
	countAnswers(t, ctx)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	const want = "0 network error: Failed to fetch"
	waitText(t, ctx, "#journal-body p.notice", want)
	got := eval[string](t, ctx, `getSelection().selectAllChildren(document.querySelector('#journal-body p.notice')), getSelection().toString()`)
	if got != want {
		t.Fatalf("selected %q, want %q", got, want)
	}
	n := eval[float64](t, ctx, `window.answers['/__admin/requests']`)
	until(t, ctx, fmt.Sprintf(`window.answers['/__admin/requests'] > %v`, n), "another poll of the journal failed")
	if got := eval[string](t, ctx, `getSelection().toString()`); got != want {
		t.Errorf("after a poll the selection is %q, want %q", got, want)
	}
}

// TestBrowserTimelineHeadsKeepSelection: a checkpoint on main rewrites main's
// head in the Timeline and leaves another branch's, with a selection in it,
// as it is; every move of a head drew all the heads again.
func TestBrowserTimelineHeadsKeepSelection(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	submitRun(t, srv.URL(), "")
	res, err := http.Post(srv.URL()+"/__admin/branches/try-1", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		t.Fatalf("POST /__admin/branches/try-1: %d", res.StatusCode)
	}
	tl, err := srv.Control().Timeline(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := "try-1 → " + tl.Branches["try-1"]
	ctx := browser(t)
	do(t, ctx, "open the timeline", chromedp.Navigate(srv.URL()+"/__admin/ui/#/timeline"))
	waitText(t, ctx, "#stream-state", "stream: live")
	waitText(t, ctx, "#timeline-body p", want)
	const pill = `[...document.querySelectorAll('#timeline-body p .pill')].find((p) => p.textContent.startsWith('try-1'))`
	if got := eval[string](t, ctx, `getSelection().selectAllChildren(`+pill+`), getSelection().toString()`); got != want {
		t.Fatalf("selected %q, want %q", got, want)
	}
	head, err := srv.Control().Checkpoint(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "#timeline-body p", "main → "+head)
	if got := eval[string](t, ctx, `getSelection().toString()`); got != want {
		t.Errorf("after main moved the selection is %q, want %q", got, want)
	}
}

// scenarioSet is a set of n scenarios named s1…sn, as PUT sends it.
func scenarioSet(n int) string {
	var b strings.Builder
	b.WriteString(`{"scenarios":[`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"s%d","match":{"input":"task %d"},"steps":[{"after":"1s","observe":{"status":"running"}},`+
			`{"after":"2s","observe":{"status":"completed","output":"Done."}}]}`, i, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// TestBrowserScenariosRefreshKeepsPlace: Refresh in the Scenarios view, with
// a set another client changed meanwhile, updates the table and the JSON in
// place: a selection in the table, the JSON section open, focused and
// scrolled, and the load form the user emptied stay. Refresh drew the table
// and a closed JSON section anew and put the set back in the emptied form.
func TestBrowserScenariosRefreshKeepsPlace(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	admin(t, srv.URL(), "PUT", "/__admin/hermes/scenarios", scenarioSet(6))
	ctx := browser(t)
	do(t, ctx, "open the scenarios", chromedp.Navigate(srv.URL()+"/__admin/ui/#/scenarios"))
	const rows = `document.querySelectorAll('#scenarios-body tbody tr').length`
	until(t, ctx, rows+` === 6`, "the view shows the 6 scenarios")
	const form = `document.querySelector('form[data-action="put-scenarios"] textarea')`
	until(t, ctx, form+`.value.includes('"s6"')`, "the load form is offered the set")
	got := eval[string](t, ctx, `(() => {
		const f = `+form+`;
		f.focus(), f.select(), document.execCommand('delete');
		const pre = document.querySelector('#scenarios-body pre.json');
		pre.closest('details').open = true;
		pre.focus();
		pre.scrollTop = 100;
		window.top0 = pre.scrollTop;
		getSelection().selectAllChildren(document.querySelector('#scenarios-body tbody tr:nth-child(3) code'));
		return getSelection().toString();
	})()`)
	if got != "s3" {
		t.Fatalf("selected %q in the table, want s3", got)
	}
	if eval[float64](t, ctx, `window.top0`) != 100 {
		t.Fatal("the JSON section does not scroll: make the set longer")
	}
	admin(t, srv.URL(), "PUT", "/__admin/hermes/scenarios", scenarioSet(7))
	eval[bool](t, ctx, `[...document.querySelectorAll('#main .toolbar button')].find((b) => b.textContent === 'Refresh').click(), true`)
	until(t, ctx, rows+` === 7`, "Refresh shows the 7 scenarios")
	waitText(t, ctx, "#scenarios-body pre.json", `"name": "s7"`)
	if got := eval[string](t, ctx, `getSelection().toString()`); got != "s3" {
		t.Errorf("after Refresh the selection is %q, want s3", got)
	}
	pre := `document.querySelector('#scenarios-body pre.json')`
	if !eval[bool](t, ctx, pre+`.closest('details').open`) {
		t.Error("after Refresh the JSON section is closed, want it left open")
	}
	if !eval[bool](t, ctx, `document.activeElement === `+pre) {
		t.Errorf("after Refresh the focus is on %s, want it kept on the JSON", eval[string](t, ctx, `document.activeElement.outerHTML.slice(0, 120)`))
	}
	if got := eval[float64](t, ctx, pre+`.scrollTop`); got != 100 {
		t.Errorf("after Refresh the JSON is scrolled to %v, want 100", got)
	}
	if got := eval[string](t, ctx, form+`.value.slice(0, 40)`); got != "" {
		t.Errorf("after Refresh the emptied load form holds %q…, want it left empty", got)
	}
}

// TestBrowserRefreshKeepsTyping: in every view with a form, the view's own
// refresh — its poll, a stream frame, its Refresh button — leaves what the
// user is typing there as it is, with the focus and the caret (the views
// update their data in place; nothing draws a form anew).
func TestBrowserRefreshKeepsTyping(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	id := submitRun(t, srv.URL(), "")
	ctl := srv.Control()
	bg := context.Background()
	ctx := browser(t)
	do(t, ctx, "open the console", chromedp.Navigate(srv.URL()+"/__admin/ui/"))
	waitText(t, ctx, "#stream-state", "stream: live")
	countAnswers(t, ctx)
	for _, c := range []struct {
		view  string // the route
		path  string // the call that refreshes it
		field string // the field the user types in
		typed string // what is typed there
		// refresh makes the view refresh (nothing: its poll).
		refresh func(t *testing.T)
	}{
		{"faults", "/__admin/faults", `form[data-action="add-fault"] textarea`, `{"operationId":"RunGet","status":5`,
			func(t *testing.T) {}},
		{"clock", "/__admin/clock", `form[data-action="advance"] input`, `90`, func(t *testing.T) {
			if _, err := ctl.Clock().Advance(bg, time.Second); err != nil {
				t.Fatal(err)
			}
		}},
		{"journal", "/__admin/requests", `#main input[placeholder="RunCreate"]`, `RunG`, func(t *testing.T) {}},
		{"timeline", "/__admin/timeline", `form[data-action="branch"] input`, `try-`, func(t *testing.T) {
			if _, err := ctl.Checkpoint(bg, "main"); err != nil {
				t.Fatal(err)
			}
		}},
		{"scenarios", "/__admin/hermes/scenarios", `form[data-action="put-scenarios"] textarea`, `{"scenarios": [`, func(t *testing.T) {
			eval[bool](t, ctx, `[...document.querySelectorAll('#main .toolbar button')].find((b) => b.textContent === 'Refresh').click(), true`)
		}},
		{"runs/" + id, "/__admin/hermes/runs/" + id, `form[data-action="approval"] input`, `rm -rf dis`, func(t *testing.T) {
			if _, err := ctl.Observe(bg, id, map[string]any{"status": "running"}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.view, func(t *testing.T) {
			do(t, ctx, "open "+c.view, chromedp.Navigate(srv.URL()+"/__admin/ui/#/"+c.view), chromedp.WaitVisible(css(c.field)))
			answered := fmt.Sprintf(`(window.answers[%q] || 0)`, c.path)
			until(t, ctx, answered+` >= 1`, c.view+" shows its first answer")
			eval[bool](t, ctx, fmt.Sprintf(`(window.typed = document.querySelector(%q)).value = '', true`, c.field))
			do(t, ctx, "type", chromedp.SendKeys(css(c.field), c.typed))
			n := eval[float64](t, ctx, `window.typed.setSelectionRange(2, 2), `+answered)
			c.refresh(t)
			until(t, ctx, fmt.Sprintf(`%s > %v`, answered, n), c.view+" refreshes")
			if !eval[bool](t, ctx, `window.typed.isConnected`) {
				t.Fatalf("the field %s was drawn again: %q typed in it is gone", c.field, c.typed)
			}
			if got := eval[string](t, ctx, `window.typed.value`); got != c.typed {
				t.Errorf("the field holds %q, want %q as typed", got, c.typed)
			}
			if !eval[bool](t, ctx, `document.activeElement === window.typed && window.typed.selectionStart === 2`) {
				t.Errorf("the focus is on %s (caret at %v), want it kept in the field at 2",
					eval[string](t, ctx, `document.activeElement.outerHTML.slice(0, 120)`), eval[float64](t, ctx, `window.typed.selectionStart`))
			}
		})
	}
}

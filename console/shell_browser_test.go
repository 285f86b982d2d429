//go:build browser

package console_test

// The shell's refresh (static/app.js): a key saved in the dialog or another
// namespace picked shows the current view again in place.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// TestBrowserKeyKeepsTyping: in every view, a call that meets a 401 (the
// key in the tab is wrong) opens the key dialog, and saving the key there
// refreshes the view in place: what the user was typing, with the focus and
// the caret, stays, and the view shows the emulator's answer again. Saving
// drew the view anew, so a half-typed fault rule, clock time, journal filter,
// scenario set, branch name or approval command was lost, and the focus (on
// a run link of the runs view too) went to the page.
func TestBrowserKeyKeepsTyping(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{AdminKey: key, ClockStart: 1700000000000, FreezeClock: true})
	id := submitRun(t, srv.URL(), "")
	ctl := srv.Control()
	bg := context.Background()
	ctx := browser(t)
	do(t, ctx, "open the faults", chromedp.Navigate(srv.URL()+"/__admin/ui/#/faults"),
		chromedp.WaitVisible(css(`#key-dialog`)),
		chromedp.SendKeys(css(`#key-input`), key),
		chromedp.Click(css(`#key-save`)))
	waitText(t, ctx, "#stream-state", "stream: live")
	waitText(t, ctx, "#fault-list", "No fault rules")
	// The request cards drawn before there was a key show it in their curl now.
	const header = `-H "x-mockingbird-admin-key: $MOCKINGBIRD_ADMIN_KEY"`
	if got := eval[string](t, ctx, `document.querySelector('form[data-action="add-fault"]').dataset.curl`); !strings.Contains(got, header) {
		t.Errorf("after the key was saved the Add card's curl is\n%s\nwant it with %s", got, header)
	}

	for _, c := range []struct {
		view  string // the route
		ready string // a condition: the view shows the emulator's answer
		after string // the condition after the key is saved, when not ready
		field string // the field the user types in
		typed string // what is typed there
		// meet401 makes the view call the emulator (the wrong key is in the tab).
		meet401 func(t *testing.T)
	}{
		{"faults", `!!document.querySelector('#fault-list p.empty')`, "", `form[data-action="add-fault"] textarea`,
			`{"operationId":"RunGet","status":5`, func(t *testing.T) {}}, // the poll, every 2 s
		{"clock", `document.querySelector('#clock-frozen').textContent === 'frozen'`, "", `form[data-action="set"] input`,
			`17000000`, func(t *testing.T) {
				eval[bool](t, ctx, `document.querySelector('form[data-action="freeze"]').requestSubmit(), true`)
			}},
		{"journal", `!!document.querySelector('#journal-body tbody tr')`, "", `#main input[placeholder="RunCreate"]`,
			`RunG`, func(t *testing.T) {}}, // the live poll, every 1.5 s
		{"timeline", `!!document.querySelector('#timeline-body tbody tr')`, "", `form[data-action="branch"] input`,
			`try-`, func(t *testing.T) {
				if _, err := ctl.Checkpoint(bg, "main"); err != nil {
					t.Fatal(err)
				}
			}},
		{"scenarios", `!!document.querySelector('#scenarios-body p.empty')`, "", `form[data-action="put-scenarios"] textarea`,
			`{"scenarios": [`, func(t *testing.T) {
				eval[bool](t, ctx, `[...document.querySelectorAll('#main .toolbar button')].find((b) => b.textContent === 'Refresh').click(), true`)
			}},
		{"runs", `!!document.querySelector('#runs-body tbody a')`, "", `#runs-body tbody a`, "", func(t *testing.T) {
			submitRun(t, srv.URL(), "")
		}},
		{"runs/" + id, `document.querySelector('#run-summary .badge')?.textContent === 'queued'`,
			`document.querySelector('#run-summary .badge')?.textContent === 'running'`, `form[data-action="approval"] input`,
			`rm -rf dis`, func(t *testing.T) {
				if _, err := ctl.Observe(bg, id, map[string]any{"status": "running"}); err != nil {
					t.Fatal(err)
				}
			}},
	} {
		t.Run(c.view, func(t *testing.T) {
			do(t, ctx, "open "+c.view, chromedp.Navigate(srv.URL()+"/__admin/ui/#/"+c.view), chromedp.WaitVisible(css(c.field)))
			until(t, ctx, c.ready, c.view+" shows the emulator's answer")
			eval[bool](t, ctx, fmt.Sprintf(`(window.typed = document.querySelector(%q)).focus(), true`, c.field))
			if c.typed != "" {
				// The field emptied, then typed into as a user would, the
				// caret put after its second character.
				eval[bool](t, ctx, `window.typed.value = '', true`)
				do(t, ctx, "type", chromedp.SendKeys(css(c.field), c.typed))
				eval[bool](t, ctx, `window.typed.setSelectionRange(2, 2), true`)
			}
			eval[bool](t, ctx, `sessionStorage.setItem('hermes-console.admin-key', 'wrong'), true`)
			c.meet401(t)
			until(t, ctx, `document.querySelector('#key-dialog').open`, "a 401 opens the key dialog")
			eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('#key-input').value = %q, true`, key))
			do(t, ctx, "save the key", chromedp.Click(css(`#key-save`)))
			until(t, ctx, `!document.querySelector('#key-dialog').open`, "the dialog closes")
			after := c.ready
			if c.after != "" {
				after = c.after
			}
			until(t, ctx, after, c.view+" shows the emulator's answer after the key is saved")
			// The dialog's close event, which refreshes and gives the keyboard
			// back, comes after the dialog is closed (a task of its own): a
			// view whose answer reads the same before and after (the clock)
			// would otherwise be looked at before it ran.
			until(t, ctx, `document.activeElement === window.typed || !window.typed.isConnected`, "the keyboard goes back to "+c.field)
			if c.typed != "" {
				until(t, ctx, `window.typed.selectionStart === 2 || !window.typed.isConnected`, "the caret goes back after the second character of "+c.field)
			}
			if !eval[bool](t, ctx, `window.typed.isConnected`) {
				t.Fatalf("the field %s was drawn again: %q typed in it is gone", c.field, c.typed)
			}
			if !eval[bool](t, ctx, `document.activeElement === window.typed`) {
				t.Errorf("the focus is on %s, want it back on %s", eval[string](t, ctx, `document.activeElement.outerHTML.slice(0, 120)`), c.field)
			}
			if c.typed == "" {
				return
			}
			if got := eval[string](t, ctx, `window.typed.value`); got != c.typed {
				t.Errorf("the field holds %q, want %q as typed", got, c.typed)
			}
			if got := eval[float64](t, ctx, `window.typed.selectionStart`); got != 2 {
				t.Errorf("the caret is at %v, want it at 2", got)
			}
		})
	}
}

// pickNamespace picks namespace ns in the header's box, as a user who
// typed it and left the box (the focus stays where it was).
func pickNamespace(t *testing.T, ctx context.Context, ns string) {
	t.Helper()
	eval[bool](t, ctx, fmt.Sprintf(`(i => (i.value = %q, i.dispatchEvent(new Event('change')), true))(document.querySelector('#ns'))`, ns))
}

// TestBrowserNamespaceKeepsTyping: picking another namespace shows the view
// in it in place, so what the user typed in its forms stays: the fault rule
// and the clock time (their views show every namespace's), the journal
// filter, the branch to create, the scenario set to load in the namespace
// just picked. The views were drawn anew, their forms emptied.
func TestBrowserNamespaceKeepsTyping(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	submitRun(t, srv.URL(), "")
	ctx := browser(t)
	for _, c := range []struct {
		view  string // the route
		field string // the field the user types in
		typed string // what is typed there
		shown string // a condition: the view shows namespace t1
	}{
		{"faults", `form[data-action="add-fault"] textarea`, `{"namespace":"t1","status":503}`,
			`document.querySelector('form[data-action="add-fault"] pre.req').textContent.includes('namespace=t1')`},
		{"clock", `form[data-action="set"] input`, `17000000`,
			`document.querySelector('form[data-action="set"] pre.req').textContent.includes('namespace=t1')`},
		{"journal", `#main input[placeholder="RunCreate"]`, `RunG`,
			`document.querySelector('#journal-body p.empty')?.textContent.startsWith('No requests journaled') === true`},
		{"timeline", `form[data-action="branch"] input`, `try-`,
			`document.querySelector('form[data-action="branch"] pre.req').textContent.includes('namespace=t1')`},
		{"scenarios", `form[data-action="put-scenarios"] textarea`, `{"scenarios": [`,
			`document.querySelector('#scenarios-body').textContent.includes('No scenarios in namespace t1')`},
	} {
		t.Run(c.view, func(t *testing.T) {
			do(t, ctx, "open "+c.view, chromedp.Navigate(srv.URL()+"/__admin/ui/#/"+c.view), chromedp.WaitVisible(css(c.field)))
			pickNamespace(t, ctx, "default")
			time.Sleep(200 * time.Millisecond) // the view's first answers
			eval[bool](t, ctx, fmt.Sprintf(`(window.typed = document.querySelector(%q)).value = '', true`, c.field))
			do(t, ctx, "type", chromedp.SendKeys(css(c.field), c.typed))
			pickNamespace(t, ctx, "t1")
			until(t, ctx, c.shown, c.view+" shows namespace t1")
			if !eval[bool](t, ctx, `window.typed.isConnected`) {
				t.Fatalf("the field %s was drawn again: %q typed in it is gone", c.field, c.typed)
			}
			if got := eval[string](t, ctx, `window.typed.value`); got != c.typed {
				t.Errorf("the field holds %q, want %q as typed", got, c.typed)
			}
		})
	}
}

//go:build browser

package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// sampleSet is the set the load form offers when the namespace has none
// (console/static/history.js), as PUT sends it.
const sampleSet = `{"scenarios":[{"name":"quick","steps":[{"after":"100ms","observe":{"status":"running"}},` +
	`{"after":"400ms","observe":{"status":"completed","output":"Done."}}]}]}`

// admin sends one control request past the browser, with the admin key, and
// returns the answer's body; a status other than 200 fails the test.
func admin(t *testing.T, base, method, path, body string) string {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("X-Mockingbird-Admin-Key", key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	return string(b)
}

// due renders an epoch-ms due time as the run page shows it.
func due(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000Z") }

// testScenarios loads the offered set from the Scenarios view, watches a run
// it drives move by itself on the run page when another client advances the
// frozen clock, and removes the set again.
func testScenarios(t *testing.T, ctx context.Context, srv *emulator.Server) {
	do(t, ctx, "open the scenarios", chromedp.Navigate(srv.URL()+"/__admin/ui/#/scenarios"))
	waitText(t, ctx, "#scenarios-body", "No scenarios in namespace default")
	load := `form[data-action="put-scenarios"]`
	waitText(t, ctx, load+" pre.req", `"name":"quick"`)
	if got, want := text(t, ctx, load+" pre.req"), "PUT /__admin/hermes/scenarios?namespace=default\n"+sampleSet; got != want {
		t.Errorf("the Load card shows %q, want %q", got, want)
	}
	do(t, ctx, "load the set", submit("put-scenarios"))
	waitText(t, ctx, load+" output", `200 {"scenarios":1}`)
	waitText(t, ctx, "#scenarios-body", "quickevery run2default: faildefault: cancelkeep")
	if got := admin(t, srv.URL(), "GET", "/__admin/hermes/scenarios", ""); got != sampleSet {
		t.Errorf("GET /__admin/hermes/scenarios = %s, want %s", got, sampleSet)
	}
	shot(t, ctx, "scenarios")

	// A run admitted now is driven by the set; its page follows it as the
	// clock moves, with no click in the console.
	st, err := clock(srv.URL())
	if err != nil || !st.Frozen {
		t.Fatalf("clock: %+v, %v; want frozen", st, err)
	}
	now := int64(st.Now)
	id := submitRun(t, srv.URL(), "")
	do(t, ctx, "open the run", chromedp.Navigate(srv.URL()+"/__admin/ui/#/runs/"+id))
	waitText(t, ctx, "#run-summary", "queued")
	waitText(t, ctx, "#run-summary", "quick: next steps[0], due "+due(now+100))
	admin(t, srv.URL(), "POST", "/__admin/clock", `{"advance":200}`)
	waitText(t, ctx, "#run-summary", "Statusrunning")
	waitText(t, ctx, "#run-summary", "quick: next steps[1], due "+due(now+500))
	admin(t, srv.URL(), "POST", "/__admin/clock", `{"advance":400}`)
	waitText(t, ctx, "#run-summary", "Statuscompleted")
	waitText(t, ctx, "#run-summary", "Scenarionone")
	waitText(t, ctx, fmt.Sprintf(`pre[data-frames=%q]`, id), `"output":"Done."`)

	// Remove the set (confirmed in the dialog).
	do(t, ctx, "open the scenarios", chromedp.Navigate(srv.URL()+"/__admin/ui/#/scenarios"))
	waitText(t, ctx, "#scenarios-body", "quick")
	do(t, ctx, "remove the set", submit("delete-scenarios"),
		chromedp.WaitVisible(css(`#confirm-yes`)), chromedp.Click(css(`#confirm-yes`)))
	waitText(t, ctx, "#scenarios-body", "No scenarios in namespace default")
	if got := admin(t, srv.URL(), "GET", "/__admin/hermes/scenarios", ""); got != `{"scenarios":[]}` {
		t.Errorf("after Remove, GET /__admin/hermes/scenarios = %s, want {\"scenarios\":[]}", got)
	}
}

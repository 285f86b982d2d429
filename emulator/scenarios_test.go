package emulator_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

// Scenario acceptance (docs/scenarios.md): runs move by themselves, and every
// step is exactly the control it names.

// happyYAML: running at +100, tool.started at +150, tool.completed and a delta
// at +900, completed at +1000 (ms after admission).
const happyYAML = `
scenarios:
  - name: happy
    steps:
      - {after: 100ms, observe: {status: running}}
      - {after: 50ms, events: [{event: tool.started, tool: terminal, preview: "ls -la"}]}
      - after: 750ms
        events:
          - {event: tool.completed, tool: terminal, duration: 0.75}
          - {event: message.delta, delta: "Your project has 12 files."}
      - {after: 100ms, observe: {status: completed, output: "Your project has 12 files.", usage: {input_tokens: 4, output_tokens: 6, total_tokens: 10}}}
`

// manualHappy is happyYAML as manual controls: (ms after admission, route, body).
var manualHappy = []struct {
	at          int
	route, body string
}{
	{100, "observe", `{"status":"running"}`},
	{150, "events", `{"events":[{"event":"tool.started","tool":"terminal","preview":"ls -la"}]}`},
	{900, "events", `{"events":[{"event":"tool.completed","tool":"terminal","duration":0.75},{"event":"message.delta","delta":"Your project has 12 files."}]}`},
	{1000, "observe", `{"status":"completed","output":"Your project has 12 files.","usage":{"input_tokens":4,"output_tokens":6,"total_tokens":10}}`},
}

func mustSet(t testing.TB, yaml string) *scenarios.Set {
	t.Helper()
	set, err := scenarios.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// finished returns a finished run's record and its whole SSE body.
func (x *h) finished(id string) (record, events string) {
	x.t.Helper()
	rec := x.get("/v1/runs/" + id)
	ev := x.get("/v1/runs/" + id + "/events")
	if rec.Status != 200 || ev.Status != 200 {
		x.t.Fatalf("record %d %s, events %d %s", rec.Status, rec.Body, ev.Status, ev.Body)
	}
	return string(rec.Body), string(ev.Body)
}

// scenarioRun: a frozen clock, one run, one advance past the scenario's end.
func scenarioRun(t *testing.T) (record, events string) {
	x := newH(t, emulator.Options{Scenarios: mustSet(t, happyYAML)})
	x.freeze()
	id := x.start()
	x.advance("1000")
	return x.finished(id)
}

func TestScenarioIsTheManualControls(t *testing.T) {
	rec, ev := scenarioRun(t)
	// The same run driven by hand, the clock set to each step's due time.
	m := newH(t, emulator.Options{})
	m.freeze()
	id := m.start()
	for _, s := range manualHappy {
		m.clock(`{"set":` + itoa(1700000000000+s.at) + `}`)
		m.want(m.post("/__admin/hermes/runs/"+id+"/"+s.route, s.body), 200, "")
	}
	mrec, mev := m.finished(id)
	if rec != mrec || ev != mev {
		t.Fatalf("scenario:\n%s\n%s\nmanual controls:\n%s\n%s", rec, ev, mrec, mev)
	}
	if !strings.Contains(rec, `"status":"completed"`) || !strings.HasSuffix(ev, sseClosed) || strings.Count(ev, "data: ") != 4 {
		t.Fatalf("record %s\nevents %s", rec, ev)
	}
	// Deterministic: the same bytes on every execution.
	for i := 0; i < 2; i++ {
		if r2, e2 := scenarioRun(t); r2 != rec || e2 != ev {
			t.Fatalf("run %d differs:\n%s\n%s", i, r2, e2)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestScenarioPlainClient: a client that knows nothing of /__admin submits,
// streams and polls to completed on the running clock.
func TestScenarioPlainClient(t *testing.T) {
	x := newH(t, emulator.Options{Scenarios: mustSet(t, strings.ReplaceAll(happyYAML, "750ms", "150ms"))})
	resp, err := http.Post(x.srv.URL()+"/v1/runs", "application/json", strings.NewReader(`{"input":"list my files"}`))
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		RunID string `json:"run_id"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if resp.StatusCode != 202 || created.RunID == "" {
		t.Fatalf("submit: %d", resp.StatusCode)
	}
	var stream []byte
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r, err := http.Get(x.srv.URL() + "/v1/runs/" + created.RunID + "/events")
		if err == nil {
			stream, _ = io.ReadAll(r.Body)
			r.Body.Close()
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	var status string
	for status != "completed" {
		if time.Now().After(deadline) {
			t.Fatalf("still %q after 5 s", status)
		}
		time.Sleep(20 * time.Millisecond)
		r, err := http.Get(x.srv.URL() + "/v1/runs/" + created.RunID)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct{ Status string }
		_ = json.NewDecoder(r.Body).Decode(&rec)
		r.Body.Close()
		status = rec.Status
	}
	wg.Wait()
	var names []string
	for _, line := range strings.Split(string(stream), "\n") {
		var ev struct{ Event string }
		if rest, ok := strings.CutPrefix(line, "data: "); ok && json.Unmarshal([]byte(rest), &ev) == nil {
			names = append(names, ev.Event)
		}
	}
	if strings.Join(names, " ") != "tool.started tool.completed message.delta run.completed" || !strings.HasSuffix(string(stream), sseClosed) {
		t.Fatalf("stream %v:\n%s", names, stream)
	}
	if m := x.get("/__admin/metrics"); !strings.Contains(string(m.Body), `"scenarioSteps":{"happy":4}`) {
		t.Fatalf("metrics %s", m.Body)
	}
}

const approvalYAML = `
scenarios:
  - name: deploy
    match: {input: "(?i)deploy"}
    steps:
      - {after: 100ms, observe: {status: running}}
      - {after: 0s, approval: {command: "make deploy"}}
      - {after: 1s, observe: {status: completed, output: "Deployed."}}
    if_denied:
      - {after: 10ms, observe: {status: failed, error: "not allowed"}}
    on_stop:
      - {after: 250ms, observe: {status: cancelled}}
`

func (x *h) startInput(input string) string {
	x.t.Helper()
	r := x.post("/v1/runs", `{"input":"`+input+`"}`)
	if r.Status != 202 {
		x.t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	return r.field(x.t, "run_id")
}

func (x *h) status(id string) string {
	x.t.Helper()
	return x.get("/v1/runs/"+id).field(x.t, "status")
}

func TestScenarioApprovalAndStop(t *testing.T) {
	x := newH(t, emulator.Options{Scenarios: mustSet(t, approvalYAML)})
	x.freeze()
	approve, deny, stop, other := x.startInput("deploy it"), x.startInput("Deploy now"), x.startInput("deploy later"), x.startInput("hello")
	x.advance("100")
	for _, id := range []string{approve, deny, stop} {
		if s := x.status(id); s != "waiting_for_approval" {
			t.Fatalf("%s: %s", id, s)
		}
	}
	if s := x.status(other); s != "queued" {
		t.Fatalf("unmatched run moved: %s", s)
	}
	// The run view shows the position (null due while waiting; null without a scenario).
	if v := x.get("/__admin/hermes/runs/" + approve); !strings.HasSuffix(string(v.Body), `"scenario":{"name":"deploy","step":"steps[2]","due":null}}`) {
		t.Fatalf("view %s", v.Body)
	}
	if v := x.get("/__admin/hermes/runs/" + other); !strings.HasSuffix(string(v.Body), `"scenario":null}`) {
		t.Fatalf("view %s", v.Body)
	}
	// Waiting: nothing moves until the answer.
	x.advance("5000")
	x.want(x.post("/v1/runs/"+approve+"/approval", `{"choice":"approve"}`), 200, "")
	x.want(x.post("/v1/runs/"+deny+"/approval", `{"choice":"deny"}`), 200, "")
	x.want(x.post("/v1/runs/"+stop+"/stop", ""), 200, `{"run_id":"`+stop+`","status":"stopping"}`)
	x.advance("10") // if_denied is due 10 ms after the answer
	if s := x.status(deny); s != "failed" {
		t.Fatalf("denied: %s", s)
	}
	if r := x.get("/v1/runs/" + deny); !strings.Contains(string(r.Body), `"error":"not allowed"`) {
		t.Fatalf("denied: %s", r.Body)
	}
	if s := x.status(approve); s != "running" {
		t.Fatalf("approved, before its delay: %s", s)
	}
	x.advance("240") // on_stop is due 250 ms after the stop
	if s := x.status(stop); s != "cancelled" {
		t.Fatalf("stopped: %s", s)
	}
	x.advance("750") // 1 s after the answer
	rec := x.get("/v1/runs/" + approve)
	if !strings.Contains(string(rec.Body), `"status":"completed"`) || !strings.Contains(string(rec.Body), `"updated_at":1700000006.1`) {
		t.Fatalf("approved: %s", rec.Body)
	}
}

func TestScenarioManualFinishWarnsOnce(t *testing.T) {
	var logs logBuffer
	x := newH(t, emulator.Options{Scenarios: mustSet(t, happyYAML), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	x.freeze()
	id := x.start()
	x.advance("100")
	x.want(x.observe(id, `{"status":"completed","output":"by hand"}`), 200, "")
	x.advance("5000")
	rec := x.get("/v1/runs/" + id)
	if !strings.Contains(string(rec.Body), `"output":"by hand"`) {
		t.Fatalf("record %s", rec.Body)
	}
	want := `level=WARN msg="scenario step failed; the run's scenario ends" namespace=default run=` + id +
		` scenario=happy step=steps[1] error="events: terminal runs cannot be changed"`
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), want) {
		t.Fatalf("%d WARN lines:\n%s\nwant one like\n%s", n, logs.String(), want)
	}
}

func TestScenarioCheckoutResumes(t *testing.T) {
	x := newH(t, emulator.Options{Scenarios: mustSet(t, happyYAML)})
	x.freeze()
	id := x.start()
	x.advance("150") // running, tool.started
	if v := x.get("/__admin/hermes/runs/" + id); !strings.HasSuffix(string(v.Body), `"scenario":{"name":"happy","step":"steps[2]","due":1700000000900}}`) {
		t.Fatalf("view %s", v.Body)
	}
	cp := x.post("/__admin/checkpoints", "").field(t, "id")
	x.advance("2000")
	done := string(x.get("/v1/runs/" + id).Body)
	x.want(x.post("/__admin/branches/main/checkout", `{"checkpoint":"`+cp+`"}`), 200, "")
	if s := x.status(id); s != "running" {
		t.Fatalf("after checkout: %s", s)
	}
	x.advance("2000")
	if again := string(x.get("/v1/runs/" + id).Body); again != done {
		t.Fatalf("resumed from the checkpoint:\n%s\nfirst time:\n%s", again, done)
	}
	// Reset clears positions; the set stays. A logical restart drops them.
	x.want(x.post("/__admin/reset", ""), 200, "")
	id = x.start("Idempotency-Key", "k")
	x.want(x.restart("alive"), 200, "")
	x.advance("5000") // observe would apply to the hydrated run: nothing fires
	if s := x.status(id); s != "queued" {
		t.Fatalf("after restart: %s", s)
	}
	if r := x.get("/__admin/hermes/scenarios"); !strings.HasPrefix(string(r.Body), `{"scenarios":[{"name":"happy"`) {
		t.Fatalf("set after reset: %s", r.Body)
	}
}

func TestScenarioControlPlane(t *testing.T) {
	x := newH(t, emulator.Options{Scenarios: mustSet(t, happyYAML)})
	x.freeze()
	x.want(x.do("PUT", "/__admin/hermes/scenarios", `{"scenarios":[{"name":"x","steps":[{"after":0,"observe":{"status":"running","output":"no"}}]}]}`),
		400, hermesErr("scenarios[0].steps[0].observe: result fields require completed status", ""))
	x.want(x.do("PUT", "/__admin/hermes/scenarios", `[`), 400, "")
	before := x.start() // matched by the default set
	x.want(x.do("PUT", "/__admin/hermes/scenarios", `{"scenarios":[{"name":"fail","steps":[{"after":"1s","observe":{"status":"failed"}}]}]}`),
		200, `{"scenarios":1}`)
	x.want(x.get("/__admin/hermes/scenarios"), 200, `{"scenarios":[{"name":"fail","steps":[{"after":"1s","observe":{"status":"failed"}}]}]}`)
	after := x.start()
	x.ns = "other"
	x.want(x.get("/__admin/hermes/scenarios"), 200, string(mustSet(t, happyYAML).JSON()))
	x.want(x.do("DELETE", "/__admin/hermes/scenarios", ""), 200, `{"status":"ok"}`)
	x.want(x.get("/__admin/hermes/scenarios"), 200, `{"scenarios":[]}`)
	untouched := x.start()
	x.advance("1000")
	if s := x.status(untouched); s != "queued" {
		t.Fatalf("no scenarios after DELETE, yet %s", s)
	}
	x.ns = ""
	if a, b := x.status(before), x.status(after); a != "completed" || b != "failed" {
		t.Fatalf("admitted before the PUT: %s (want completed); after: %s (want failed)", a, b)
	}
}

func TestScenarioSteers(t *testing.T) {
	for _, c := range []struct{ steers, want string }{
		{"deliver", `"last_event":"run.completed","output":"ok","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}}`},
		{"keep", `"total_tokens":0},"pending_steer":"also run the tests"}`},
	} {
		x := newH(t, emulator.Options{Scenarios: mustSet(t, `{"scenarios":[{"name":"s","steers":"`+c.steers+`","steps":[
			{"after":100,"observe":{"status":"running"}},{"after":1000,"observe":{"status":"completed","output":"ok"}}]}]}`)})
		x.freeze()
		id := x.start()
		x.advance("100")
		x.want(x.post("/v1/runs/"+id+"/steer", `{"input":"also run the tests"}`), 200, "")
		x.advance("1000")
		if r := x.get("/v1/runs/" + id); !strings.HasSuffix(string(r.Body), c.want) {
			t.Fatalf("steers %s: %s\nwant the end %s", c.steers, r.Body, c.want)
		}
	}
}

// x-mockingbird-at on a mutating request moves main back, scenario positions
// with it (scenarios §5).
func TestScenarioAtHeader(t *testing.T) {
	x := newH(t, emulator.Options{Scenarios: mustSet(t, happyYAML)})
	x.freeze()
	id := x.start()
	x.advance("150")
	cp := x.post("/__admin/checkpoints", "").field(t, "id")
	x.advance("2000")
	done := string(x.get("/v1/runs/" + id).Body)
	x.want(x.post("/v1/runs", `{"input":"second"}`, "x-mockingbird-at", cp), 202, "")
	if s := x.status(id); s != "running" {
		t.Fatalf("after x-mockingbird-at: %s", s)
	}
	x.advance("2000")
	if again := string(x.get("/v1/runs/" + id).Body); again != done {
		t.Fatalf("resumed:\n%s\nfirst time:\n%s", again, done)
	}
}

// A real restart drops every position (scenarios §5): positions are
// never written to --db, and the runs follow the restart rules instead.
func TestScenarioRealRestartDropsPositions(t *testing.T) {
	db := filepath.Join(t.TempDir(), "runs.db")
	opts := emulator.Options{Scenarios: mustSet(t, happyYAML)}
	x := durableOpen(t, db, opts)
	x.freeze()
	id := x.start("Idempotency-Key", "k")
	x.advance("100") // running
	durableStop(t, x)
	y := durableOpen(t, db, opts)
	y.advance("5000")
	r := y.get("/v1/runs/" + id)
	if !strings.Contains(string(r.Body), `"status":"interrupted"`) {
		t.Fatalf("after a real restart: %s", r.Body)
	}
	if v := y.get("/__admin/hermes/runs/" + id); !strings.HasSuffix(string(v.Body), `"scenario":null}`) {
		t.Fatalf("view %s", v.Body)
	}
}

// match: input in the user message (a message list's last content, parts
// joined), model equal to the record's, session_id searched in the record's.
func TestScenarioMatchFields(t *testing.T) {
	x := newH(t, emulator.Options{Scenarios: mustSet(t, `
scenarios:
  - {name: model, match: {model: m1}, steps: [{after: 0, observe: {status: failed}}]}
  - {name: session, match: {session_id: "^ci-"}, steps: [{after: 0, observe: {status: cancelled}}]}
  - {name: parts, match: {input: "b\nc"}, steps: [{after: 0, observe: {status: completed}}]}
`)})
	x.freeze()
	start := func(body string) string {
		r := x.post("/v1/runs", body)
		if r.Status != 202 {
			t.Fatalf("%s: %d %s", body, r.Status, r.Body)
		}
		return r.field(t, "run_id")
	}
	runs := map[string]string{
		start(`{"input":"x","model":"m1"}`):            "failed",
		start(`{"input":"x","model":"m10"}`):           "queued",
		start(`{"input":"x","session_id":"ci-7"}`):     "cancelled",
		start(`{"input":"x","session_id":"run-ci-7"}`): "queued",
		start(`{"input":[{"role":"user","content":[{"type":"text","text":"a b"},{"type":"input_text","text":"c"}]}]}`): "completed",
		start(`{"input":[{"role":"user","content":"b c"}]}`):                                                           "queued",
	}
	x.clock(`{"freeze":true}`) // a frozen clock moves only by set, advance or reset: nothing fires
	for id := range runs {
		if s := x.status(id); s != "queued" {
			t.Fatalf("%s: %s before the clock moved", id, s)
		}
	}
	x.advance("0")
	for id, want := range runs {
		if s := x.status(id); s != want {
			t.Errorf("%s: %s, want %s", id, s, want)
		}
	}
}

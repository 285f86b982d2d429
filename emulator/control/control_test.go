package control_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/control"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// start submits {"input":"synthetic"} in namespace ns (with header pairs) and
// returns the run id.
func start(t *testing.T, base, ns string, hdr ...string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/runs", strings.NewReader(`{"input":"synthetic"}`))
	if ns != "" {
		req.Header.Set("X-Mockingbird-Namespace", ns)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		RunID string `json:"run_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 202 {
		t.Fatalf("start: %d %v", resp.StatusCode, err)
	}
	return out.RunID
}

// send is a plain vendor request; it returns the status and body.
func send(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// wantErr checks that err is an *Error with exactly want's fields (Body aside).
func wantErr(t *testing.T, err error, want control.Error) {
	t.Helper()
	var e *control.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *control.Error", err)
	}
	got := *e
	got.Body = nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("err = %+v\nwant  %+v", got, want)
	}
}

func TestRunControls(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	ctx := context.Background()
	ctl := control.New(srv.URL() + "/")
	id := start(t, srv.URL(), "")

	run, err := ctl.Observe(ctx, id, map[string]any{"status": "running"})
	if err != nil || run.RunId != id || run.Status != "running" || run.LastEvent != nil { // running keeps last_event (runs-api §4.3)
		t.Fatalf("Observe = %+v, %v", run, err)
	}
	ev, err := ctl.Events(ctx, id,
		map[string]any{"event": "tool.started", "tool": "terminal", "preview": "ls -la"},
		map[string]any{"event": "message.delta", "delta": "Your project has"})
	if err != nil || ev != (control.EventsResult{RunID: id, Emitted: 2, Buffered: 2}) {
		t.Fatalf("Events = %+v, %v", ev, err)
	}
	if code, body := send(t, "POST", srv.URL()+"/v1/runs/"+id+"/steer", `{"input":"also check tests"}`); code != 200 {
		t.Fatalf("steer: %d %s", code, body)
	}
	if n, err := ctl.Deliver(ctx, id); err != nil || n != 1 {
		t.Fatalf("Deliver = %d, %v; want 1", n, err)
	}
	run, err = ctl.Observe(ctx, id, json.RawMessage(`{"status":"completed","output":"done","usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}`))
	if err != nil || run.Status != "completed" || *run.Output != "done" || run.Usage.TotalTokens != 3 || run.UpdatedAt != 1700000000.0 {
		t.Fatalf("Observe completed = %+v, %v", run, err)
	}

	// Errors carry the status and the Hermes envelope's message and code.
	_, err = ctl.Observe(ctx, id, map[string]any{"status": "running"})
	wantErr(t, err, control.Error{Method: "POST", Path: "/__admin/hermes/runs/" + id + "/observe", Status: 409,
		Type: "invalid_request_error", Message: "observe: terminal runs cannot be changed", Code: "mock_terminal_run"})
	if want := "control: POST /__admin/hermes/runs/" + id + "/observe: 409 observe: terminal runs cannot be changed (mock_terminal_run)"; err.Error() != want {
		t.Fatalf("Error() = %q\nwant       %q", err.Error(), want)
	}
	_, err = ctl.Observe(ctx, "missing", map[string]any{"status": "running"})
	wantErr(t, err, control.Error{Method: "POST", Path: "/__admin/hermes/runs/missing/observe", Status: 404,
		Type: "invalid_request_error", Message: "Run not found: missing", Code: "run_not_found"})
	_, err = ctl.Observe(ctx, id, map[string]any{"status": "done"})
	wantErr(t, err, control.Error{Method: "POST", Path: "/__admin/hermes/runs/" + id + "/observe", Status: 400,
		Type: "invalid_request_error", Message: "observe: expected a supported status"})
	_, err = ctl.Events(ctx, id)
	wantErr(t, err, control.Error{Method: "POST", Path: "/__admin/hermes/runs/" + id + "/events", Status: 400,
		Type: "invalid_request_error", Message: `events: expected {"events":[...]} with at least one event`})
	_, err = ctl.Observe(ctx, id, func() {}) // cannot be encoded
	if err == nil || !strings.Contains(err.Error(), "encode body") {
		t.Fatalf("unencodable body: %v", err)
	}
}

func TestGatewayControls(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	ctx := context.Background()
	ctl := control.New(srv.URL(), control.Namespace("a"))
	keyed := start(t, srv.URL(), "a", "Idempotency-Key", "k1")
	start(t, srv.URL(), "a")

	// Drain: RunCreate answers 503 in that namespace only.
	if err := ctl.Drain(ctx, true); err != nil {
		t.Fatal(err)
	}
	if d, err := ctl.Draining(ctx); err != nil || !d {
		t.Fatalf("Draining = %v, %v", d, err)
	}
	if d, err := ctl.In("b").Draining(ctx); err != nil || d {
		t.Fatalf("b Draining = %v, %v", d, err)
	}
	req, _ := http.NewRequest("POST", srv.URL()+"/ns/a/v1/runs", strings.NewReader(`{"input":"x"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 503 {
		t.Fatalf("create while draining: %v %v", resp, err)
	}
	resp.Body.Close()
	if err := ctl.Drain(ctx, false); err != nil {
		t.Fatal(err)
	}

	// Restart stale: the keyed unfinished run is interrupted, the keyless one gone.
	rs, err := ctl.Restart(ctx, control.Stale)
	if err != nil || rs != (control.RestartResult{Owner: control.Stale, Retained: 1, Discarded: 1}) {
		t.Fatalf("Restart = %+v, %v", rs, err)
	}
	if code, body := send(t, "GET", srv.URL()+"/ns/a/v1/runs/"+keyed, ""); code != 200 || !strings.Contains(body, `"status":"interrupted"`) {
		t.Fatalf("after restart: %d %s", code, body)
	}
	_, err = ctl.Restart(ctx, "unknown")
	wantErr(t, err, control.Error{Method: "POST", Path: "/__admin/hermes/restart", Status: 400,
		Type: "invalid_request_error", Message: "restart: owner must be explicitly stale or alive"})

	// Scope: the keyed run belongs to the default scope.
	if err := ctl.Scope(ctx, "p", "i"); err != nil {
		t.Fatal(err)
	}
	if code, _ := send(t, "GET", srv.URL()+"/ns/a/v1/runs/"+keyed, ""); code != 404 {
		t.Fatalf("other scope: %d, want 404", code)
	}
	err = ctl.Scope(ctx, "", "i")
	wantErr(t, err, control.Error{Method: "POST", Path: "/__admin/hermes/scope", Status: 400,
		Type: "invalid_request_error", Message: "scope: expected nonempty synthetic profile and identity without NUL"})

	// Sweep and reset.
	if n, err := ctl.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("Sweep = %d, %v", n, err)
	}
	if ns, err := ctl.Reset(ctx, false); err != nil || !reflect.DeepEqual(ns, []string{"a"}) {
		t.Fatalf("Reset = %v, %v", ns, err)
	}
	// Reading b's drain flag did not create b (hardening H3).
	if ns, err := ctl.Reset(ctx, true); err != nil || !reflect.DeepEqual(ns, []string{"a"}) {
		t.Fatalf("Reset all = %v, %v", ns, err)
	}
	// An invalid namespace is refused with the admin envelope.
	_, err = ctl.In("bad name").Sweep(ctx)
	wantErr(t, err, control.Error{Method: "POST", Path: "/__admin/hermes/sweep", Status: 400,
		Type: "mockingbird_admin", Message: "x-mockingbird-namespace must match /^[A-Za-z0-9_.-]{1,64}$/"})
}

func TestClock(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{})
	ctx := context.Background()
	clk := control.New(srv.URL()).Clock()
	tests := []struct {
		name string
		do   func() (control.ClockState, error)
		now  float64
	}{
		{"FreezeAt", func() (control.ClockState, error) { return clk.FreezeAt(ctx, 1700000000000) }, 1700000000000},
		{"Advance", func() (control.ClockState, error) { return clk.Advance(ctx, 90*time.Second+500*time.Microsecond) }, 1700000090000.5},
		{"Advance negative", func() (control.ClockState, error) { return clk.Advance(ctx, -500*time.Microsecond) }, 1700000090000},
		{"Set", func() (control.ClockState, error) { return clk.Set(ctx, 1600000000000) }, 1600000000000},
		{"Get", func() (control.ClockState, error) { return clk.Get(ctx) }, 1600000000000},
		{"Freeze", func() (control.ClockState, error) { return clk.Freeze(ctx) }, 1600000000000},
	}
	for _, tt := range tests {
		st, err := tt.do()
		if err != nil || st.Now != tt.now || !st.Frozen {
			t.Fatalf("%s = %+v, %v; want now %v, frozen", tt.name, st, err, tt.now)
		}
	}
	if got := (control.ClockState{Now: 1700000000000.5}).Time(); !got.Equal(time.UnixMicro(1700000000000500)) {
		t.Fatalf("Time() = %v", got)
	}
	st, err := clk.Unfreeze(ctx)
	if err != nil || st.Frozen || st.Now < 1600000000000 || st.Now > 1600000060000 {
		t.Fatalf("Unfreeze = %+v, %v", st, err)
	}
	st, err = clk.Reset(ctx)
	if err != nil || st.Frozen || st.OffsetMs != 0 {
		t.Fatalf("Reset = %+v, %v", st, err)
	}
}

func TestFaults(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{})
	ctx := context.Background()
	ctl := control.New(srv.URL(), control.Namespace("a"))
	one := 1
	f, err := ctl.AddFault(ctx, control.Fault{OperationID: "RunGet", Status: 500, Count: &one, Headers: map[string]string{"Retry-After": "2"}})
	want := control.Fault{ID: "fault_1", Namespace: "a", OperationID: "RunGet", Status: 500, Count: &one, Headers: map[string]string{"Retry-After": "2"}}
	if err != nil || !reflect.DeepEqual(f, want) {
		t.Fatalf("AddFault = %+v, %v", f, err)
	}
	f, err = ctl.AddFault(ctx, map[string]any{"preset": "hermes_throttled", "id": "t"})
	if err != nil || f.ID != "t" || f.Preset != "hermes_throttled" || f.Status != 429 || f.Namespace != "a" {
		t.Fatalf("AddFault preset = %+v, %v", f, err)
	}
	rules, err := ctl.ApplyPreset(ctx, "hermes_submit_accepted_drop", map[string]any{"namespace": "*"})
	if err != nil || len(rules) != 1 || rules[0].ID != "hermes_submit_accepted_drop" || rules[0].Namespace != "*" || rules[0].Effect != "hermes.accepted_drop" {
		t.Fatalf("ApplyPreset = %+v, %v", rules, err)
	}
	// The GET rule fires once in namespace a; the list shows the counters.
	if code, body := send(t, "GET", srv.URL()+"/ns/a/v1/runs/x", ""); code != 500 || body != `{"detail":"Injected by Mockingbird"}` {
		t.Fatalf("faulted poll: %d %s", code, body)
	}
	list, err := ctl.Faults(ctx)
	if err != nil || len(list) != 3 || list[0].ID != "fault_1" || list[0].Hits != 1 || list[0].Remaining == nil || *list[0].Remaining != 0 || list[2].Remaining == nil || *list[2].Remaining != 1 {
		t.Fatalf("Faults = %+v, %v", list, err)
	}
	if err := ctl.DeleteFaults(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	err = ctl.DeleteFaults(ctx, "t")
	wantErr(t, err, control.Error{Method: "DELETE", Path: "/__admin/faults?id=t", Status: 404, Type: "mockingbird_admin", Message: "no fault t"})
	if err := ctl.DeleteFaults(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if list, err := ctl.Faults(ctx); err != nil || len(list) != 0 {
		t.Fatalf("after delete all: %+v, %v", list, err)
	}
	// A nil map or pointer is no overrides, as nil is: it encodes as null,
	// which the route refuses (preset overrides must be an object).
	var none map[string]any
	var noFault *control.Fault
	for _, o := range []any{none, noFault} {
		if rules, err := ctl.ApplyPreset(ctx, "hermes_poll_timeout", o); err != nil || len(rules) != 1 || rules[0].Namespace != "a" {
			t.Fatalf("ApplyPreset(%T nil) = %+v, %v", o, rules, err)
		}
	}
	if err := ctl.DeleteFaults(ctx, ""); err != nil {
		t.Fatal(err)
	}
	_, err = ctl.ApplyPreset(ctx, "nope", nil)
	wantErr(t, err, control.Error{Method: "POST", Path: "/__admin/faults/presets/nope", Status: 404, Type: "mockingbird_admin",
		Message: "no fault preset nope; GET /__admin/faults/presets"})
	_, err = ctl.AddFault(ctx, map[string]any{"operationId": "RunGet"})
	wantErr(t, err, control.Error{Method: "POST", Path: "/__admin/faults", Status: 400, Type: "mockingbird_admin",
		Message: "a fault needs a numeric status, a delayMs/latencyMs, drop: true, an effect, or a preset"})
}

// The admin key: sent by AdminKey, and by Server.Control on its own.
func TestAdminKey(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{AdminKey: "secret"})
	ctx := context.Background()
	_, err := control.New(srv.URL()).Sweep(ctx)
	wantErr(t, err, control.Error{Method: "POST", Path: "/__admin/hermes/sweep", Status: 401, Type: "mockingbird_admin",
		Message: "missing or wrong x-mockingbird-admin-key"})
	if _, err := control.New(srv.URL(), control.AdminKey("secret")).Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Control().Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = srv.Control(control.AdminKey("wrong")).Sweep(ctx) // a later option overrides the server's key
	wantErr(t, err, control.Error{Method: "POST", Path: "/__admin/hermes/sweep", Status: 401, Type: "mockingbird_admin",
		Message: "missing or wrong x-mockingbird-admin-key"})
}

// A body that is not an envelope is kept as the message; a transport error is
// returned as is.
func TestNonEnvelopeErrors(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/__admin/hermes/sweep", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	_, err := control.New(ts.URL).Sweep(context.Background())
	wantErr(t, err, control.Error{Method: "POST", Path: "/__admin/hermes/sweep", Status: 502, Message: "bad gateway"})

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := control.New(ts.URL).Sweep(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// The journal, metrics and timeline wrappers, and In.
func TestJournalAndTimeline(t *testing.T) {
	srv := emulatortest.New(t, emulator.Options{})
	ctx := context.Background()
	ctl := control.New(srv.URL(), control.Namespace("j"))
	for range 3 {
		start(t, srv.URL(), "j")
	}
	send(t, "GET", srv.URL()+"/ns/j/v1/runs/missing", "")
	page, err := ctl.Requests(ctx, control.RequestsQuery{Limit: 3})
	if err != nil || len(page.Requests) != 3 || page.Next == nil || page.Requests[2].Status != 404 {
		t.Fatalf("Requests = %+v, %v", page, err)
	}
	older, err := ctl.Requests(ctx, control.RequestsQuery{Limit: 3, Cursor: *page.Next})
	if err != nil || len(older.Requests) != 1 || older.Next != nil || *older.Requests[0].OperationId != "RunCreate" {
		t.Fatalf("older page = %+v, %v", older, err)
	}
	if p, err := ctl.In("nobody").Requests(ctx, control.RequestsQuery{}); err != nil || len(p.Requests) != 0 {
		t.Fatalf("In(nobody) = %+v, %v", p, err)
	}
	_, err = ctl.Requests(ctx, control.RequestsQuery{Cursor: "x"})
	wantErr(t, err, control.Error{Method: "GET", Path: "/__admin/requests?cursor=x", Status: 400, Type: "mockingbird_admin",
		Message: "cursor: expected the next of a previous page"})
	if m, err := ctl.Metrics(ctx); err != nil || m.Requests != 4 || m.ByOperation["RunCreate 202"] != 3 {
		t.Fatalf("Metrics = %+v, %v", m, err)
	}
	cp, err := ctl.Checkpoint(ctx, "")
	if err != nil || cp == "" {
		t.Fatalf("Checkpoint = %q, %v", cp, err)
	}
	if err := ctl.Checkout(ctx, "main", cp); err != nil {
		t.Fatal(err)
	}
	tl, err := ctl.Timeline(ctx)
	if err != nil || tl.Branches["main"] != cp {
		t.Fatalf("Timeline = %+v, %v", tl, err)
	}
	err = ctl.Checkout(ctx, "main", "cp_nope")
	wantErr(t, err, control.Error{Method: "POST", Path: "/__admin/branches/main/checkout", Status: 409, Type: "mockingbird_admin",
		Message: "no checkpoint cp_nope"})
}

// An argument no request can carry is refused before anything is sent: an
// empty run id, preset, branch or checkpoint, a clock instant that is not a
// finite number. Run("") answered a zero RunView and no error (the request
// reached the run list), Checkout("", cp) "unknown field checkpoint", the
// others "no admin route …" or "request body is not valid JSON".
func TestBadArgumentsSendNothing(t *testing.T) {
	sent := http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		t.Errorf("sent %s %s", r.Method, r.URL)
		return nil, errors.New("sent")
	})}
	ctl := control.New("http://emulator.invalid", control.HTTPClient(&sent))
	ctx := context.Background()
	calls := []struct {
		name string
		err  error
		want string
	}{
		{"Observe", second(ctl.Observe(ctx, "", map[string]any{"status": "running"})), "control: Observe: empty run id"},
		{"Events", second(ctl.Events(ctx, "", map[string]any{"event": "message.delta", "delta": "x"})), "control: Events: empty run id"},
		{"Deliver", second(ctl.Deliver(ctx, "")), "control: Deliver: empty run id"},
		{"Run", second(ctl.Run(ctx, "")), "control: Run: empty run id"},
		{"ApplyPreset", second(ctl.ApplyPreset(ctx, "", nil)), "control: ApplyPreset: empty preset name"},
		{"Checkout branch", ctl.Checkout(ctx, "", "cp_00000001"), "control: Checkout: empty branch"},
		{"Checkout checkpoint", ctl.Checkout(ctx, "main", ""), "control: Checkout: empty checkpoint"},
		{"Clock.Set", second(ctl.Clock().Set(ctx, math.NaN())), "control: clock: NaN is not a number of epoch milliseconds"},
		{"Clock.FreezeAt", second(ctl.Clock().FreezeAt(ctx, math.Inf(1))), "control: clock: +Inf is not a number of epoch milliseconds"},
	}
	for _, c := range calls {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// second is the error of a call that returns a value and an error.
func second[T any](_ T, err error) error { return err }

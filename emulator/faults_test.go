package emulator_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// Acceptance section G (faults, controls.md §6) through the full HTTP stack.

// fltRaw sends one request on a fresh TCP connection (no keep-alive, so the Go
// client never silently retries a request whose connection was dropped, as it
// does for replayable requests on a reused connection) and returns the
// response or the transport error.
func fltRaw(x *h, timeout time.Duration, method, path, body string, hdr ...string) (res, error) {
	x.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, x.srv.URL()+path, rd)
	if err != nil {
		x.t.Fatal(err)
	}
	if x.ns != "" {
		req.Header.Set("X-Mockingbird-Namespace", x.ns)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	c := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		return res{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return res{}, err
	}
	return res{resp.StatusCode, resp.Header, b}, nil
}

// fltDropped asserts that the request got no HTTP response: the client sees a
// connection error (EOF or reset), not a timeout.
func fltDropped(x *h, method, path, body string, hdr ...string) {
	x.t.Helper()
	r, err := fltRaw(x, 10*time.Second, method, path, body, hdr...)
	if err == nil {
		x.t.Fatalf("%s %s: want a dropped connection, got %d %s", method, path, r.Status, r.Body)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		x.t.Fatalf("%s %s: want a dropped connection, got a timeout: %v", method, path, err)
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "reset") &&
		!strings.Contains(err.Error(), "EOF") {
		x.t.Fatalf("%s %s: want EOF or connection reset, got %v", method, path, err)
	}
}

// fltHead is the main head checkpoint of the harness namespace.
func fltHead(x *h) string {
	x.t.Helper()
	r := x.get("/__admin/timeline")
	x.want(r, 200, "")
	m, _ := r.JSON(x.t).(map[string]any)
	br, _ := m["branches"].(map[string]any)
	head, _ := br["main"].(string)
	if head == "" {
		x.t.Fatalf("no main head in %s", r.Body)
	}
	return head
}

var (
	durationMs      = regexp.MustCompile(`"durationMs":[0-9.e+-]+`)
	totalDurationMs = regexp.MustCompile(`"totalDurationMs":[0-9.e+-]+`)
)

// fltMetrics reads GET /__admin/metrics with totalDurationMs replaced by 0.
func fltMetrics(x *h) string {
	x.t.Helper()
	r := x.get("/__admin/metrics")
	x.want(r, 200, "")
	return totalDurationMs.ReplaceAllString(string(r.Body), `"totalDurationMs":0`)
}

// fltJournal reads GET /__admin/requests<query> and returns its body with every
// durationMs value replaced by 0 (the only wall-clock value of an entry).
func fltJournal(x *h, query string) string {
	x.t.Helper()
	r := x.get("/__admin/requests" + query)
	x.want(r, 200, "")
	return durationMs.ReplaceAllString(string(r.Body), `"durationMs":0`)
}

// fltEntry is the expected journal entry of the default namespace at the frozen
// base: the middle part is the keys between "durationMs" and "at".
func fltEntry(op, method, path string, status int, middle string) string {
	s := `{"service":"hermes","namespace":"default",`
	if op != "" {
		s += `"operationId":"` + op + `",`
	}
	s += `"method":"` + method + `","path":"` + path + `","status":` + strconv.Itoa(status) + `,"durationMs":0`
	if op == "" {
		s += `,"unmatched":true`
	} else {
		s += `,"unmatched":false`
	}
	if middle != "" {
		s += "," + middle
	}
	return s + `,"at":"2023-11-14T22:13:20.000Z"}`
}

// fltPreset installs a preset (with optional overrides) and checks the 201.
func fltPreset(x *h, name, overrides string) res {
	x.t.Helper()
	r := x.post("/__admin/faults/presets/"+name, overrides)
	if r.Status != 201 {
		x.t.Fatalf("preset %s: %d %s", name, r.Status, r.Body)
	}
	return r
}

// acceptance 84, 85
func TestFaultAcceptedDrop(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	h0 := fltHead(x)
	x.want(fltPreset(x, "hermes_submit_accepted_drop", ""), 201,
		`{"preset":"hermes_submit_accepted_drop","rules":[{"namespace":"default","operationId":"RunCreate","count":1,"effect":"hermes.accepted_drop","preset":"hermes_submit_accepted_drop","id":"hermes_submit_accepted_drop"}]}`)

	// 84: the response is lost, the admission is not.
	fltDropped(x, "POST", "/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "delivery")
	head := fltHead(x)
	if head == h0 {
		t.Fatalf("head did not move: %s", head)
	}
	queued := `{"object":"hermes.run","run_id":"` + run1 + `","status":"queued","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"` + run1 + `","model":"hermes-agent"}`
	x.want(x.get("/v1/runs/"+run1), 200, queued)
	x.want(x.get("/v1/runs/run_57703349705258663741626769756c5a"), 404,
		hermesErr("Run not found: run_57703349705258663741626769756c5a", "run_not_found"))
	want := `{"size":1000,"requests":[` + fltEntry("RunCreate", "POST", "/v1/runs", 0,
		`"faultId":"hermes_submit_accepted_drop","ids":{"runId":"`+run1+`"},"accepted":true,"checkpoint":"`+head+`"`) + `]}`
	if got := fltJournal(x, "?operationId=RunCreate"); got != want {
		t.Fatalf("journal\n got %s\nwant %s", got, want)
	}

	// 85: the retry with the same key and body replays the dropped admission.
	replay := `{"run_id":"` + run1 + `","status":"queued","replayed":true}`
	r := x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "delivery")
	x.want(r, 202, replay)
	if got := r.Header.Get("Idempotency-Replayed"); got != "true" {
		t.Fatalf("Idempotency-Replayed = %q", got)
	}
	x.want(x.get("/v1/runs/"+run1, "X-Mockingbird-Namespace", "other"), 404, hermesErr("Run not found: "+run1, "run_not_found"))
	x.want(x.post("/__admin/branches/main/checkout", `{"checkpoint":"`+h0+`"}`), 200,
		`{"status":"ok","branch":"main","checkpoint":"`+h0+`"}`)
	x.want(x.get("/v1/runs/"+run1), 404, hermesErr("Run not found: "+run1, "run_not_found"))
	x.want(x.post("/__admin/branches/main/checkout", `{"checkpoint":"`+head+`"}`), 200,
		`{"status":"ok","branch":"main","checkpoint":"`+head+`"}`)
	r = x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "delivery")
	x.want(r, 202, replay)
	if got := r.Header.Get("Idempotency-Replayed"); got != "true" {
		t.Fatalf("Idempotency-Replayed = %q", got)
	}
	// A replay consumes the preset but never drops (runs-api §6.1 step 14).
	fltPreset(x, "hermes_submit_accepted_drop", "")
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "delivery"), 202, replay)
	x.want(x.get("/__admin/faults"), 200, `{"faults":[{"namespace":"default","operationId":"RunCreate","count":1,"effect":"hermes.accepted_drop","preset":"hermes_submit_accepted_drop","id":"hermes_submit_accepted_drop","remaining":0,"hits":1}]}`)
}

// acceptance 86, 87
func TestFaultPinnedRejections(t *testing.T) {
	for _, c := range []struct {
		preset string
		status int
		body   string
	}{
		{"hermes_throttled", 429, `{"error":{"message":"Too many concurrent runs (max 10)","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`},
		{"hermes_draining", 503, hermesErr("Gateway is draining existing work; retry shortly.", "gateway_draining")},
	} {
		t.Run(c.preset, func(t *testing.T) {
			x := newH(t, emulator.Options{})
			x.freeze()
			h0 := fltHead(x)
			fltPreset(x, c.preset, "")
			r := x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "k")
			x.want(r, c.status, c.body)
			if got := r.Header.Get("Retry-After"); got != "1" {
				t.Fatalf("Retry-After = %q", got)
			}
			if got := r.Header.Get("Content-Type"); got != "application/json" {
				t.Fatalf("Content-Type = %q", got)
			}
			// A fault response carries x-mockingbird and nothing else from the emulator (controls §6.6).
			for _, k := range []string{"X-Mockingbird-Checkpoint", "X-Content-Type-Options", "Content-Security-Policy", "Idempotency-Replayed"} {
				if v := r.Header.Get(k); v != "" {
					t.Fatalf("fault response carries %s: %q", k, v)
				}
			}
			if got := fltHead(x); got != h0 {
				t.Fatalf("head moved: %s → %s", h0, got)
			}
			x.want(x.get("/v1/runs/"+run1), 404, hermesErr("Run not found: "+run1, "run_not_found"))
			want := `{"size":1000,"requests":[` + fltEntry("RunCreate", "POST", "/v1/runs", c.status, `"faultId":"`+c.preset+`"`) + `]}`
			if got := fltJournal(x, "?operationId=RunCreate"); got != want {
				t.Fatalf("journal\n got %s\nwant %s", got, want)
			}
			// The key was not reserved: the next start with it creates the first run.
			x.want(x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "k"), 202,
				`{"run_id":"`+run1+`","status":"started","replayed":false}`)
		})
	}
}

// acceptance 88
func TestFaultFailedRun(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start("Idempotency-Key", "failed")
	x.want(x.observe(id, `{"status":"failed","error":"synthetic executor failure"}`), 200, "")
	x.want(x.get("/v1/runs/"+id), 200, `{"object":"hermes.run","run_id":"`+id+`","status":"failed","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"`+id+`","model":"hermes-agent","error":"synthetic executor failure","last_event":"run.failed"}`)
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "failed"), 202,
		`{"run_id":"`+id+`","status":"failed","replayed":true}`)
}

// acceptance 89
func TestFaultAcceptedDropInvalidRequest(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	h0 := fltHead(x)
	fltPreset(x, "hermes_submit_accepted_drop", "")
	x.want(x.post("/v1/runs", `{"input":""}`, "Idempotency-Key", "invalid"), 400, hermesErr("Missing 'input' field", ""))
	if got := fltHead(x); got != h0 {
		t.Fatalf("head moved: %s → %s", h0, got)
	}
	x.want(x.get("/v1/runs/"+run1), 404, hermesErr("Run not found: "+run1, "run_not_found"))
	want := `{"size":1000,"requests":[` + fltEntry("RunCreate", "POST", "/v1/runs", 400,
		`"faultId":"hermes_submit_accepted_drop","request":{"contentType":null,"bodyBytes":12,"transferEncoding":null}`) + `]}`
	if got := fltJournal(x, "?operationId=RunCreate"); got != want {
		t.Fatalf("journal\n got %s\nwant %s", got, want)
	}
	// The preset was consumed: the next valid start answers normally.
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "invalid"), 202,
		`{"run_id":"`+run1+`","status":"started","replayed":false}`)
	x.want(x.get("/__admin/faults"), 200, `{"faults":[{"namespace":"default","operationId":"RunCreate","count":1,"effect":"hermes.accepted_drop","preset":"hermes_submit_accepted_drop","id":"hermes_submit_accepted_drop","remaining":0,"hits":1}]}`)
}

// acceptance 90
func TestFaultPollTimeout(t *testing.T) {
	x := newH(t, emulator.Options{})
	id := x.start()
	fltPreset(x, "hermes_poll_timeout", "")
	_, err := fltRaw(x, 30*time.Millisecond, "GET", "/v1/runs/"+id, "")
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("30 ms client: want a timeout, got %v", err)
	}
	// The preset was consumed by the timed-out poll: the next one answers.
	x.want(x.get("/v1/runs/"+id), 200, "")
	// With a patient client the delayed answer arrives after at least 1000 ms.
	fltPreset(x, "hermes_poll_timeout", "")
	t0 := time.Now()
	r, err := fltRaw(x, 30*time.Second, "GET", "/v1/runs/"+id, "")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < time.Second {
		t.Fatalf("delayed poll answered after %v", d)
	}
	x.want(r, 200, "")
	x.want(x.get("/__admin/faults"), 200, `{"faults":[{"namespace":"default","operationId":"RunGet","count":1,"delayMs":1000,"preset":"hermes_poll_timeout","id":"hermes_poll_timeout","remaining":0,"hits":1}]}`)
	// A delay-only rule is never a faultId (controls §6.6).
	if j := fltJournal(x, "?operationId=RunGet"); strings.Contains(j, "faultId") {
		t.Fatalf("delay-only rule recorded as faultId: %s", j)
	}
}

// acceptance 91
func TestFaultNamespaceRule(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.ns = "a"
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":503,"body":{"message":"synthetic outage"}}`), 201,
		`{"namespace":"a","operationId":"RunGet","status":503,"body":{"message":"synthetic outage"},"id":"fault_1"}`)
	x.want(x.get("/v1/runs/example"), 503, `{"message":"synthetic outage"}`)
	x.ns = ""
	r := x.get("/ns/b/v1/runs/example")
	x.want(r, 404, hermesErr("Run not found: example", "run_not_found"))
	if got := r.Header.Get("X-Mockingbird"); !strings.Contains(got, "ns=b") {
		t.Fatalf("x-mockingbird = %q", got)
	}
	x.ns = "a"
	x.want(x.post("/__admin/reset", ""), 200, `{"status":"ok","reset":["a"]}`)
	x.want(x.get("/v1/runs/example"), 503, `{"message":"synthetic outage"}`)
	x.want(x.do("DELETE", "/__admin/faults", ""), 200, `{"status":"ok"}`)
	x.want(x.get("/v1/runs/example"), 404, hermesErr("Run not found: example", "run_not_found"))
	x.want(x.get("/__admin/faults"), 200, `{"faults":[]}`)
}

// acceptance 92
func TestFaultBodies(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":500,"body":null,"count":1}`), 201, "")
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":502,"count":1}`), 201, "")
	r := x.get("/v1/runs/x")
	x.want(r, 500, "")
	if len(r.Body) != 0 {
		t.Fatalf("null body rule sent %q", r.Body)
	}
	if ct, ok := r.Header["Content-Type"]; ok {
		t.Fatalf("null body rule sent Content-Type %q", ct)
	}
	r = x.get("/v1/runs/x")
	x.want(r, 502, `{"detail":"Injected by Mockingbird"}`)
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Fatalf("Content-Type = %q", got)
	}
	// Other bodies: a string is sent as is, rule headers replace the defaults.
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":418,"body":"plain text","headers":{"content-type":"text/plain","X-Extra":"1"},"count":1}`), 201, "")
	r = x.get("/v1/runs/x")
	x.want(r, 418, "plain text")
	if got := r.Header.Values("Content-Type"); len(got) != 1 || got[0] != "text/plain" || r.Header.Get("X-Extra") != "1" {
		t.Fatalf("headers %v", r.Header)
	}
}

// acceptance 93
func TestFaultSeededRate(t *testing.T) {
	x := newH(t, emulator.Options{Seed: "42"})
	id := x.start()
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":500,"rate":0.5}`), 201, "")
	for i, want := range []int{200, 500, 200} {
		if r := x.get("/v1/runs/" + id); r.Status != want {
			t.Fatalf("poll %d: %d %s, want %d", i+1, r.Status, r.Body, want)
		}
	}
	x.want(x.get("/__admin/faults"), 200, `{"faults":[{"namespace":"default","operationId":"RunGet","status":500,"rate":0.5,"id":"fault_1","remaining":null,"hits":1}]}`)
}

// acceptance 94, 95
func TestFaultAdminErrors(t *testing.T) {
	x := newH(t, emulator.Options{})
	for _, c := range []struct {
		method, path, body string
		status             int
		msg                string
	}{
		{"POST", "/__admin/faults", `{}`, 400, "a fault needs a numeric status, a delayMs/latencyMs, drop: true, an effect, or a preset"},
		{"POST", "/__admin/faults", ``, 400, "a fault needs a numeric status, a delayMs/latencyMs, drop: true, an effect, or a preset"},
		{"POST", "/__admin/faults", `{"status":"500"}`, 400, "a fault needs a numeric status, a delayMs/latencyMs, drop: true, an effect, or a preset"},
		{"POST", "/__admin/faults", `{"drop":false}`, 400, "a fault needs a numeric status, a delayMs/latencyMs, drop: true, an effect, or a preset"},
		{"POST", "/__admin/faults", `{"preset":"nope"}`, 404, `no fault preset "nope"`},
		{"POST", "/__admin/faults/presets/nope", ``, 404, "no fault preset nope; GET /__admin/faults/presets"},
		{"DELETE", "/__admin/faults?id=x", ``, 404, "no fault x"},
	} {
		x.want(x.do(c.method, c.path, c.body), c.status, adminErr(c.msg))
	}
	x.want(x.get("/__admin/faults"), 200, `{"faults":[]}`)
}

// acceptance 96
func TestFaultPresetList(t *testing.T) {
	x := newH(t, emulator.Options{})
	want := `{"presets":[` +
		`{"name":"hermes_submit_accepted_drop","description":"Admit one new run, then lose the response; retry with the same key to recover","rules":[{"operationId":"RunCreate","count":1,"effect":"hermes.accepted_drop"}]},` +
		`{"name":"hermes_poll_timeout","description":"Delay one poll by 1000ms to exercise a shorter client deadline","rules":[{"operationId":"RunGet","count":1,"delayMs":1000}]},` +
		`{"name":"hermes_throttled","description":"Reject one submission with the pinned default-capacity throttle envelope","rules":[{"operationId":"RunCreate","count":1,"status":429,"headers":{"Retry-After":"1"},"body":{"error":{"message":"Too many concurrent runs (max 10)","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}}]},` +
		`{"name":"hermes_draining","description":"Reject one submission with the pinned gateway-draining envelope","rules":[{"operationId":"RunCreate","count":1,"status":503,"headers":{"Retry-After":"1"},"body":{"error":{"message":"Gateway is draining existing work; retry shortly.","type":"invalid_request_error","param":null,"code":"gateway_draining"}}}]},` +
		`{"name":"hermes_steer_refused","description":"Refuse the next steer after validation with the pinned steer_not_accepted conflict","rules":[{"operationId":"RunSteer","count":1,"effect":"hermes.steer_refused"}]}` +
		`]}`
	x.want(x.get("/__admin/faults/presets"), 200, want)
}

// acceptance 97
func TestFaultPresetCountOverride(t *testing.T) {
	x := newH(t, emulator.Options{})
	rule := func(remaining, hits string) string {
		return `{"faults":[{"namespace":"default","operationId":"RunCreate","count":3,"status":429,"headers":{"Retry-After":"1"},"body":{"error":{"message":"Too many concurrent runs (max 10)","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}},"preset":"hermes_throttled","id":"hermes_throttled","remaining":` + remaining + `,"hits":` + hits + `}]}`
	}
	x.want(fltPreset(x, "hermes_throttled", `{"count":3}`), 201,
		`{"preset":"hermes_throttled","rules":[{"namespace":"default","operationId":"RunCreate","count":3,"status":429,"headers":{"Retry-After":"1"},"body":{"error":{"message":"Too many concurrent runs (max 10)","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}},"preset":"hermes_throttled","id":"hermes_throttled"}]}`)
	x.want(x.get("/__admin/faults"), 200, rule("3", "0"))
	for i, want := range []int{429, 429, 429, 202} {
		if r := x.post("/v1/runs", `{"input":"synthetic"}`); r.Status != want {
			t.Fatalf("start %d: %d %s, want %d", i+1, r.Status, r.Body, want)
		}
	}
	x.want(x.get("/__admin/faults"), 200, rule("0", "3"))
}

// acceptance 98
func TestFaultDropPoll(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.want(x.post("/__admin/faults", `{"drop":true,"operationId":"RunGet"}`), 201,
		`{"namespace":"default","drop":true,"operationId":"RunGet","id":"fault_1"}`)
	fltDropped(x, "GET", "/v1/runs/x", "")
	want := `{"size":1000,"requests":[` + fltEntry("RunGet", "GET", "/v1/runs/x", 0, `"faultId":"fault_1"`) + `]}`
	if got := fltJournal(x, ""); got != want {
		t.Fatalf("journal\n got %s\nwant %s", got, want)
	}
	// A dropped request counts as a fault in the metrics (controls §9).
	if got := fltMetrics(x); got != `{"requests":1,"byOperation":{"RunGet 0":1},"unmatched":[],"faults":1,"totalDurationMs":0}` {
		t.Fatalf("metrics %s", got)
	}
}

// controls §6.1–§6.2: wrong field types, stored key order, replacing a rule by id.
func TestFaultRuleShape(t *testing.T) {
	x := newH(t, emulator.Options{})
	for _, c := range [][2]string{
		{`{"status":500,"count":"1"}`, "count"},
		{`{"status":500,"rate":"0.5"}`, "rate"},
		{`{"status":500,"method":1}`, "method"},
		{`{"status":500,"headers":{"X-A":1}}`, "headers"},
		{`{"status":500,"operationId":["RunGet"]}`, "operationId"},
		{`{"status":500,"drop":"yes"}`, "drop"},
	} {
		x.want(x.post("/__admin/faults", c[0]), 400, adminErr("fault field "+c[1]+" has the wrong type"))
	}
	x.ns = "a"
	x.want(x.post("/__admin/faults", `{"status":500,"id":"x","namespace":"*","operationId":"RunGet","count":2}`), 201,
		`{"namespace":"*","status":500,"id":"x","operationId":"RunGet","count":2}`)
	x.want(x.post("/__admin/faults", `{"delayMs":0,"operationId":"CapabilitiesGet"}`), 201,
		`{"namespace":"a","delayMs":0,"operationId":"CapabilitiesGet","id":"fault_2"}`)
	x.ns = "b"
	x.want(x.get("/v1/runs/r"), 500, `{"detail":"Injected by Mockingbird"}`) // "*" matches every namespace
	// The same id replaces the rule in place and resets its counters.
	x.want(x.post("/__admin/faults", `{"id":"x","status":418,"operationId":"RunGet","count":1}`), 201,
		`{"namespace":"b","id":"x","status":418,"operationId":"RunGet","count":1}`)
	x.want(x.get("/__admin/faults"), 200, `{"faults":[{"namespace":"b","id":"x","status":418,"operationId":"RunGet","count":1,"remaining":1,"hits":0},{"namespace":"a","delayMs":0,"operationId":"CapabilitiesGet","id":"fault_2","remaining":null,"hits":0}]}`)
	x.ns = "a"
	x.want(x.get("/v1/runs/r"), 404, hermesErr("Run not found: r", "run_not_found")) // the replacement is namespace b's
	// A preset through POST /__admin/faults, with overrides merged as by object
	// spread (controls §6.4): count replaced in place, the id override appended
	// before "preset" and then kept in place.
	x.want(x.post("/__admin/faults", `{"preset":"hermes_steer_refused","count":2,"id":"s"}`), 201,
		`{"preset":"hermes_steer_refused","rules":[{"namespace":"a","operationId":"RunSteer","count":2,"effect":"hermes.steer_refused","id":"s","preset":"hermes_steer_refused"}]}`)
}

// controls §6.5 step 3 and §6.7: every matching rule draws, even at rate 1, in
// insertion order; non-matching rules do not draw; checkout restores the RNG.
func TestFaultDrawOrder(t *testing.T) {
	x := newH(t, emulator.Options{Seed: "42"})
	id := x.start()
	x.want(x.post("/__admin/faults", `{"operationId":"RunStop","status":500}`), 201, "")               // never matches a poll
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","effect":"synthetic.effect"}`), 201, "") // draws 0.601…, fires
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":500,"rate":0.5}`), 201, "")     // draws 0.448…, fires
	cp := tlCheckpoint(x)
	x.want(x.get("/v1/runs/"+id), 500, `{"detail":"Injected by Mockingbird"}`)
	e := ctlEntries(x, "?operationId=RunGet")
	if len(e) != 1 || e[0]["faultId"] != "fault_3" {
		t.Fatalf("journal %v", e)
	}
	// The checkout restores the RNG: the same poll is faulted again.
	tlCheckout(x, cp)
	x.want(x.get("/v1/runs/"+id), 500, `{"detail":"Injected by Mockingbird"}`)
	// An effect-only rule that fired on an operation's answer is the faultId.
	x.want(x.do("DELETE", "/__admin/faults?id=fault_3", ""), 200, `{"status":"ok"}`)
	x.want(x.get("/v1/runs/"+id), 200, "")
	e = ctlEntries(x, "?operationId=RunGet")
	if len(e) != 3 || e[2]["faultId"] != "fault_2" {
		t.Fatalf("journal %v", e)
	}
}

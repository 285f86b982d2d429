package emulator_test

// Acceptance section K: capacity, draining, auth, body limit and capabilities
// (runs-api §6.7, §14; controls §11.4).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

const (
	run2 = "run_57703349705258663741626769756c5a"
	run3 = "run_77774b677732707967695639616f3561"

	authErr     = `{"error":{"message":"Invalid gateway API key (API_SERVER_KEY)","type":"gateway_auth_error","code":"gateway_auth_failed"}}`
	drainingMsg = "Gateway is draining existing work; retry shortly."
)

func throttleErr(n int) string {
	return fmt.Sprintf(`{"error":{"message":"Too many concurrent runs (max %d)","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`, n)
}

// optWantHeader fails unless r carries header name with exactly value.
func optWantHeader(t *testing.T, r res, name, value string) {
	t.Helper()
	if got := r.Header.Values(name); len(got) != 1 || got[0] != value {
		t.Fatalf("%s = %q, want %q", name, got, value)
	}
}

// optStream opens GET path on the listener and returns the status and the
// Content-Type once the response headers arrive; the stream is then closed.
func optStream(t *testing.T, x *h, path string, hdr ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", x.srv.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Content-Type")
}

// optRaw writes raw bytes to the server's socket and reads one response.
// The connection is closed afterwards.
func optRaw(t *testing.T, x *h, raw string) (*http.Response, []byte) {
	t.Helper()
	u, err := url.Parse(x.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatalf("write: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, b
}

// chunked encodes body as an HTTP/1.1 chunked payload in chunks of n bytes.
func chunked(body string, n int) string {
	var b strings.Builder
	for len(body) > 0 {
		c := body[:min(n, len(body))]
		body = body[len(c):]
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(c), c)
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

// acceptance 146, 147, 148
func TestCapacity(t *testing.T) {
	x := newH(t, emulator.Options{MaxConcurrentRuns: 2})
	x.freeze()
	key := []string{"Idempotency-Key", "cap"}
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, key...), 202, `{"run_id":"`+run1+`","status":"started","replayed":false}`)
	if id := x.start(); id != run2 {
		t.Fatalf("second start = %s", id)
	}
	// 146: the third start is throttled and creates nothing.
	r := x.post("/v1/runs", `{"input":"synthetic"}`)
	x.want(r, 429, throttleErr(2))
	optWantHeader(t, r, "Retry-After", "1")
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "other"), 429, throttleErr(2))
	x.want(x.get("/v1/runs/"+run3), 404, hermesErr("Run not found: "+run3, "run_not_found"))
	// 147: a replay bypasses capacity.
	r = x.post("/v1/runs", `{"input":"synthetic"}`, key...)
	x.want(r, 202, `{"run_id":"`+run1+`","status":"queued","replayed":true}`)
	optWantHeader(t, r, "Idempotency-Replayed", "true")
	// 148: a completed run frees its slot; the counter was not consumed by the 429s.
	x.want(x.observe(run2, `{"status":"completed","output":"done"}`), 200, "")
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 202, `{"run_id":"`+run3+`","status":"started","replayed":false}`)
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 429, throttleErr(2))
}

// acceptance 146: capacity is per namespace; every unfinished status counts.
func TestCapacityCountsLiveRunsPerNamespace(t *testing.T) {
	x := newH(t, emulator.Options{MaxConcurrentRuns: 1})
	id := x.start()
	for _, obs := range []string{`{"status":"running"}`, `{"status":"waiting_for_approval","approval":{"command":"synthetic"}}`} {
		x.want(x.observe(id, obs), 200, "")
		x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 429, throttleErr(1))
	}
	x.want(x.post("/v1/runs/"+id+"/stop", ""), 200, `{"run_id":"`+id+`","status":"stopping"}`)
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 429, throttleErr(1))
	x.ns = "b"
	if got := x.start(); got != "run_43436d49743878746c77354658534665" {
		t.Fatalf("namespace b start = %s", got)
	}
	x.ns = ""
	x.want(x.observe(id, `{"status":"cancelled"}`), 200, "")
	if got := x.start(); got != run2 {
		t.Fatalf("start after cancel = %s", got)
	}
}

// acceptance 149
func TestNoCapacityLimitByDefault(t *testing.T) {
	x := newH(t, emulator.Options{})
	for i := range 50 {
		if r := x.post("/v1/runs", `{"input":"synthetic"}`); r.Status != 202 {
			t.Fatalf("start %d: %d %s", i+1, r.Status, r.Body)
		}
	}
}

// acceptance 150
func TestCapacityIgnoresNonLocalRuns(t *testing.T) {
	x := newH(t, emulator.Options{MaxConcurrentRuns: 1})
	id := x.start("Idempotency-Key", "alive")
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 429, throttleErr(1))
	x.want(x.restart("alive"), 200, `{"owner":"alive","retained":1,"discarded":0,"simulated":true}`)
	x.want(x.get("/v1/runs/"+id), 200, "")
	if x.get("/v1/runs/"+id).field(t, "status") != "queued" {
		t.Fatalf("alive restart changed the run")
	}
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 202, `{"run_id":"`+run2+`","status":"started","replayed":false}`)
}

// acceptance 151
func TestDraining(t *testing.T) {
	x := newH(t, emulator.Options{})
	key := []string{"Idempotency-Key", "k"}
	id := x.start(key...)
	x.want(x.post("/__admin/hermes/drain", `{"draining":true}`), 200, `{"draining":true,"simulated":true}`)
	for _, hdr := range [][]string{nil, key} {
		r := x.post("/v1/runs", `{"input":"synthetic"}`, hdr...)
		x.want(r, 503, hermesErr(drainingMsg, "gateway_draining"))
		optWantHeader(t, r, "Retry-After", "1")
		if r.Header.Get("X-Mockingbird-Checkpoint") != "" {
			t.Fatalf("503 carries a checkpoint")
		}
	}
	// Draining is checked before validation.
	x.want(x.post("/v1/runs", `{`), 503, hermesErr(drainingMsg, "gateway_draining"))
	x.want(x.get("/v1/runs/"+id), 200, "")
	if st, ct := optStream(t, x, "/v1/runs/"+id+"/events"); st != 200 || ct != "text/event-stream" {
		t.Fatalf("events while draining: %d %q", st, ct)
	}
	x.want(x.post("/v1/runs/"+id+"/stop", ""), 200, `{"run_id":"`+id+`","status":"stopping"}`)
	// Other namespaces are not draining.
	x.ns = "other"
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 202, "")
	x.ns = ""
	x.want(x.post("/__admin/hermes/drain", `{"draining":false}`), 200, `{"draining":false,"simulated":true}`)
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 202, `{"run_id":"`+run2+`","status":"started","replayed":false}`)
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, key...), 202, `{"run_id":"`+id+`","status":"stopping","replayed":true}`)
}

// acceptance 152
func TestDrainFlagIsNamespaceState(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.want(x.get("/__admin/hermes/drain"), 200, `{"draining":false}`)
	x.want(x.post("/__admin/hermes/drain", `{"draining":true}`), 200, `{"draining":true,"simulated":true}`)
	cp := x.post("/__admin/checkpoints", "")
	x.want(cp, 201, "")
	c := cp.field(t, "id")
	x.want(x.get("/__admin/hermes/drain"), 200, `{"draining":true}`)
	x.want(x.restart("stale"), 200, "")
	x.want(x.get("/__admin/hermes/drain"), 200, `{"draining":false}`)
	x.want(x.post("/__admin/branches/main/checkout", `{"checkpoint":"`+c+`"}`), 200, `{"status":"ok","branch":"main","checkpoint":"`+c+`"}`)
	x.want(x.get("/__admin/hermes/drain"), 200, `{"draining":true}`)
	x.want(x.post("/__admin/reset", ""), 200, `{"status":"ok","reset":["default"]}`)
	x.want(x.get("/__admin/hermes/drain"), 200, `{"draining":false}`)
}

// acceptance 153
func TestDrainBody(t *testing.T) {
	x := newH(t, emulator.Options{})
	msg := hermesErr(`drain: expected {"draining": true} or {"draining": false}`, "")
	for _, body := range []string{`{"draining":"yes"}`, `{"draining":1}`, `{}`, ``, `{"draining":true,"x":1}`, `[true]`, `null`} {
		x.want(x.post("/__admin/hermes/drain", body), 400, msg)
	}
	x.want(x.get("/__admin/hermes/drain"), 200, `{"draining":false}`)
}

// acceptance 154, 155
func TestAPIKey(t *testing.T) {
	x := newH(t, emulator.Options{APIKey: "k"})
	ok := []string{"Authorization", "Bearer k"}
	id := x.start(ok...)
	routes := [][3]string{
		{"POST", "/v1/runs", `{"input":"synthetic"}`},
		{"GET", "/v1/capabilities", ""},
		{"GET", "/v1/runs/" + id, ""},
		{"POST", "/v1/runs/" + id + "/stop", ""},
		{"GET", "/v1/runs/" + id + "/events", ""},
		{"POST", "/v1/runs/" + id + "/approval", `{"choice":"once"}`},
		{"POST", "/v1/runs/" + id + "/steer", `{"input":"x"}`},
	}
	for _, rt := range routes {
		for _, auth := range [][]string{nil, {"Authorization", "bearer k"}, {"Authorization", "Bearer x"}, {"Authorization", "Bearerk"}, {"Authorization", "Bearer  kk"}} {
			x.want(x.do(rt[0], rt[1], rt[2], auth...), 401, authErr)
		}
	}
	// 155: auth precedes 404 and validation; the control plane never needs it.
	x.want(x.get("/v1/runs/missing"), 401, authErr)
	x.want(x.post("/v1/runs", `{`), 401, authErr)
	x.want(x.get("/health"), 200, "")
	x.want(x.get("/__admin"), 200, "")
	x.want(x.get("/__admin/clock"), 200, "")
	// Unknown routes are 404 before auth (pipeline step 9 before 10).
	x.want(x.get("/missing"), 404, `{"message":"page not found"}`)
	// 154: a valid bearer proceeds (the value is Python-stripped).
	for _, auth := range []string{"Bearer k", "Bearer  k ", "Bearer k\t"} {
		a := []string{"Authorization", auth}
		x.want(x.get("/v1/runs/missing", a...), 404, hermesErr("Run not found: missing", "run_not_found"))
		x.want(x.get("/v1/runs/"+id, a...), 200, "")
		x.want(x.get("/v1/capabilities", a...), 200, "")
	}
	x.want(x.post("/v1/runs/"+id+"/stop", "", ok...), 200, `{"run_id":"`+id+`","status":"stopping"}`)
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, "Authorization", "Bearer  k "), 202, `{"run_id":"`+run2+`","status":"started","replayed":false}`)
	if st, ct := optStream(t, x, "/v1/runs/"+run2+"/events", ok...); st != 200 || ct != "text/event-stream" {
		t.Fatalf("events with a valid bearer: %d %q", st, ct)
	}
}

// acceptance 156
func TestSessionKeyTooLong(t *testing.T) {
	long := strings.Repeat("m", 257)
	x := newH(t, emulator.Options{APIKey: "k"})
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, "Authorization", "Bearer k", "X-Hermes-Session-Key", long), 400,
		`{"error":{"message":"Session key too long","type":"invalid_request_error"}}`)
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, "Authorization", "Bearer k", "X-Hermes-Session-Key", long[:256]), 202, "")
	y := newH(t, emulator.Options{})
	y.want(y.post("/v1/runs", `{"input":"synthetic"}`, "X-Hermes-Session-Key", long), 501,
		unsupportedErr("invalid memory-scope headers are outside the current subset"))
	y.want(y.post("/v1/runs", `{"input":"synthetic"}`, "X-Hermes-Session-Key", long[:256]), 202, `{"run_id":"`+run1+`","status":"started","replayed":false}`)
}

// acceptance 157
func TestAPIKeyScopeSurvivesRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "f.db")
	key := []string{"Idempotency-Key", "s"}
	a, err := emulator.New(emulator.Options{DBPath: db, APIKey: "A"})
	if err != nil {
		t.Fatal(err)
	}
	x := &h{t: t, srv: a}
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, append(key, "Authorization", "Bearer A")...), 202, `{"run_id":"`+run1+`","status":"started","replayed":false}`)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// Same key A again: the reservation is found (control for the assertion below).
	x = newH(t, emulator.Options{DBPath: db, APIKey: "A"})
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, append(key, "Authorization", "Bearer A")...), 202, `{"run_id":"`+run1+`","status":"interrupted","replayed":true}`)
	if err := x.srv.Close(); err != nil {
		t.Fatal(err)
	}
	y := newH(t, emulator.Options{DBPath: db, APIKey: "B"})
	y.want(y.post("/v1/runs", `{"input":"synthetic"}`, append(key, "Authorization", "Bearer B")...), 202, `{"run_id":"`+run2+`","status":"started","replayed":false}`)
	y.want(y.get("/v1/runs/"+run1, "Authorization", "Bearer B"), 404, hermesErr("Run not found: "+run1, "run_not_found"))
}

// acceptance 158: the declared length alone is refused; the server answers
// without waiting for (or reading) the 10,000,001 bytes that never come.
func TestBodyLimitContentLength(t *testing.T) {
	x := newH(t, emulator.Options{})
	resp, body := optRaw(t, x, "POST /v1/runs HTTP/1.1\r\nHost: emulator\r\nContent-Type: application/json\r\nContent-Length: 10000001\r\n\r\n")
	if resp.StatusCode != 413 || string(body) != hermesErr("Request body too large.", "body_too_large") {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
	// Exactly the limit is read (and then judged as JSON).
	resp, body = optRaw(t, x, "POST /v1/runs HTTP/1.1\r\nHost: emulator\r\nContent-Length: 10000000\r\nConnection: close\r\n\r\n"+strings.Repeat(" ", 10_000_000))
	if resp.StatusCode != 400 || string(body) != hermesErr("Invalid JSON", "") {
		t.Fatalf("10,000,000 spaces: got %d %s", resp.StatusCode, body)
	}
	// The body limit (step 8) precedes routing (step 9).
	resp, body = optRaw(t, x, "POST /v1/nope HTTP/1.1\r\nHost: emulator\r\nContent-Length: 10000001\r\n\r\n")
	if resp.StatusCode != 413 || string(body) != hermesErr("Request body too large.", "body_too_large") {
		t.Fatalf("unknown route: got %d %s", resp.StatusCode, body)
	}
	r := x.get("/__admin/requests")
	var j struct {
		Requests []struct {
			OperationID string `json:"operationId"`
			Status      int    `json:"status"`
			Request     struct {
				BodyBytes *int64 `json:"bodyBytes"`
			} `json:"request"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(r.Body, &j); err != nil || len(j.Requests) != 3 {
		t.Fatalf("journal: %v %s", err, r.Body)
	}
	if e := j.Requests[0]; e.OperationID != "RunCreate" || e.Status != 413 || e.Request.BodyBytes == nil || *e.Request.BodyBytes != 10000001 {
		t.Fatalf("journal entry: %+v", e)
	}
}

// acceptance 159
func TestBodyLimitChunked(t *testing.T) {
	x := newH(t, emulator.Options{MaxBodyBytes: 100})
	body := func(n int) string { return `{"input":"` + strings.Repeat("x", n-12) + `"}` }
	if len(body(101)) != 101 {
		t.Fatal("fixture length")
	}
	req := func(b string) string {
		return "POST /v1/runs HTTP/1.1\r\nHost: emulator\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + chunked(b, 7)
	}
	resp, got := optRaw(t, x, req(body(101)))
	if resp.StatusCode != 413 || string(got) != hermesErr("Request body too large.", "body_too_large") {
		t.Fatalf("101 chunked: %d %s", resp.StatusCode, got)
	}
	resp, got = optRaw(t, x, req(body(100)))
	if resp.StatusCode != 202 || string(got) != `{"run_id":"`+run1+`","status":"started","replayed":false}` {
		t.Fatalf("100 chunked: %d %s", resp.StatusCode, got)
	}
	x.want(x.post("/v1/runs", body(100)), 202, `{"run_id":"`+run2+`","status":"started","replayed":false}`)
	x.want(x.post("/v1/runs", body(101)), 413, hermesErr("Request body too large.", "body_too_large"))
	// The admin API has its own envelope for the same limit (controls §1).
	x.want(x.post("/__admin/clock", `{"advance":0`+strings.Repeat(" ", 100)+`}`), 413, adminErr("request body too large"))
}

const capabilitiesFmt = `{"object":"hermes.api_server.capabilities","platform":"hermes-agent","model":"hermes-agent",` +
	`"auth":{"type":"bearer","required":%t},` +
	`"runtime":{"mode":"server_agent","tool_execution":"server","split_runtime":false,` +
	`"description":"Emulated Hermes peer-run API: run lifecycles are scripted through /__admin controls; no agent, tool or model runs."},` +
	`"features":{"chat_completions":false,"chat_completions_streaming":false,"responses_api":false,"responses_streaming":false,` +
	`"run_submission":true,"runs_idempotency":{"supported":true,"durable":%t,"retention_seconds":86400},` +
	`"run_status":true,"run_events_sse":true,"run_stop":true,"run_steer":true,"run_approval_response":true,` +
	`"tool_progress_events":true,"approval_events":true,"session_key_header":"X-Hermes-Session-Key","cors":false},` +
	`"endpoints":{"runs":{"method":"POST","path":"/v1/runs"},"run_status":{"method":"GET","path":"/v1/runs/{run_id}"},` +
	`"run_events":{"method":"GET","path":"/v1/runs/{run_id}/events"},"run_approval":{"method":"POST","path":"/v1/runs/{run_id}/approval"},` +
	`"run_steer":{"method":"POST","path":"/v1/runs/{run_id}/steer"},"run_stop":{"method":"POST","path":"/v1/runs/{run_id}/stop"}}}`

// acceptance 160
func TestCapabilities(t *testing.T) {
	x := newH(t, emulator.Options{})
	r := x.get("/v1/capabilities")
	x.want(r, 200, fmt.Sprintf(capabilitiesFmt, false, false))
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	j := x.get("/__admin/requests")
	want := `"operationId":"CapabilitiesGet","method":"GET","path":"/v1/capabilities","status":200`
	if !strings.Contains(string(j.Body), want) {
		t.Fatalf("journal %s lacks %s", j.Body, want)
	}
	y := newH(t, emulator.Options{APIKey: "k", DBPath: filepath.Join(t.TempDir(), "f.db")})
	y.want(y.get("/v1/capabilities", "Authorization", "Bearer k"), 200, fmt.Sprintf(capabilitiesFmt, true, true))
	y.want(y.get("/v1/capabilities"), 401, authErr)
}

// A key no request can carry is refused at start instead of answering 401 to
// everything: HTTP drops the spaces and tabs around a header value and has no
// control characters, and the bearer check Python-strips the token (runs-api
// §14.3) — so an API key ending in "à" (UTF-8 C3 A0, A0 being a Latin-1
// space) can never match either.
func TestUnsendableKeysAreRefused(t *testing.T) {
	for _, o := range []emulator.Options{
		{AdminKey: " adm"}, {AdminKey: "adm\t"}, {AdminKey: "a\nb"}, {AdminKey: "a\x00b"}, {AdminKey: "a\x7fb"},
		{APIKey: " k"}, {APIKey: "k "}, {APIKey: "k\x1c"}, {APIKey: "voilà"}, {APIKey: "a\rb"},
	} {
		o.NoListener = true
		if srv, err := emulator.New(o); err == nil {
			srv.Close()
			t.Errorf("admin key %q, API key %q: started, want an error", o.AdminKey, o.APIKey)
		}
	}
	x := newH(t, emulator.Options{AdminKey: "clé a\tb", APIKey: "clé k\tk"})
	x.want(x.get("/__admin/clock", "X-Mockingbird-Admin-Key", "clé a\tb"), 200, "")
	x.want(x.get("/v1/capabilities", "Authorization", "Bearer clé k\tk "), 200, "")
}

func TestBareHost(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"[::1]", "::1"}, {"::1", "::1"}, {"127.0.0.1", "127.0.0.1"}, {"localhost", "localhost"},
		{"[::1", "[::1"}, {"::1]", "::1]"}, {"[]", "[]"}, {"", ""},
	} {
		if got := emulator.BareHost(c.in); got != c.want {
			t.Errorf("BareHost(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

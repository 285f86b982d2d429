package emulator_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// logBuffer is a bytes.Buffer safe for the server's goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *logBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *logBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// With LogRequests, a JSON logger gets exactly one line per vendor request
// with method, path, status, operationId, durationMs, namespace (and faultId
// when a rule fired) — and never a body, a header value, a key or a
// credential (issue 8). Control-plane requests are not logged.
func TestRequestLog(t *testing.T) {
	var buf logBuffer
	x := newH(t, emulator.Options{APIKey: "api-SECRET-key", AdminKey: "adm-SECRET-key", LogRequests: true,
		Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	x.want(x.post("/__admin/clock", `{"freeze":true}`), 401, "") // not logged either
	admin := []string{"X-Mockingbird-Admin-Key", "adm-SECRET-key"}
	x.want(x.post("/__admin/clock", `{"set":1700000000000,"freeze":true}`, admin...), 200, "")
	auth := []string{"Authorization", "Bearer api-SECRET-key"}

	r := x.post("/v1/runs", `{"input":"body-SECRET-text","instructions":"instr-SECRET"}`, append(auth,
		"Idempotency-Key", "idem-SECRET-key", "X-Hermes-Session-Key", "sess-SECRET-key", "Cookie", "c=cookie-SECRET")...)
	x.want(r, 202, `{"run_id":"`+run1+`","status":"started","replayed":false}`)
	x.want(x.get("/v1/runs/"+run1, "Authorization", "Bearer wrong-SECRET-token"), 401, "")
	x.want(x.post("/__admin/faults", `{"id":"boom","operationId":"RunGet","status":500,"count":1}`, admin...), 201, "")
	x.want(x.get("/v1/runs/"+run1, auth...), 500, `{"detail":"Injected by Mockingbird"}`)
	x.want(x.get("/missing", "X-Mockingbird-Namespace", "a"), 404, `{"message":"page not found"}`)
	x.want(x.get("/health"), 200, "")
	x.want(x.get("/openapi.yaml"), 200, "")
	x.want(x.get("/__admin/requests", admin...), 200, "")

	out := buf.String()
	if strings.Contains(out, "SECRET") {
		t.Fatalf("log leaks a secret:\n%s", out)
	}
	want := []map[string]any{
		{"method": "POST", "path": "/v1/runs", "status": 202.0, "operationId": "RunCreate", "namespace": "default"},
		{"method": "GET", "path": "/v1/runs/" + run1, "status": 401.0, "operationId": "RunGet", "namespace": "default"},
		{"method": "GET", "path": "/v1/runs/" + run1, "status": 500.0, "operationId": "RunGet", "namespace": "default", "faultId": "boom"},
		{"method": "GET", "path": "/missing", "status": 404.0, "operationId": "(unmatched)", "namespace": "a"},
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d log lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, line := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %d is not JSON: %s", i, line)
		}
		keys := make([]string, 0, len(got))
		for k := range got {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		wantKeys := []string{"durationMs", "level", "method", "msg", "namespace", "operationId", "path", "status", "time"}
		if _, ok := want[i]["faultId"]; ok {
			wantKeys = []string{"durationMs", "faultId", "level", "method", "msg", "namespace", "operationId", "path", "status", "time"}
		}
		if !slices.Equal(keys, wantKeys) {
			t.Fatalf("line %d keys %v, want %v: %s", i, keys, wantKeys, line)
		}
		if got["msg"] != "request" || got["level"] != "INFO" {
			t.Fatalf("line %d: %s", i, line)
		}
		if d, ok := got["durationMs"].(float64); !ok || d < 0 {
			t.Fatalf("line %d durationMs: %s", i, line)
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Fatalf("line %d %s = %v, want %v: %s", i, k, got[k], v, line)
			}
		}
	}
}

// Without LogRequests nothing is logged per request.
func TestRequestLogOff(t *testing.T) {
	var buf logBuffer
	x := newH(t, emulator.Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	x.start()
	x.get("/missing")
	if s := buf.String(); s != "" {
		t.Fatalf("logged without LogRequests: %s", s)
	}
}

var promDurationLine = regexp.MustCompile(`(?m)^hermes_emulator_request_duration_ms_total [0-9.e+-]+$`)

// GET /__admin/metrics in the Prometheus text format: ?format=prometheus or an
// Accept naming text/plain (not application/json); JSON otherwise (controls
// §9 unchanged); admin key and x-mockingbird as for every control route.
func TestMetricsPrometheus(t *testing.T) {
	x := newH(t, emulator.Options{AdminKey: "k"})
	admin := []string{"X-Mockingbird-Admin-Key", "k"}
	x.want(x.post("/__admin/clock", `{"set":1700000000000,"freeze":true}`, admin...), 200, "")
	x.start()
	x.start()
	x.want(x.get("/v1/runs/missing"), 404, "")
	x.want(x.post("/__admin/faults", `{"id":"f","operationId":"RunGet","status":503,"count":1}`, admin...), 201, "")
	x.want(x.get("/v1/runs/"+run1), 503, "")
	x.want(x.get("/missing"), 404, "")
	x.want(x.do("PUT", `/a"b`, ""), 404, "")

	const want = `# HELP hermes_emulator_faults_total Vendor requests journaled with a faultId.
# TYPE hermes_emulator_faults_total counter
hermes_emulator_faults_total 1
# HELP hermes_emulator_request_duration_ms_total Sum of the journaled request durations in milliseconds (each rounded to 2 decimals).
# TYPE hermes_emulator_request_duration_ms_total counter
hermes_emulator_request_duration_ms_total D
# HELP hermes_emulator_requests_total Journaled vendor requests by operationId ((unmatched) when none matched) and status (0 = connection dropped).
# TYPE hermes_emulator_requests_total counter
hermes_emulator_requests_total{operation="(unmatched)",status="404"} 2
hermes_emulator_requests_total{operation="RunCreate",status="202"} 2
hermes_emulator_requests_total{operation="RunGet",status="404"} 1
hermes_emulator_requests_total{operation="RunGet",status="503"} 1
# HELP hermes_emulator_unmatched_requests_total Vendor requests that matched no operation, by method and raw path.
# TYPE hermes_emulator_unmatched_requests_total counter
hermes_emulator_unmatched_requests_total{method="GET",path="/missing"} 1
hermes_emulator_unmatched_requests_total{method="PUT",path="/a%22b"} 1
`
	for _, tt := range []struct {
		path string
		hdr  []string
	}{
		{"/__admin/metrics?format=prometheus", nil},
		{"/__admin/metrics", []string{"Accept", "text/plain"}},
		{"/__admin/metrics", []string{"Accept", "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"}},
		{"/ns/a/__admin/metrics?format=prometheus", nil},
	} {
		r := x.get(tt.path, append(tt.hdr, admin...)...)
		got := promDurationLine.ReplaceAllString(string(r.Body), "hermes_emulator_request_duration_ms_total D")
		if r.Status != 200 || got != want {
			t.Fatalf("GET %s %v: %d\n%s\nwant\n%s", tt.path, tt.hdr, r.Status, r.Body, want)
		}
		if ct := r.Header.Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
			t.Fatalf("Content-Type = %q", ct)
		}
		if !strings.HasPrefix(r.Header.Get("X-Mockingbird"), "hermes@") {
			t.Fatalf("x-mockingbird: %v", r.Header)
		}
	}
	// JSON stays the default, and wins when both are acceptable.
	for _, hdr := range [][]string{nil, {"Accept", "*/*"}, {"Accept", "application/json, text/plain"}, {"Accept", "application/json"}} {
		r := x.get("/__admin/metrics?format=json", append(hdr, admin...)...)
		if r.Status != 200 || r.Header.Get("Content-Type") != "application/json" || !strings.HasPrefix(r.String(), `{"requests":6,"byOperation":{"(unmatched) 404":2,`) {
			t.Fatalf("Accept %v: %d %s %s", hdr, r.Status, r.Header.Get("Content-Type"), r.Body)
		}
	}
	// The admin key gates the Prometheus form too; the error is the JSON admin envelope.
	r := x.get("/__admin/metrics?format=prometheus", "Accept", "text/plain")
	x.want(r, 401, adminErr("missing or wrong x-mockingbird-admin-key"))
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("401 Content-Type = %q", ct)
	}

	// Server.Metrics registers on an application's registry.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(x.srv.Metrics())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, mf := range families {
		if mf.GetName() == "hermes_emulator_requests_total" {
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	if total != 6 {
		t.Fatalf("requests_total sums to %v, want 6", total)
	}

	// DELETE /__admin/metrics zeroes the exported counters.
	x.want(x.do("DELETE", "/__admin/metrics", "", admin...), 200, `{"status":"ok"}`)
	r = x.get("/__admin/metrics?format=prometheus", admin...)
	if strings.Contains(r.String(), "hermes_emulator_requests_total{") || !strings.Contains(r.String(), "\nhermes_emulator_faults_total 0\n") {
		t.Fatalf("after DELETE:\n%s", r.Body)
	}
}

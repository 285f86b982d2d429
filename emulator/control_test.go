package emulator_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// Acceptance section M (namespaces, reset, journal, metrics, admin; controls.md
// §1–§5, §7, §9) and the x-mockingbird header of runs-api §3 step 12, through
// the full HTTP stack.

const (
	runA1 = "run_4a3033333169443477756e7a31375069" // namespace a, n = 1 (runs-api §12.1)
	runA2 = "run_6f51585a75386c6f5439513977657968" // namespace a, n = 2
	runB1 = "run_43436d49743878746c77354658534665" // namespace b, n = 1
)

// ctlEntries decodes the entries of GET /__admin/requests<query> (namespace
// from the harness), in journal order.
func ctlEntries(x *h, query string) []map[string]any {
	x.t.Helper()
	r := x.get("/__admin/requests" + query)
	x.want(r, 200, "")
	var body struct {
		Size     int              `json:"size"`
		Requests []map[string]any `json:"requests"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		x.t.Fatalf("journal: %v: %s", err, r.Body)
	}
	return body.Requests
}

// ctlClock reads the controlled clock's now.
func ctlClock(x *h, r res) float64 {
	x.t.Helper()
	x.want(r, 200, "")
	var c struct {
		Now    float64 `json:"now"`
		Frozen bool    `json:"frozen"`
	}
	if err := json.Unmarshal(r.Body, &c); err != nil {
		x.t.Fatalf("clock: %v: %s", err, r.Body)
	}
	return c.Now
}

// acceptance 166
func TestControlHealth(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.ns = "a"
	r := x.get("/health")
	x.want(r, 200, "")
	shape := regexp.MustCompile(`^\{"status":"ok","service":"hermes","uptimeMs":\d+,"clock":\{"now":\d+(\.\d+)?,"frozen":false,"offsetMs":0\},"namespaces":0\}$`)
	if !shape.Match(r.Body) {
		t.Fatalf("health body %s", r.Body)
	}
	if got := r.Header.Get("X-Mockingbird"); got != "hermes@0.0.0-dev; ns=a" {
		t.Fatalf("x-mockingbird = %q", got)
	}
	// Frozen, the clock part is exact; only the exact path with GET is health
	// (controls §2), the rest are vendor 404s, which create nothing: routing
	// comes before history selection (hardening H2, H3).
	x.ns = ""
	x.freeze()
	for _, c := range [][2]string{{"POST", "/health"}, {"GET", "/health/"}} {
		x.want(x.do(c[0], c[1], ""), 404, `{"message":"page not found"}`)
	}
	shape = regexp.MustCompile(`^\{"status":"ok","service":"hermes","uptimeMs":\d+,"clock":\{"now":1700000000000,"frozen":true,"offsetMs":-?\d+(\.\d+)?(e[-+]\d+)?\},"namespaces":0\}$`)
	if r := x.get("/health"); r.Status != 200 || !shape.Match(r.Body) {
		t.Fatalf("health %d %s", r.Status, r.Body)
	}
}

// acceptance 167
func TestControlBadNamespace(t *testing.T) {
	x := newH(t, emulator.Options{})
	for _, c := range [][2]string{{"POST", "/v1/runs"}, {"GET", "/v1/runs/x"}, {"POST", "/v1/runs/x/stop"}, {"GET", "/v1/runs/x/events"},
		{"POST", "/v1/runs/x/approval"}, {"POST", "/v1/runs/x/steer"}, {"GET", "/v1/capabilities"}, {"GET", "/missing"}} {
		r := x.do(c[0], c[1], `{"input":"synthetic"}`, "X-Mockingbird-Namespace", "bad name")
		x.want(r, 400, adminErr("x-mockingbird-namespace must match /^[A-Za-z0-9_.-]{1,64}$/"))
		if got := r.Header.Get("X-Mockingbird"); got != "hermes@0.0.0-dev" {
			t.Fatalf("%v: x-mockingbird = %q", c, got)
		}
	}
	// Recorded under the raw name (controls §7).
	x.ns = "bad name"
	if got := len(ctlEntries(x, "?namespace=bad%20name")); got != 8 {
		t.Fatalf("journal of the raw name has %d entries", got)
	}
}

// acceptance 168
func TestControlResetNamespace(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.want(x.post("/__admin/faults", `{"operationId":"RunSteer","status":500,"namespace":"nowhere"}`), 201, "")
	x.ns = "a"
	if id := x.start(); id != runA1 {
		t.Fatalf("a: %s", id)
	}
	x.start()
	x.ns = "b"
	if id := x.start(); id != runB1 {
		t.Fatalf("b: %s", id)
	}
	x.ns = ""
	faults := x.get("/__admin/faults")
	clock := ctlClock(x, x.get("/__admin/clock"))
	x.want(x.post("/__admin/reset?namespace=a", ""), 200, `{"status":"ok","reset":["a"]}`)
	x.ns = "a"
	x.want(x.get("/v1/runs/"+runA1), 404, hermesErr("Run not found: "+runA1, "run_not_found"))
	x.want(x.get("/v1/runs/"+runA2), 404, hermesErr("Run not found: "+runA2, "run_not_found"))
	x.ns = "b"
	x.want(x.get("/v1/runs/"+runB1), 200, "")
	x.ns = ""
	x.want(x.get("/__admin/faults"), 200, string(faults.Body))
	if now := ctlClock(x, x.get("/__admin/clock")); now != clock || !strings.Contains(string(x.get("/__admin/clock").Body), `"frozen":true`) {
		t.Fatalf("clock changed by reset: %v → %v", clock, now)
	}
	// Both journals keep their entries: a has 2 starts + 2 polls, b 1 start + 1 poll.
	for ns, n := range map[string]int{"a": 4, "b": 2} {
		if got := len(ctlEntries(x, "?namespace="+ns)); got != n {
			t.Fatalf("journal %s: %d entries, want %d", ns, got, n)
		}
	}
	x.ns = "a"
	if id := x.start(); id != runA1 {
		t.Fatalf("first id after reset = %s, want %s", id, runA1)
	}
}

// acceptance 169
func TestControlResetAll(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.ns = "b"
	x.start()
	x.ns = "a"
	x.start()
	x.ns = ""
	x.want(x.post("/__admin/checkpoints?namespace=c", ""), 201, "")
	x.want(x.get("/__admin/namespaces"), 200, `{"default":"default","namespaces":["a","b","c"]}`)
	x.want(x.post("/__admin/reset?all=1", ""), 200, `{"status":"ok","reset":["a","b","c"]}`)
	// Reset does not un-create (controls §4.1).
	x.want(x.get("/__admin/namespaces"), 200, `{"default":"default","namespaces":["a","b","c"]}`)
	x.ns = "a"
	x.want(x.get("/v1/runs/"+runA1), 404, hermesErr("Run not found: "+runA1, "run_not_found"))
}

// acceptance 170
func TestControlJournalPrivacy(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.want(x.post("/v1/runs?token=synthetic-query-secret", `{"input":"synthetic-body-prompt","instructions":"synthetic-result-text"}`,
		"Authorization", "Bearer synthetic-header-secret"), 202, `{"run_id":"`+run1+`","status":"started","replayed":false}`)
	r := x.get("/__admin/requests")
	x.want(r, 200, "")
	want := `{"size":1000,"requests":[` + fltEntry("RunCreate", "POST", "/v1/runs", 202, `"ids":{"runId":"`+run1+`"},"accepted":true,"checkpoint":"cp_00000002"`) + `]}`
	if got := durationMs.ReplaceAllString(string(r.Body), `"durationMs":0`); got != want {
		t.Fatalf("journal\n got %s\nwant %s", got, want)
	}
	for _, secret := range []string{"synthetic-query-secret", "synthetic-header-secret", "synthetic-body-prompt", "synthetic-result-text"} {
		if strings.Contains(string(r.Body), secret) {
			t.Fatalf("journal contains %q: %s", secret, r.Body)
		}
	}
}

// acceptance 171
func TestControlJournalPrivacyAllValues(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.ns = "p"
	id := x.start("Idempotency-Key", "synthetic-idem-key", "X-Hermes-Session-Key", "synthetic-memory-key")
	x.want(x.observe(id, `{"status":"waiting_for_approval","approval":{"command":"synthetic-command"}}`), 200, "")
	x.want(x.post("/v1/runs/"+id+"/approval", `{"choice":" ALWAYS "}`), 200,
		`{"object":"hermes.run.approval_response","run_id":"`+id+`","choice":"always","resolved":1}`)
	x.want(x.post("/v1/runs/"+id+"/steer", `{"input":"synthetic-steer-text"}`), 200,
		`{"object":"hermes.run.steer","run_id":"`+id+`","accepted":true}`)
	x.want(x.observe(id, `{"status":"completed","output":"synthetic-observe-output"}`), 200, "")
	r := x.get("/v1/runs/" + id)
	x.want(r, 200, "")
	if !strings.Contains(string(r.Body), "synthetic-observe-output") || !strings.Contains(string(r.Body), "synthetic-steer-text") {
		t.Fatalf("record %s", r.Body) // the values did pass through vendor responses
	}
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "synthetic-idem-key", "X-Hermes-Session-Key", "synthetic-memory-key"), 202, "")
	x.ns = ""
	j := x.get("/__admin/requests?all=1")
	x.want(j, 200, "")
	if n := len(ctlEntries(x, "?all=1")); n != 5 { // start, approval, steer, poll, replay
		t.Fatalf("journal has %d entries: %s", n, j.Body)
	}
	for _, secret := range []string{"synthetic-steer-text", "always", "ALWAYS", "synthetic-memory-key", "synthetic-idem-key", "synthetic-observe-output", "synthetic-command"} {
		if strings.Contains(string(j.Body), secret) {
			t.Fatalf("journal contains %q: %s", secret, j.Body)
		}
	}
}

// acceptance 172
func TestControlJournalRequestMeta(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.want(x.post("/v1/runs", `{`, "Content-Type", "text/plain"), 400, hermesErr("Invalid JSON", ""))
	e := ctlEntries(x, "")
	if len(e) != 1 {
		t.Fatalf("%d entries", len(e))
	}
	b, _ := json.Marshal(e[0]["request"])
	sameJSON(t, b, `{"contentType":"text/plain","bodyBytes":1,"transferEncoding":null}`)
	if e[0]["operationId"] != "RunCreate" || e[0]["status"] != float64(400) {
		t.Fatalf("entry %v", e[0])
	}
	// A success carries no request object.
	x.start()
	if e := ctlEntries(x, ""); len(e) != 2 || e[1]["request"] != nil {
		t.Fatalf("entries %v", e)
	}
}

// acceptance 173
func TestControlJournalQuery(t *testing.T) {
	x := newH(t, emulator.Options{})
	for _, c := range [][2]string{
		{"?status=abc", "status: expected an HTTP status"},
		{"?status=20", "status: expected an HTTP status"},
		{"?limit=x", "limit: expected a count"},
		{"?since=yesterday", "since: expected epoch ms or ISO-8601"},
		{"?since=yesterday&status=abc", "since: expected epoch ms or ISO-8601"}, // since is checked first
	} {
		x.want(x.get("/__admin/requests"+c[0]), 400, adminErr(c[1]))
	}
	id := x.start()
	x.get("/v1/runs/" + id)
	x.get("/v1/runs/missing")
	e := ctlEntries(x, "?limit=1")
	if len(e) != 1 || e[0]["path"] != "/v1/runs/missing" || e[0]["status"] != float64(404) {
		t.Fatalf("limit=1: %v", e)
	}
	if e := ctlEntries(x, "?limit=0"); len(e) != 3 {
		t.Fatalf("limit=0: %d entries", len(e))
	}
	if e := ctlEntries(x, "?status=200"); len(e) != 1 || e[0]["path"] != "/v1/runs/"+id {
		t.Fatalf("status=200: %v", e)
	}
	if e := ctlEntries(x, "?operationId=RunCreate"); len(e) != 1 {
		t.Fatalf("operationId: %v", e)
	}
	if e := ctlEntries(x, "?since=2999-01-01"); len(e) != 0 {
		t.Fatalf("since future: %v", e)
	}
	x.want(x.do("DELETE", "/__admin/requests", ""), 200, `{"status":"ok"}`)
	if e := ctlEntries(x, ""); len(e) != 0 {
		t.Fatalf("after delete: %v", e)
	}
}

// acceptance 174
func TestControlUnmatched(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.want(x.get("/missing"), 404, `{"message":"page not found"}`)
	want := `{"size":1000,"requests":[` + fltEntry("", "GET", "/missing", 404, `"request":{"contentType":null,"bodyBytes":null,"transferEncoding":null}`) + `]}`
	if got := fltJournal(x, ""); got != want {
		t.Fatalf("journal\n got %s\nwant %s", got, want)
	}
	if got := fltMetrics(x); got != `{"requests":1,"byOperation":{"(unmatched) 404":1},"unmatched":[{"method":"GET","path":"/missing","count":1}],"faults":0,"totalDurationMs":0}` {
		t.Fatalf("metrics %s", got)
	}
}

// acceptance 175
func TestControlMetrics(t *testing.T) {
	x := newH(t, emulator.Options{})
	id := x.start()
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":500,"count":1}`), 201, "")
	x.want(x.get("/v1/runs/"+id), 500, `{"detail":"Injected by Mockingbird"}`)
	x.get("/__admin/clock") // control requests are never counted
	if got := fltMetrics(x); got != `{"requests":2,"byOperation":{"RunCreate 202":1,"RunGet 500":1},"unmatched":[],"faults":1,"totalDurationMs":0}` {
		t.Fatalf("metrics %s", got)
	}
	x.want(x.do("DELETE", "/__admin/metrics", ""), 200, `{"status":"ok"}`)
	x.want(x.get("/__admin/metrics"), 200, `{"requests":0,"byOperation":{},"unmatched":[],"faults":0,"totalDurationMs":0}`)
}

// acceptance 176
func TestControlAdminKey(t *testing.T) {
	x := newH(t, emulator.Options{AdminKey: "s"})
	for _, hdr := range [][]string{nil, {"X-Mockingbird-Admin-Key", "S"}, {"X-Mockingbird-Admin-Key", "ss"}, {"X-Mockingbird-Admin-Key", ""}} {
		r := x.get("/__admin/clock", hdr...)
		x.want(r, 401, adminErr("missing or wrong x-mockingbird-admin-key"))
		if got := r.Header.Get("X-Mockingbird"); got != "hermes@0.0.0-dev; ns=default" {
			t.Fatalf("x-mockingbird = %q", got)
		}
	}
	// Checked before route matching.
	x.want(x.get("/__admin/nope"), 401, adminErr("missing or wrong x-mockingbird-admin-key"))
	x.want(x.get("/__admin/clock", "X-Mockingbird-Admin-Key", "s"), 200, "")
	x.want(x.post("/__admin/clock", `{"advance":1}`, "X-Mockingbird-Admin-Key", "s"), 200, "")
	x.want(x.get("/health"), 200, "")
	x.start()
	x.want(x.get("/v1/runs/"+run1), 200, "")
	x.want(x.get("/v1/capabilities"), 200, "")
}

// acceptance 177
func TestControlAdminErrors(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.want(x.get("/__admin/nope"), 404, adminErr("no admin route GET /nope; GET /__admin lists them"))
	x.want(x.do("DELETE", "/__admin/clock", ""), 404, adminErr("no admin route DELETE /clock; GET /__admin lists them"))
	x.want(x.post("/__admin", ""), 404, adminErr("no admin route POST /; GET /__admin lists them"))
	x.want(x.post("/__admin/clock", `{`), 400, adminErr("request body is not valid JSON"))
	// Empty segments are ignored on both sides (controls §1).
	x.want(x.get("/__admin//clock/"), 200, "")
}

// acceptance 178 (controls §3), with the routes of admin.yaml: the 32 of the
// seed package plus the runs listing and view, the change stream, the journal
// count and the contract itself; each with its operationId and summary.
func TestControlRouteIndex(t *testing.T) {
	x := newH(t, emulator.Options{})
	keys := []string{"DELETE /credentials", "DELETE /faults", "DELETE /hermes/scenarios", "DELETE /metrics", "DELETE /requests", "DELETE /snapshots/:id",
		"GET /", "GET /clock", "GET /credentials", "GET /faults", "GET /faults/presets", "GET /hermes/drain",
		"GET /hermes/runs", "GET /hermes/runs/:id", "GET /hermes/scenarios", "GET /metrics",
		"GET /namespaces", "GET /openapi.yaml", "GET /requests", "GET /stream", "GET /timeline", "POST /branches/:name", "POST /branches/:name/checkout",
		"POST /checkpoints", "POST /clock", "POST /faults", "POST /faults/presets/:name", "POST /hermes/drain",
		"POST /hermes/restart", "POST /hermes/runs/:id/events", "POST /hermes/runs/:id/observe",
		"POST /hermes/runs/:id/steer/deliver", "POST /hermes/scope", "POST /hermes/sweep", "POST /requests/count", "POST /reset",
		"POST /snapshots", "POST /snapshots/:id/restore", "PUT /credentials", "PUT /hermes/scenarios"}
	if len(keys) != 40 {
		t.Fatalf("%d keys", len(keys))
	}
	for _, path := range []string{"/__admin", "/__admin/"} {
		r := x.get(path)
		x.want(r, 200, "")
		var body struct {
			Service    string   `json:"service"`
			Routes     []string `json:"routes"`
			Operations []struct {
				Route, OperationID, Summary string
			} `json:"operations"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if body.Service != "hermes" || strings.Join(body.Routes, ",") != strings.Join(keys, ",") || len(body.Operations) != len(keys) {
			t.Fatalf("index %s", r.Body)
		}
		for i, op := range body.Operations {
			if op.Route != keys[i] || op.OperationID == "" || op.Summary == "" {
				t.Fatalf("operation %d: %+v", i, op)
			}
		}
	}
	x.want(x.get("/__admin/clock"), 200, "")
	r := x.get("/__admin")
	if want := `{"route":"GET /clock","operationId":"ClockGet","summary":"Read the global controlled clock"}`; !strings.Contains(string(r.Body), want) {
		t.Fatalf("index lacks %s: %s", want, r.Body)
	}
}

// acceptance 179
func TestControlClockErrors(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	if now := ctlClock(x, x.post("/__admin/clock", `{"advance":"90s"}`)); now != 1700000090000 {
		t.Fatalf("now = %v", now)
	}
	for _, c := range [][2]string{
		{`{"advance":"bad"}`, `advance: expected ms or "15m"-style`},
		{`{"set":"nope"}`, "set: expected epoch ms or ISO-8601"},
		{`[]`, "expected a JSON object"},
		{``, "expected a JSON object"},
	} {
		x.want(x.post("/__admin/clock", c[0]), 400, adminErr(c[1]))
	}
	if now := ctlClock(x, x.get("/__admin/clock")); now != 1700000090000 {
		t.Fatalf("now = %v after errors", now)
	}
	// Fields before an error stay applied (controls §5).
	x.want(x.post("/__admin/clock", `{"set":1700000000000,"advance":"x"}`), 400, adminErr(`advance: expected ms or "15m"-style`))
	if now := ctlClock(x, x.get("/__admin/clock")); now != 1700000000000 {
		t.Fatalf("now = %v after a partial request", now)
	}
	for _, c := range []struct {
		body string
		now  float64
	}{
		{`{"advance":"15m"}`, 1700000900000},
		{`{"advance":" -2h "}`, 1699993700000},
		{`{"set":"2023-11-14T22:13:20Z"}`, 1700000000000},
		{`{"advance":"1.5s"}`, 1700000001500},
		{`{"set":"2023-11-15"}`, 1700006400000},
		{`{"advance":86400001}`, 1700092800001},
	} {
		if now := ctlClock(x, x.post("/__admin/clock", c.body)); now != c.now {
			t.Fatalf("%s: now = %v, want %v", c.body, now, c.now)
		}
	}
}

// acceptance 180
func TestControlClockFreeze(t *testing.T) {
	x := newH(t, emulator.Options{})
	t0 := ctlClock(x, x.post("/__admin/clock", `{"freeze":true}`))
	time.Sleep(20 * time.Millisecond)
	if now := ctlClock(x, x.get("/__admin/clock")); now != t0 {
		t.Fatalf("frozen clock moved: %v → %v", t0, now)
	}
	if now := ctlClock(x, x.post("/__admin/clock", `{"advance":1000}`)); now != t0+1000 {
		t.Fatalf("advance: %v, want %v", now, t0+1000)
	}
	r := x.post("/__admin/clock", `{"freeze":false}`)
	t1 := ctlClock(x, r)
	if t1 < t0+1000 || t1 > t0+1000+60000 || strings.Contains(string(r.Body), `"frozen":true`) {
		t.Fatalf("unfreeze: %s (frozen at %v)", r.Body, t0+1000)
	}
	time.Sleep(20 * time.Millisecond)
	if t2 := ctlClock(x, x.get("/__admin/clock")); t2 <= t1 {
		t.Fatalf("live clock did not move: %v → %v", t1, t2)
	}
}

// runs-api §3 step 12, controls §12, wire.md §8: every response — vendor,
// fault, admin, health, errors — carries x-mockingbird: hermes@<version>; ns=<ns>,
// without "; ns=" when the namespace is invalid.
func TestEveryResponseStamped(t *testing.T) {
	for _, inproc := range []bool{false, true} {
		x := newH(t, emulator.Options{MaxBodyBytes: 100})
		x.inproc = inproc
		x.want(x.post("/__admin/faults", `{"operationId":"CapabilitiesGet","status":500,"count":1}`), 201, "")
		x.want(x.post("/__admin/faults", `{"operationId":"RunStop","status":503,"body":null,"count":1}`), 201, "")
		id := x.start()
		x.want(x.observe(id, `{"status":"completed"}`), 200, "")
		const v = "hermes@0.0.0-dev"
		for _, c := range []struct {
			name, method, path, body string
			hdr                      []string
			status                   int
			want                     string
		}{
			{"RunCreate 202", "POST", "/v1/runs", `{"input":"synthetic"}`, nil, 202, v + "; ns=default"},
			{"RunCreate 202 ns header", "POST", "/v1/runs", `{"input":"synthetic"}`, []string{"X-Mockingbird-Namespace", "a"}, 202, v + "; ns=a"},
			{"RunCreate 202 ns prefix", "POST", "/ns/c/v1/runs", `{"input":"synthetic"}`, nil, 202, v + "; ns=c"},
			{"header beats prefix", "GET", "/ns/c/v1/capabilities", "", []string{"X-Mockingbird-Namespace", "d"}, 200, v + "; ns=d"},
			{"RunGet 200", "GET", "/v1/runs/" + id, "", nil, 200, v + "; ns=default"},
			{"RunGet 404", "GET", "/v1/runs/missing", "", nil, 404, v + "; ns=default"},
			{"RunEvents 200 (SSE)", "GET", "/v1/runs/" + id + "/events", "", nil, 200, v + "; ns=default"},
			{"RunStop fault null body", "POST", "/v1/runs/" + id + "/stop", "", nil, 503, v + "; ns=default"},
			{"RunStop 200", "POST", "/v1/runs/" + id + "/stop", "", nil, 200, v + "; ns=default"},
			{"RunCreate 400", "POST", "/v1/runs", `{`, nil, 400, v + "; ns=default"},
			{"RunCreate 413", "POST", "/v1/runs", `{"input":"` + strings.Repeat("x", 200) + `"}`, nil, 413, v + "; ns=default"},
			{"RunCreate 501", "POST", "/v1/runs", `[]`, nil, 501, v + "; ns=default"},
			{"page not found", "GET", "/missing", "", nil, 404, v + "; ns=default"},
			{"fault response", "GET", "/v1/capabilities", "", nil, 500, v + "; ns=default"},
			{"unknown checkpoint 409", "GET", "/v1/capabilities", "", []string{"X-Mockingbird-At", "cp_00000099"}, 409, v + "; ns=default"},
			{"bad branch 400", "GET", "/v1/capabilities", "", []string{"X-Mockingbird-Branch", "a b"}, 400, v + "; ns=default"},
			{"bad namespace 400", "GET", "/v1/capabilities", "", []string{"X-Mockingbird-Namespace", "a b"}, 400, v},
			{"health", "GET", "/health", "", nil, 200, v + "; ns=default"},
			{"health ns prefix", "GET", "/ns/z/health", "", nil, 200, v + "; ns=z"},
			{"admin 200", "GET", "/__admin/clock", "", nil, 200, v + "; ns=default"},
			{"admin 200 ns header", "GET", "/__admin/clock", "", []string{"X-Mockingbird-Namespace", "a"}, 200, v + "; ns=a"},
			{"admin ?namespace= is not the header namespace", "GET", "/__admin/timeline?namespace=q", "", nil, 200, v + "; ns=default"},
			{"admin ns prefix", "GET", "/ns/z/__admin/timeline", "", nil, 200, v + "; ns=z"},
			{"admin 201", "POST", "/__admin/checkpoints", "", nil, 201, v + "; ns=default"},
			{"Hermes control 200", "POST", "/__admin/hermes/sweep", "{}", nil, 200, v + "; ns=default"},
			{"Hermes control 404", "POST", "/__admin/hermes/runs/missing/observe", `{"status":"running"}`, nil, 404, v + "; ns=default"},
			{"admin 404", "GET", "/__admin/nope", "", nil, 404, v + "; ns=default"},
			{"admin 400", "POST", "/__admin/clock", "[]", nil, 400, v + "; ns=default"},
			{"admin 413", "POST", "/__admin/clock", `{"set":"` + strings.Repeat("x", 200) + `"}`, nil, 413, v + "; ns=default"},
			{"admin bad namespace", "GET", "/__admin/timeline", "", []string{"X-Mockingbird-Namespace", "a b"}, 400, v},
		} {
			r := x.do(c.method, c.path, c.body, c.hdr...)
			if r.Status != c.status {
				t.Fatalf("inproc=%v %s: status %d %s, want %d", inproc, c.name, r.Status, r.Body, c.status)
			}
			if got := r.Header.Values("X-Mockingbird"); len(got) != 1 || got[0] != c.want {
				t.Fatalf("inproc=%v %s: x-mockingbird = %q, want %q", inproc, c.name, got, c.want)
			}
		}
	}
}

// controls §7: the ring keeps --journal-size entries per namespace; size 0 keeps
// nothing but metrics still count; a faulted answer has no request object.
func TestControlJournalSize(t *testing.T) {
	x := newH(t, emulator.Options{JournalSize: 2})
	x.get("/v1/runs/one")
	x.get("/v1/runs/two")
	x.get("/v1/runs/three")
	e := ctlEntries(x, "")
	if len(e) != 2 || e[0]["path"] != "/v1/runs/two" || e[1]["path"] != "/v1/runs/three" {
		t.Fatalf("ring %v", e)
	}
	x.want(x.get("/__admin/requests?limit=1&status=404"), 200, "")
	if !strings.HasPrefix(string(x.get("/__admin/requests").Body), `{"size":2,"requests":[`) {
		t.Fatalf("size")
	}
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":500,"count":1}`), 201, "")
	x.get("/v1/runs/four")
	e = ctlEntries(x, "")
	if _, ok := e[1]["request"]; ok || e[1]["faultId"] != "fault_1" {
		t.Fatalf("faulted entry %v", e[1])
	}

	off := newH(t, emulator.Options{JournalSize: -1})
	off.get("/v1/runs/one")
	off.want(off.get("/__admin/requests"), 200, `{"size":0,"requests":[]}`)
	if got := fltMetrics(off); got != `{"requests":1,"byOperation":{"RunGet 404":1},"unmatched":[],"faults":0,"totalDurationMs":0}` {
		t.Fatalf("metrics %s", got)
	}
}

// controls §7.2 since (epoch ms and ISO-8601, at >= since) and §7.3 DELETE ?all=1.
func TestControlJournalSinceAndClear(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.get("/v1/runs/one")
	x.advance("1000")
	x.ns = "a"
	x.get("/v1/runs/two")
	for _, q := range []string{"?since=1700000001000", "?since=2023-11-14T22:13:21Z", "?since=2023-11-14T22:13:21.000%2B00:00"} {
		if e := ctlEntries(x, q+"&all=1"); len(e) != 1 || e[0]["path"] != "/v1/runs/two" {
			t.Fatalf("%s: %v", q, e)
		}
	}
	if e := ctlEntries(x, "?all=1&since=1700000000000"); len(e) != 2 || e[0]["path"] != "/v1/runs/one" {
		t.Fatalf("all, global order: %v", e)
	}
	x.want(x.do("DELETE", "/__admin/requests", ""), 200, `{"status":"ok"}`) // only a's
	if e := ctlEntries(x, "?all=1"); len(e) != 1 || e[0]["namespace"] != "default" {
		t.Fatalf("after clearing a: %v", e)
	}
	x.want(x.do("DELETE", "/__admin/requests?all=1", ""), 200, `{"status":"ok"}`)
	if e := ctlEntries(x, "?all=1"); len(e) != 0 {
		t.Fatalf("after clearing all: %v", e)
	}
}

// controls §1 and §4.3: an invalid ?namespace= on a state route is a 400; reset
// restarts the timeline at cp_00000001, drops other branches and clears the
// drain flag and the scope.
func TestControlResetState(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.want(x.post("/__admin/reset?namespace=bad%20name", ""), 400, adminErr("x-mockingbird-namespace must match /^[A-Za-z0-9_.-]{1,64}$/"))
	x.want(x.get("/__admin/timeline", "X-Mockingbird-Namespace", "bad name"), 400, adminErr("x-mockingbird-namespace must match /^[A-Za-z0-9_.-]{1,64}$/"))
	x.ns = "a"
	x.start()
	x.start("X-Mockingbird-Branch", "side")
	x.want(x.post("/__admin/hermes/drain", `{"draining":true}`), 200, `{"draining":true,"simulated":true}`)
	x.want(x.post("/__admin/hermes/scope", `{"profile":"p","identity":"i"}`), 200, "")
	x.want(x.post("/__admin/reset", ""), 200, `{"status":"ok","reset":["a"]}`)
	x.want(x.get("/__admin/hermes/drain"), 200, `{"draining":false}`)
	x.want(x.get("/__admin/timeline"), 200, `{"branches":{"main":"cp_00000001"},"checkpoints":[{"id":"cp_00000001","branch":"main","parent":null,"at":1700000000000}]}`)
	// Default scope again: a keyed start is the first run of a.
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 202, `{"run_id":"`+runA1+`","status":"started","replayed":false}`)
}

// controls §5: "reset": true returns to the live wall clock; set accepts the
// ISO-8601 forms; a live clock's set adjusts the offset.
func TestControlClockForms(t *testing.T) {
	x := newH(t, emulator.Options{})
	for _, c := range []struct {
		body string
		now  float64
	}{
		{`{"set":"2023-11-14T22:13:20Z","freeze":true}`, 1700000000000},
		{`{"set":"2023-11-14T23:13:20.1239+01:00"}`, 1700000000123},
		{`{"set":"2023-11-14T22:13"}`, 1699999980000},
		{`{"set":1700000000000.5}`, 1700000000000.5},
	} {
		if now := ctlClock(x, x.post("/__admin/clock", c.body)); now != c.now {
			t.Fatalf("%s: now = %v, want %v", c.body, now, c.now)
		}
	}
	r := x.post("/__admin/clock", `{"reset":true}`)
	if now := ctlClock(x, r); now < 1700000000000+1e10 || !strings.Contains(string(r.Body), `"frozen":false,"offsetMs":0}`) {
		t.Fatalf("reset: %s", r.Body)
	}
	// Live set: the offset moves now to the value, and the clock keeps running.
	if now := ctlClock(x, x.post("/__admin/clock", `{"set":1700000000000}`)); now < 1700000000000 || now > 1700000060000 {
		t.Fatalf("live set: %v", now)
	}
}

package emulator_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	hermesemulator "github.com/hermes-emulator/hermes-emulator"
	"github.com/hermes-emulator/hermes-emulator/admin"
	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// The control plane's views (admin.yaml): the runs listing and view, the
// journal count, the change stream, the served contract and the validator's
// answers — exact statuses and bodies through the full HTTP stack.

// summaryJSON is one RunSummary as GET /__admin/hermes/runs renders it.
func summaryJSON(id, status string, created, updated string, keyed, local, alive bool, approvals, steers, transport string) string {
	b := func(v bool) string {
		if v {
			return "true"
		}
		return "false"
	}
	return `{"run_id":"` + id + `","status":"` + status + `","created_at":` + created + `,"updated_at":` + updated +
		`,"keyed":` + b(keyed) + `,"owner_local":` + b(local) + `,"owner_alive":` + b(alive) +
		`,"pending_approvals":` + approvals + `,"queued_steers":` + steers + `,"transport":"` + transport + `"}`
}

func TestAdminRunsList(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	x.ns = "v"
	a := x.start()
	x.advance("1000")
	b := x.start("Idempotency-Key", "k-1")
	x.advance("1000")
	c := x.start()
	x.want(x.observe(a, `{"status":"completed","output":"done"}`), 200, "")
	x.want(x.observe(b, `{"status":"running"}`), 200, "")
	x.want(x.post("/v1/runs/"+b+"/steer", `{"input":"go left"}`), 200, steerOK(b))

	sa := summaryJSON(a, "completed", "1700000000", "1700000002", false, true, true, "0", "0", "closed")
	sb := summaryJSON(b, "running", "1700000001", "1700000002", true, true, true, "0", "1", "buffering")
	sc := summaryJSON(c, "queued", "1700000002", "1700000002", false, true, true, "0", "0", "buffering")
	x.want(x.get("/__admin/hermes/runs"), 200, `{"runs":[`+sc+`,`+sb+`,`+sa+`]}`)
	first := x.get("/__admin/hermes/runs?limit=2")
	next := first.field(t, "next") // opaque
	x.want(first, 200, `{"runs":[`+sc+`,`+sb+`],"next":"`+next+`"}`)
	x.want(x.get("/__admin/hermes/runs?limit=2&cursor="+url.QueryEscape(next)), 200, `{"runs":[`+sa+`]}`)
	x.want(x.get("/__admin/hermes/runs?status=running"), 200, `{"runs":[`+sb+`]}`)
	x.want(x.get("/__admin/hermes/runs?status=failed"), 200, `{"runs":[]}`)
	x.want(x.get("/__admin/hermes/runs?namespace=empty"), 200, `{"runs":[]}`)

	x.want(x.get("/__admin/hermes/runs?status=done"), 400, adminErr("status: expected a run status"))
	for _, l := range []string{"0", "1001", "x", "", "-1"} {
		x.want(x.get("/__admin/hermes/runs?limit="+l), 400, adminErr("limit: expected a count from 1 to 1000"))
	}
	x.want(x.get("/__admin/hermes/runs?cursor=nope"), 400, adminErr("cursor: expected the next of a previous page"))
	x.want(x.get("/__admin/hermes/runs?namespace=bad%20name"), 400, adminErr("x-mockingbird-namespace must match /^[A-Za-z0-9_.-]{1,64}$/"))
}

func TestAdminRunView(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start("Idempotency-Key", "k-7")
	x.want(x.observe(id, `{"status":"running"}`), 200, "")
	x.want(x.post("/v1/runs/"+id+"/steer", `{"input":"one"}`), 200, steerOK(id))
	x.want(x.post("/v1/runs/"+id+"/steer", `{"input":"two"}`), 200, steerOK(id))
	rec := x.observe(id, `{"status":"waiting_for_approval","approval":{"command":"rm -rf build"}}`)
	x.want(rec, 200, "")
	x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"hi"}]}`), 200, `{"run_id":"`+id+`","emitted":1,"buffered":1,"simulated":true}`)

	v := x.get("/__admin/hermes/runs/" + id)
	x.want(v, 200, "")
	summary := summaryJSON(id, "waiting_for_approval", "1700000000", "1700000000", true, true, true, "1", "2", "buffering")
	record := string(rec.Body)
	approval := record[strings.Index(record, `"approval":`)+len(`"approval":`) : len(record)-1] // the record's last key
	// Buffered: every frame emitted since admission; none was taken.
	want := strings.TrimSuffix(summary, "}") + `,"record":` + record + `,"reservation_keys":["k-7"],"approvals":[` + approval +
		`],"steers":["one","two"],"events_buffered":4,"events_delivered":0,"subscriber":false,"scenario":null}`
	x.want(v, 200, want)
	x.want(x.get("/__admin/hermes/runs/run_missing"), 404, hermesErr("Run not found: run_missing", "run_not_found"))
}

func TestAdminRequestsCount(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.ns = "n"
	id := x.start()
	x.get("/v1/runs/" + id)
	x.get("/v1/runs/missing")
	x.ns = "other"
	x.start()
	x.ns = "n"
	for _, c := range [][2]string{
		{``, `{"count":3}`},
		{`{}`, `{"count":3}`},
		{`{"operationId":"RunGet"}`, `{"count":2}`},
		{`{"method":"post"}`, `{"count":1}`},
		{`{"pathPrefix":"/v1/runs/"}`, `{"count":2}`},
		{`{"status":404}`, `{"count":1}`},
		{`{"operationId":"RunCreate","namespace":"*"}`, `{"count":2}`},
		{`{"namespace":"other"}`, `{"count":1}`},
	} {
		x.want(x.post("/__admin/requests/count", c[0]), 200, c[1])
	}
	for _, c := range [][2]string{
		{`{"status":"404"}`, "status: expected an HTTP status"},
		{`{"status":1000}`, "status: expected an HTTP status"},
		{`{"method":1}`, "method: expected a string"},
		{`{"namespace":null}`, "namespace: expected a string"},
		{`[]`, "expected a JSON object"},
		{`{"body":"x"}`, "unknown field body"},
	} {
		x.want(x.post("/__admin/requests/count", c[0]), 400, adminErr(c[1]))
	}
}

// H6: unknown fields in any control body are refused, naming the field; the
// Hermes controls keep their own pinned answers (controls §11).
func TestAdminUnknownFields(t *testing.T) {
	x := newH(t, emulator.Options{})
	id := x.start()
	for _, c := range []struct{ method, path, body, msg string }{
		{"POST", "/__admin/faults", `{"match":{"path":"/v1/runs"},"status":503}`, "unknown field match"},
		{"POST", "/__admin/faults", `{"status":500,"operationId":"RunGett"}`, "fault field operationId is not an operation of openapi.yaml"},
		{"POST", "/__admin/faults/presets/hermes_throttled", `{"cnt":2}`, "unknown field cnt"},
		{"POST", "/__admin/clock", `{"advance":"1m","frozen":true}`, "unknown field frozen"},
		{"POST", "/__admin/checkpoints", `{"branch":"main","name":"x"}`, "unknown field name"},
		{"POST", "/__admin/branches/b", `{"from":"cp_00000001"}`, "unknown field from"},
		{"POST", "/__admin/branches/b/checkout", `{"checkpoint":"cp_00000001","force":true}`, "unknown field force"},
		{"POST", "/__admin/snapshots", `{"name":"x"}`, "unknown field name"},
		{"POST", "/__admin/hermes/sweep", `{"now":true}`, "unknown field now"},
		{"POST", "/__admin/hermes/runs/" + id + "/steer/deliver", `{"all":true}`, "unknown field all"},
		{"POST", "/__admin/requests/count", `{"path":"/v1"}`, "unknown field path"},
	} {
		x.want(x.do(c.method, c.path, c.body), 400, adminErr(c.msg))
	}
	// Nothing was stored by the refused rules.
	x.want(x.get("/__admin/faults"), 200, `{"faults":[]}`)
	x.want(x.post("/__admin/hermes/runs/"+id+"/observe", `{"status":"running","run_id":"x"}`), 400, hermesErr("observe: unsupported field", ""))
	x.want(x.post("/__admin/hermes/drain", `{"draining":true,"x":1}`), 400, hermesErr(`drain: expected {"draining": true} or {"draining": false}`, ""))
}

func TestAdminContractServed(t *testing.T) {
	x := newH(t, emulator.Options{AdminKey: "k"})
	x.want(x.get("/__admin/openapi.yaml"), 401, adminErr("missing or wrong x-mockingbird-admin-key"))
	r := x.get("/__admin/openapi.yaml", "X-Mockingbird-Admin-Key", "k")
	x.want(r, 200, string(hermesemulator.AdminAPI))
	if ct := r.Header.Get("Content-Type"); ct != "application/yaml" {
		t.Fatalf("Content-Type %q", ct)
	}
	x.want(x.get("/__admin/clock", "X-Mockingbird-Admin-Key", "kk"), 401, adminErr("missing or wrong x-mockingbird-admin-key"))
}

// GET /__admin/stream: one frame per change, in order, for the admin
// namespace; clock moves for everyone.
func TestAdminStream(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", x.srv.URL()+"/__admin/stream?namespace=s", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	x.ns = "other"
	x.start() // not for this subscriber
	x.ns = "s"
	id := x.start()
	x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"hi"}]}`), 200, "")
	x.advance("1000")
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":503,"count":1}`), 201, "")
	x.want(x.get("/v1/runs/"+id), 503, "")
	// The namespace's first checkpoint (its timeline's start) may come
	// before or after the first admission: it is skipped.
	want := []string{
		`event: run.created`, `data: {"kind":"run.created","namespace":"s","branch":"main","run_id":"` + id + `","status":"queued"}`,
		`event: checkpoint`, `data: {"kind":"checkpoint","namespace":"s","branch":"main","checkpoint":"cp_00000002"}`,
		`event: run.event`, `data: {"kind":"run.event","namespace":"s","branch":"main","run_id":"` + id + `","event":{"event":"message.delta","run_id":"` + id + `","timestamp":1700000000.0,"delta":"hi"}}`,
		`event: checkpoint`, `data: {"kind":"checkpoint","namespace":"s","branch":"main","checkpoint":"cp_00000003"}`,
		`event: clock`, `data: {"kind":"clock","clock":{"now":1700000001000,"frozen":true,"offsetMs":`,
		`event: fault`, `data: {"kind":"fault","namespace":"s","fault_id":"fault_1","operation_id":"RunGet","http_status":503}`,
	}
	sc := bufio.NewScanner(resp.Body)
	for i := 0; i < len(want); {
		if !sc.Scan() {
			t.Fatalf("stream ended after %d lines: %v", i, sc.Err())
		}
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		if line == `event: checkpoint` {
			if !sc.Scan() {
				t.Fatal("no data")
			}
			if strings.HasSuffix(sc.Text(), `"checkpoint":"cp_00000001"}`) {
				continue
			}
			if want[i] != line {
				t.Fatalf("line %d: got %s then %s, want %s", i, line, sc.Text(), want[i])
			}
			if i++; sc.Text() != want[i] {
				t.Fatalf("line %d\n got %s\nwant %s", i, sc.Text(), want[i])
			}
			i++
			continue
		}
		if !strings.HasPrefix(line, want[i]) || (i != 9 && line != want[i]) {
			for j := 0; j < 12 && sc.Scan(); j++ {
				t.Log(sc.Text())
			}
			t.Fatalf("line %d\n got %s\nwant %s", i, line, want[i])
		}
		i++
	}
}

// Every answer of the control plane matches admin.yaml (status, Content-Type,
// body schema): a session through every route, successes and errors.
func TestAdminResponsesMatchContract(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start("Idempotency-Key", "k")
	x.ns = "c"
	cid := x.start()
	x.ns = ""
	x.get("/v1/runs/missing")
	seen := map[string]bool{}
	check := func(method, path, body string, hdr ...string) res {
		t.Helper()
		r := x.do(method, path, body, hdr...)
		p, _, _ := strings.Cut(path, "?")
		if err := admin.CheckResponse(method, p, r.Status, r.Header, r.Body); err != nil {
			t.Errorf("%s %s %s: %v", method, path, body, err)
		}
		seen[method+" "+p] = true
		return r
	}
	for _, c := range [][3]string{
		{"GET", "/health", ""}, {"GET", "/__admin", ""}, {"GET", "/__admin/openapi.yaml", ""},
		{"GET", "/__admin/namespaces", ""}, {"GET", "/__admin/clock", ""}, {"POST", "/__admin/clock", `{"advance":"1s"}`},
		{"POST", "/__admin/clock", `{"set":"yesterday"}`}, {"POST", "/__admin/clock", `{"x":1}`},
		{"POST", "/__admin/faults", `{"operationId":"RunSteer","status":500,"headers":{"A":"b"},"body":null,"count":2}`},
		{"POST", "/__admin/faults", `{"preset":"hermes_throttled"}`}, {"POST", "/__admin/faults", `{}`},
		{"GET", "/__admin/faults", ""}, {"DELETE", "/__admin/faults?id=nope", ""}, {"DELETE", "/__admin/faults", ""},
		{"GET", "/__admin/faults/presets", ""}, {"POST", "/__admin/faults/presets/hermes_poll_timeout", `{"count":3}`},
		{"POST", "/__admin/faults/presets/nope", ""},
		{"GET", "/__admin/requests?all=1", ""}, {"GET", "/__admin/requests?limit=1", ""}, {"GET", "/__admin/requests?status=1", ""},
		{"POST", "/__admin/requests/count", `{"status":202}`}, {"DELETE", "/__admin/requests?all=1", ""},
		{"GET", "/__admin/metrics", ""}, {"GET", "/__admin/metrics?format=prometheus", ""}, {"DELETE", "/__admin/metrics", ""},
		{"GET", "/__admin/timeline", ""}, {"POST", "/__admin/checkpoints", `{"branch":"b1"}`}, {"POST", "/__admin/checkpoints", `{"branch":"bad name"}`},
		{"POST", "/__admin/branches/b2", ""}, {"POST", "/__admin/branches/b2", `{"at":"cp_zzzzzzzz"}`},
		{"POST", "/__admin/branches/b2/checkout", `{"checkpoint":"cp_00000002"}`}, {"POST", "/__admin/branches/b2/checkout", `{}`},
		{"POST", "/__admin/snapshots", ""}, {"POST", "/__admin/snapshots/snap_1/restore", ""}, {"POST", "/__admin/snapshots/snap_9/restore", ""},
		{"DELETE", "/__admin/snapshots/snap_1", ""}, {"DELETE", "/__admin/snapshots/snap_1", ""},
		{"PUT", "/__admin/credentials", `{"credentials":{"sk-1":"a"}}`}, {"PUT", "/__admin/credentials", `[5]`},
		{"GET", "/__admin/credentials", ""}, {"DELETE", "/__admin/credentials", ""},
		{"GET", "/__admin/hermes/runs", ""}, {"GET", "/__admin/hermes/runs?limit=0", ""}, {"GET", "/__admin/hermes/runs/" + id, ""},
		{"GET", "/__admin/hermes/runs/nope", ""},
		{"POST", "/__admin/hermes/runs/" + id + "/events", `{"events":[{"event":"tool.started","tool":"t"}]}`},
		{"POST", "/__admin/hermes/runs/" + id + "/events", `{"events":[]}`},
		{"POST", "/__admin/hermes/runs/" + id + "/observe", `{"status":"running"}`},
		{"POST", "/__admin/hermes/runs/nope/observe", `{"status":"running"}`},
		{"POST", "/__admin/hermes/runs/" + id + "/steer/deliver", ""},
		{"GET", "/__admin/hermes/drain", ""}, {"POST", "/__admin/hermes/drain", `{"draining":true}`}, {"POST", "/__admin/hermes/drain", `{}`},
		{"POST", "/__admin/hermes/scope", `{"profile":"p","identity":"i"}`}, {"POST", "/__admin/hermes/scope", `{}`},
		{"POST", "/__admin/hermes/sweep", ""}, {"POST", "/__admin/hermes/restart", `{"owner":"alive"}`},
		{"POST", "/__admin/hermes/restart", `{"owner":"x"}`},
		{"PUT", "/__admin/hermes/scenarios", `{"scenarios":[{"name":"s","steps":[{"after":0,"observe":{"status":"running"}}]}]}`},
		{"PUT", "/__admin/hermes/scenarios", `{"scenarios":[{"name":"s"}]}`}, {"PUT", "/__admin/hermes/scenarios", `{"x":1}`},
		{"GET", "/__admin/hermes/scenarios", ""}, {"DELETE", "/__admin/hermes/scenarios", ""},
		{"POST", "/__admin/reset?namespace=c", ""},
	} {
		check(c[0], c[1], c[2])
	}
	_ = cid
	var missing []string
	for _, k := range admin.RouteKeys() {
		m, p, _ := strings.Cut(k, " ")
		p = "/__admin" + strings.TrimSuffix(p, "/")
		if k == "GET /stream" {
			continue // a stream: TestAdminStream
		}
		found := false
		for s := range seen {
			sm, sp, _ := strings.Cut(s, " ")
			if sm == m && len(strings.Split(sp, "/")) == len(strings.Split(p, "/")) && strings.HasPrefix(sp, strings.Split(p, ":")[0]) {
				found = true
			}
		}
		if !found {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("routes not exercised: %v", missing)
	}
}

// Close ends an open change stream at once instead of waiting for its client.
func TestAdminStreamEndsOnClose(t *testing.T) {
	srv, err := emulator.New(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(srv.URL() + "/__admin/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Close took %v", took)
	}
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatalf("stream did not end cleanly: %v", err)
	}
}

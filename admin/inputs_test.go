package admin

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/credentials"
	"github.com/hermes-emulator/hermes-emulator/faults"
	"github.com/hermes-emulator/hermes-emulator/gateway"
	"github.com/hermes-emulator/hermes-emulator/journal"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// Inputs a handler used to ignore or misread silently: each is now refused
// with a 400 (or the route's 409) and an exact message, and changes nothing.

// fullAdmin returns a control plane over a fresh in-memory gateway and fresh
// stores: every route can run.
func fullAdmin(t *testing.T) *Admin {
	t.Helper()
	gw, err := gateway.New(storage.NewMemory(), gateway.Options{Wall: func() float64 { return 1700000000000 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	return New(Deps{GW: gw, Faults: faults.NewStore(), Journal: journal.New(10), Metrics: &journal.Metrics{},
		Credentials: credentials.NewStore(), MaxBodyBytes: 1 << 20, Version: "test"})
}

// must sends one control request and fails the test unless it answers want.
func must(t *testing.T, a *Admin, method, target, body string, want int) string {
	t.Helper()
	w := adminDo(a, method, target, body)
	if w.Code != want {
		t.Fatalf("%s %s %s: %d %s, want %d", method, target, body, w.Code, w.Body, want)
	}
	return w.Body.String()
}

// controls §1 "Routing": the method must match exactly, else the admin 404.
// Echo answered OPTIONS on a route by itself (204 with an Allow header), and
// put Allow on the 404 of a wrong method: control responses carry
// x-mockingbird and nothing else of ours.
func TestWrongMethodIsNoRoute(t *testing.T) {
	a := fullAdmin(t)
	for _, c := range []struct{ method, target, rel string }{
		{"OPTIONS", "/__admin/clock", "/clock"},
		{"OPTIONS", "/__admin", "/"},
		{"OPTIONS", "/__admin/hermes/runs/r1/observe", "/hermes/runs/r1/observe"},
		{"PATCH", "/__admin/clock", "/clock"},
		{"HEAD", "/__admin/faults", "/faults"},
		{"PUT", "/__admin/faults/presets/hermes_throttled", "/faults/presets/hermes_throttled"},
	} {
		w := adminDo(a, c.method, c.target, "")
		want := adminEnvelope("no admin route " + c.method + " " + c.rel + "; GET /__admin lists them")
		if w.Code != 404 || w.Body.String() != want {
			t.Errorf("%s %s: %d %s, want 404 %s", c.method, c.target, w.Code, w.Body, want)
		}
		if v, ok := w.Header()["Allow"]; ok {
			t.Errorf("%s %s: Allow %q", c.method, c.target, v)
		}
	}
}

// A query parameter the route does not declare is refused, naming it (as an
// unknown body field is, H6): DELETE /__admin/faults?ID=x removed every rule,
// ?statsu=running answered the unfiltered page, and ?all=1 on the count was
// dropped.
func TestUnknownQueryParameter(t *testing.T) {
	a := fullAdmin(t)
	must(t, a, "POST", "/__admin/faults", `{"status":500,"id":"x"}`, 201)
	for _, c := range []struct{ method, target, body, name string }{
		{"DELETE", "/__admin/faults?ID=x", "", "ID"},
		{"GET", "/__admin/hermes/runs?statsu=running", "", "statsu"},
		{"POST", "/__admin/requests/count?all=1", "", "all"},
		{"GET", "/__admin/clock?x=1", "", "x"},
		{"POST", "/__admin/reset?al=1", "", "al"},
		{"DELETE", "/__admin/credentials?cred=a", "", "cred"},
		{"GET", "/__admin/requests?operationid=RunGet&limit=5", "", "operationid"},
		{"GET", "/__admin/metrics?namespace=a&b=1&a=2", "", "a"}, // the first in code-point order
		{"GET", "/__admin/clock?" + strings.Repeat("q", 3000) + "=1", "", strings.Repeat("q", 1024)},
	} {
		w := adminDo(a, c.method, c.target, c.body)
		if want := adminEnvelope("unknown query parameter " + c.name); w.Code != 400 || w.Body.String() != want {
			t.Errorf("%s %s: %d %s, want 400 %s", c.method, c.target, w.Code, w.Body, want)
		}
	}
	if got := faultIDs(t, a.d.Faults); got != "x" {
		t.Fatalf("rules left %q", got)
	}
	if got := must(t, a, "GET", "/__admin/namespaces", "", 200); got != `{"default":"default","namespaces":[]}` {
		t.Fatalf("a refused reset created a namespace: %s", got)
	}
}

// A query parameter given twice is refused: the first value used to count and
// the others to be dropped without a word (?status=200&status=404).
func TestRepeatedQueryParameter(t *testing.T) {
	a := fullAdmin(t)
	must(t, a, "POST", "/__admin/faults", `{"status":500,"id":"x"}`, 201)
	must(t, a, "POST", "/__admin/checkpoints?namespace=n1", "", 201)
	for _, c := range []struct{ method, target, name string }{
		{"GET", "/__admin/requests?status=200&status=404", "status"},
		{"POST", "/__admin/reset?all=1&all=0", "all"},
		{"POST", "/__admin/reset?namespace=n1&namespace=n2", "namespace"},
		{"DELETE", "/__admin/faults?id=x&id=x", "id"},
		{"GET", "/__admin/hermes/runs?limit=1&limit=2", "limit"},
	} {
		w := adminDo(a, c.method, c.target, "")
		if want := adminEnvelope(c.name + ": expected once"); w.Code != 400 || w.Body.String() != want {
			t.Errorf("%s %s: %d %s, want 400 %s", c.method, c.target, w.Code, w.Body, want)
		}
	}
	if got := faultIDs(t, a.d.Faults); got != "x" {
		t.Fatalf("rules left %q", got)
	}
	if got := must(t, a, "GET", "/__admin/namespaces", "", 200); got != `{"default":"default","namespaces":["n1"]}` {
		t.Fatalf("namespaces %s", got)
	}
}

// A query string that does not split into name=value pairs is refused:
// url.ParseQuery drops a pair with a ";" or a bad %-escape, and the route
// read it as absent (?all=1;x=2 reset one namespace, ?namespace=%zz the
// default one).
func TestQueryStringNotValid(t *testing.T) {
	a := fullAdmin(t)
	must(t, a, "POST", "/__admin/faults", `{"status":500,"id":"x"}`, 201)
	for _, c := range []struct{ method, target, msg string }{
		{"POST", "/__admin/reset?all=1;x=2", "query string is not valid: invalid semicolon separator in query"},
		{"POST", "/__admin/reset?namespace=%zz", `query string is not valid: invalid URL escape \"%zz\"`},
		{"DELETE", "/__admin/faults?id=x;y", "query string is not valid: invalid semicolon separator in query"},
	} {
		w := adminDo(a, c.method, c.target, "")
		if want := adminEnvelope(c.msg); w.Code != 400 || w.Body.String() != want {
			t.Errorf("%s %s: %d %s, want 400 %s", c.method, c.target, w.Code, w.Body, want)
		}
	}
	if got := faultIDs(t, a.d.Faults); got != "x" {
		t.Fatalf("rules left %q", got)
	}
}

// A route that declares no request body (every GET and DELETE) takes none:
// `{}` counts as none, an object with fields names the first unknown one,
// anything else is not an empty object. DELETE /__admin/faults with
// {"id":"x"} removed every rule.
func TestBodyOnBodylessRoute(t *testing.T) {
	a := fullAdmin(t)
	must(t, a, "POST", "/__admin/faults", `{"status":500,"id":"x"}`, 201)
	must(t, a, "PUT", "/__admin/credentials", `["abc"]`, 200)
	for _, c := range []struct{ method, target, body, msg string }{
		{"DELETE", "/__admin/faults", `{"id":"x"}`, "unknown field id"},
		{"DELETE", "/__admin/credentials", `{"credential":"abc"}`, "unknown field credential"},
		{"DELETE", "/__admin/requests", `{"all":1}`, "unknown field all"},
		{"GET", "/__admin/clock", `[1]`, "expected {} or no body"},
		{"GET", "/__admin/requests", `{"limit":5}`, "unknown field limit"},
		{"DELETE", "/__admin/hermes/scenarios", `"x"`, "expected {} or no body"},
	} {
		w := adminDo(a, c.method, c.target, c.body)
		if want := adminEnvelope(c.msg); w.Code != 400 || w.Body.String() != want {
			t.Errorf("%s %s %s: %d %s, want 400 %s", c.method, c.target, c.body, w.Code, w.Body, want)
		}
	}
	if got := faultIDs(t, a.d.Faults); got != "x" {
		t.Fatalf("rules left %q", got)
	}
	if got := must(t, a, "GET", "/__admin/credentials", " {} ", 200); got != `{"credentials":[{"credential":"ab…","namespace":"default"}]}` {
		t.Fatalf("credentials %s", got)
	}
}

// The change stream is a GET: a body other than {} is refused before it
// subscribes (it used to stream, the body ignored).
func TestStreamRefusesBody(t *testing.T) {
	a := fullAdmin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r := httptest.NewRequestWithContext(ctx, "GET", "/__admin/stream", strings.NewReader(`{"all":1}`))
	w := httptest.NewRecorder()
	a.ServeHTTP(w, r, "/__admin/stream")
	if want := adminEnvelope("unknown field all"); w.Code != 400 || w.Body.String() != want {
		t.Fatalf("%d %s, want 400 %s", w.Code, w.Body, want)
	}
}

// An empty branch name or checkpoint id in a timeline body is a name or an id
// like any other, not an absent one: {"branch":""} committed on main and
// {"at":""} started the branch from main's current state.
func TestTimelineEmptyNames(t *testing.T) {
	a := fullAdmin(t)
	must(t, a, "POST", "/__admin/checkpoints?namespace=t", "", 201)
	before := must(t, a, "GET", "/__admin/timeline?namespace=t", "", 200)
	for _, c := range []struct{ target, body, msg string }{
		{"/__admin/checkpoints?namespace=t", `{"branch":""}`, "branch must match /^[A-Za-z0-9_.-]{1,64}$/"},
		{"/__admin/branches/b1?namespace=t", `{"at":""}`, "no checkpoint "},
		{"/__admin/branches/b1/checkout?namespace=t", `{"checkpoint":""}`, "no checkpoint "},
		{"/__admin/branches/bad%20name?namespace=t", `{"at":""}`, "branch must match /^[A-Za-z0-9_.-]{1,64}$/"},
	} {
		w := adminDo(a, "POST", c.target, c.body)
		if want := adminEnvelope(c.msg); w.Code != 409 || w.Body.String() != want {
			t.Errorf("%s %s: %d %s, want 409 %s", c.target, c.body, w.Code, w.Body, want)
		}
	}
	if after := must(t, a, "GET", "/__admin/timeline?namespace=t", "", 200); after != before {
		t.Fatalf("the timeline changed:\n%s\n%s", before, after)
	}
	// null still means absent (admin.yaml: nullable).
	if got := must(t, a, "POST", "/__admin/checkpoints?namespace=t", `{"branch":null}`, 201); !strings.Contains(got, `"branch":"main"`) {
		t.Fatalf("branch null: %s", got)
	}
}

// GET /__admin/metrics?format= is prometheus or json: another value answered
// JSON as if absent (?format=prom, ?format=PROMETHEUS); json now also wins
// over an Accept that asks for text.
func TestMetricsFormat(t *testing.T) {
	a := fullAdmin(t)
	for _, f := range []string{"prom", "PROMETHEUS", "text", ""} {
		w := adminDo(a, "GET", "/__admin/metrics?format="+f, "")
		if want := adminEnvelope("format: expected prometheus or json"); w.Code != 400 || w.Body.String() != want {
			t.Errorf("format=%s: %d %s, want 400 %s", f, w.Code, w.Body, want)
		}
	}
	r := httptest.NewRequest("GET", "/__admin/metrics?format=json", nil)
	r.Header.Set("Accept", "text/plain")
	w := httptest.NewRecorder()
	a.ServeHTTP(w, r, "/__admin/metrics")
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || !strings.HasPrefix(w.Body.String(), `{"requests":0,`) {
		t.Fatalf("format=json with Accept text/plain: %d %q %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
}

// POST /__admin/requests/count refuses an operationId that is no operation of
// openapi.yaml: a misspelt one counted 0, so a "never called" check passed.
func TestCountOperationID(t *testing.T) {
	a := fullAdmin(t)
	for _, body := range []string{`{"operationId":"RunCreat"}`, `{"operationId":""}`, `{"operationId":5}`} {
		w := adminDo(a, "POST", "/__admin/requests/count", body)
		if want := adminEnvelope("operationId: expected an operation of openapi.yaml"); w.Code != 400 || w.Body.String() != want {
			t.Errorf("%s: %d %s, want 400 %s", body, w.Code, w.Body, want)
		}
	}
	if got := must(t, a, "POST", "/__admin/requests/count", `{"operationId":"RunCreate"}`, 200); got != `{"count":0}` {
		t.Fatalf("count %s", got)
	}
}

// A fault rule's method must be an HTTP method and its pathPrefix a path
// (starting with /): "G E T" or "v1/runs" stored a rule that never matched.
func TestFaultSelectorsCanMatch(t *testing.T) {
	a := fullAdmin(t)
	for _, c := range []struct{ body, msg string }{
		{`{"status":500,"method":"G E T"}`, "fault field method is not an HTTP method"},
		{`{"status":500,"method":""}`, "fault field method is not an HTTP method"},
		{`{"status":500,"method":"GET "}`, "fault field method is not an HTTP method"},
		{`{"status":500,"pathPrefix":"v1/runs"}`, "fault field pathPrefix must start with /"},
		{`{"status":500,"pathPrefix":"http://x/v1"}`, "fault field pathPrefix must start with /"},
		{`{"status":500,"method":5}`, "fault field method has the wrong type"},
	} {
		for _, target := range []string{"/__admin/faults", "/__admin/faults/presets/hermes_throttled"} {
			w := adminDo(a, "POST", target, c.body)
			if want := adminEnvelope(c.msg); w.Code != 400 || w.Body.String() != want {
				t.Errorf("%s %s: %d %s, want 400 %s", target, c.body, w.Code, w.Body, want)
			}
		}
	}
	if got := faultIDs(t, a.d.Faults); got != "" {
		t.Fatalf("rules stored: %q", got)
	}
	must(t, a, "POST", "/__admin/faults", `{"status":500,"method":"post","pathPrefix":""}`, 201)
	must(t, a, "POST", "/__admin/faults", `{"status":500,"method":"M-SEARCH","pathPrefix":"/v1/runs"}`, 201)
}

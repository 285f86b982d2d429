package admin

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/credentials"
	"github.com/hermes-emulator/hermes-emulator/faults"
	"github.com/hermes-emulator/hermes-emulator/gateway"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// admin.yaml is valid, and the control plane serves exactly its routes: every
// route registered on the Echo server is an operation of admin.yaml and every
// operation is registered; GET /__admin lists them all.
func TestRoutesMatchContract(t *testing.T) {
	c, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := testAdmin()
	var served []string
	for _, r := range a.echo.Routes() {
		served = append(served, r.Method+" "+r.Path)
		if c.op(r.Method, r.Path) == nil {
			t.Errorf("route %s %s is not in admin.yaml", r.Method, r.Path)
		}
	}
	for key, op := range c.ops {
		if !slices.Contains(served, key) {
			t.Errorf("%s (%s) of admin.yaml is not served", key, op.id)
		}
		if op.summary == "" {
			t.Errorf("%s has no summary", op.id)
		}
	}
	if len(c.ops) != 41 || len(c.routes) != 40 { // /health is not under /__admin
		t.Fatalf("%d operations, %d /__admin routes", len(c.ops), len(c.routes))
	}
	w := adminDo(a, "GET", "/__admin", "")
	for _, k := range RouteKeys() {
		if !strings.Contains(w.Body.String(), `"route":"`+k+`"`) {
			t.Errorf("GET /__admin lacks %s", k)
		}
	}
}

// Every request body is validated: on every route whose body the validator
// answers, an unknown field is refused with 400 naming it, before the
// handler runs (the test admin has no gateway: reaching a handler that needs
// one would panic).
func TestEveryBodyValidated(t *testing.T) {
	a, _ := testAdmin()
	n := 0
	for key, op := range theContract().ops {
		if op.body == nil || op.handlerBody {
			continue
		}
		method, path, _ := strings.Cut(key, " ")
		path = strings.NewReplacer(":name", "n1", ":id", "i1").Replace(path)
		w := adminDo(a, method, path, `{"zz_unknown":1}`)
		if w.Code != 400 || w.Body.String() != adminEnvelope("unknown field zz_unknown") {
			t.Errorf("%s: %d %s", key, w.Code, w.Body)
		}
		n++
	}
	if n != 13 {
		t.Fatalf("%d routes with a validated body", n)
	}
}

// A route whose body is the empty object it ignores refuses a body that is no
// object (an array, a string, a number, null) with 400 `expected {} or no
// body`, before the handler runs, as it refuses an unknown field.
func TestEmptyBodyIsAnObject(t *testing.T) {
	a, _ := testAdmin()
	n := 0
	for key, op := range theContract().ops {
		if op.body == nil || op.body.Extensions["x-error"] != "expected {} or no body" {
			continue
		}
		method, path, _ := strings.Cut(key, " ")
		path = strings.NewReplacer(":name", "n1", ":id", "i1").Replace(path)
		for _, body := range []string{`[1]`, `[]`, `"x"`, `1`, `null`, `true`} {
			w := adminDo(a, method, path, body)
			if w.Code != 400 || w.Body.String() != adminEnvelope("expected {} or no body") {
				t.Errorf("%s %s: %d %s", key, body, w.Code, w.Body)
			}
		}
		n++
	}
	if n != 5 {
		t.Fatalf("%d routes with an empty body", n)
	}
}

// The messages of the validator: the field path of nested unknown fields, and
// the pinned x-error messages of parameters.
func TestValidatorMessages(t *testing.T) {
	a, _ := testAdmin()
	for _, c := range []struct{ method, target, body, msg string }{
		{"POST", "/__admin/faults", `{"status":500,"headers":{"X":"1"},"match":1,"also":2}`, "unknown field also"},
		{"PUT", "/__admin/credentials", `{"credentials":{"a":"b"},"extra":true}`, "unknown field extra"},
		{"PUT", "/__admin/credentials", `{"credentials":["a",{"credential":"b","ns":"c"}]}`, "unknown field credentials[1].ns"},
		{"PUT", "/__admin/credentials", `[{"credential":"b","namespace":"c","x":1}]`, "unknown field [0].x"},
		// A field one branch of the anyOf declares is never "unknown": the
		// single pair {credential, namespace} is a branch of its own.
		{"PUT", "/__admin/credentials", `{"credential":"b","x":1}`, "unknown field x"},
		{"POST", "/__admin/faults", `{"status":500,"operationId":"Nope"}`, "fault field operationId is not an operation of openapi.yaml"},
		{"GET", "/__admin/hermes/runs?status=bogus", ``, "status: expected a run status"},
		{"GET", "/__admin/hermes/runs?limit=1e3", ``, "limit: expected a count from 1 to 1000"},
		// all=true read as absent: one namespace, silently (the clients sent it).
		{"GET", "/__admin/requests?all=true", ``, "all: expected 1 or 0"},
		{"POST", "/__admin/reset?all=yes", ``, "all: expected 1 or 0"},
		{"DELETE", "/__admin/requests?all=", ``, "all: expected 1 or 0"},
		{"POST", "/__admin/clock", `[1]`, "expected a JSON object"},
		{"PUT", "/__admin/credentials", `{"credentials":{},"` + strings.Repeat("x", 5000) + `":1}`, "unknown field " + strings.Repeat("x", runs.EchoLimit)},
	} {
		w := adminDo(a, c.method, c.target, c.body)
		if w.Code != 400 || w.Body.String() != adminEnvelope(c.msg) {
			t.Errorf("%s %s %s: %d %s, want %s", c.method, c.target, c.body, w.Code, w.Body, c.msg)
		}
	}
	if got := fieldPath(map[string]any{"events": []any{map[string]any{}}}, []string{"events", "0"}); got != "events[0]" {
		t.Errorf("fieldPath = %q", got)
	}
}

// The credential mapping is bounded: one credential past MaxCredentials
// answers 409 in the admin envelope (declared in admin.yaml).
func TestCredentialsBound(t *testing.T) {
	a := New(Deps{Faults: faults.NewStore(), Credentials: credentials.NewStore(), MaxBodyBytes: 1 << 20, Version: "test"})
	var b strings.Builder
	b.WriteString("[")
	for i := range credentials.MaxCredentials {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d"`, i)
	}
	b.WriteString("]")
	if w := adminDo(a, "PUT", "/__admin/credentials", b.String()); w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	w := adminDo(a, "PUT", "/__admin/credentials", `["one-more"]`)
	if w.Code != 409 || w.Body.String() != adminEnvelope("too many credentials (max 10000)") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if err := CheckResponse("PUT", "/__admin/credentials", w.Code, w.Header(), w.Body.Bytes()); err != nil {
		t.Fatal(err)
	}
}

// admin.yaml declares the 409 of a snapshot past timeline.MaxSnapshots
// (gateway's TestSnapshotBound makes it).
func TestSnapshotBoundDeclared(t *testing.T) {
	h := http.Header{"Content-Type": {"application/json"}}
	if err := CheckResponse("POST", "/__admin/snapshots", 409, h, []byte(adminEnvelope("too many snapshots (max 10000)"))); err != nil {
		t.Fatal(err)
	}
}

// blockedWriter is a ResponseWriter whose body writes wait until release is
// closed: a stream client that stopped reading.
type blockedWriter struct {
	*httptest.ResponseRecorder
	release chan struct{}
	mu      sync.Mutex
}

func (w *blockedWriter) Write(b []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ResponseRecorder.Write(b)
}

func (w *blockedWriter) Flush() {}

func (h *Hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// streamTo serves GET /__admin/stream?namespace=s of hub to w in the
// background and returns once it is subscribed; done is closed when the
// handler returns.
func streamTo(hub *Hub, w http.ResponseWriter) (done chan struct{}) {
	a := New(Deps{Hub: hub, MaxBodyBytes: 1 << 20, Version: "test"})
	done = make(chan struct{})
	go func() {
		defer close(done)
		a.ServeHTTP(w, httptest.NewRequest("GET", "/__admin/stream?namespace=s", nil), "/__admin/stream")
	}()
	for hub.count() == 0 {
		time.Sleep(time.Millisecond)
	}
	return done
}

// H5: a stream subscriber that does not read holds at most the hub's bound of
// unsent frames; past it the subscriber is dropped and its stream ends after
// what it had already taken.
func TestStreamDropsSlowSubscriber(t *testing.T) {
	hub := NewHub(300)
	w := &blockedWriter{ResponseRecorder: httptest.NewRecorder(), release: make(chan struct{})}
	done := streamTo(hub, w)
	change := gateway.Change{Kind: "run.changed", Namespace: "s", Branch: "main", RunID: "run_1", Status: "running"}
	first := "event: run.changed\ndata: " +
		`{"kind":"run.changed","namespace":"s","branch":"main","run_id":"run_1","status":"running"}` + "\n\n"
	hub.Change(change) // taken by the handler, which then blocks writing it
	for i := 0; i < 10 && hub.count() == 1; i++ {
		time.Sleep(10 * time.Millisecond)
		hub.Change(change) // 111 bytes a frame: the third waiting one crosses 300
		hub.Change(gateway.Change{Kind: "run.changed", Namespace: "elsewhere"})
	}
	if hub.count() != 0 {
		t.Fatal("the slow subscriber was not dropped")
	}
	close(w.release)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the dropped stream did not end")
	}
	if got := w.Body.String(); got != first {
		t.Fatalf("stream body %q, want only %q", got, first)
	}
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %q", w.Code, w.Header().Get("Content-Type"))
	}
}

// The data of each kind of change (admin.yaml StreamEvent).
func TestStreamEventShapes(t *testing.T) {
	hub := NewHub(0)
	s, err := hub.subscribe("s", false)
	if err != nil {
		t.Fatal(err)
	}
	hub.Change(gateway.Change{Kind: "checkpoint", Namespace: "s", Branch: "b", Checkpoint: "cp_00000002"})
	hub.Change(gateway.Change{Kind: "run.removed", Namespace: "s", Branch: "main", RunID: "run_1"})
	hub.Change(gateway.Change{Kind: "run.event", Namespace: "s", Branch: "main", RunID: "run_1", Frame: []byte("data: {\"x\": Infinity}\n\n")})
	hub.Change(gateway.Change{Kind: "clock", Clock: &gateway.ClockState{Now: 1700000000000, Frozen: true, OffsetMs: 5}})
	hub.Change(gateway.Change{Kind: "branch.restored", Namespace: "s", Branch: "main", Checkpoint: "cp_00000001"})
	hub.Change(gateway.Change{Kind: "namespace.reset", Namespace: "s"})
	hub.Change(gateway.Change{Kind: "namespace.reset", Namespace: "s2"}) // another namespace
	hub.Fault("s", "f1", "", 0)
	hub.Fault("s2", "f2", "RunGet", 503) // another namespace
	frames, end := hub.take(s)
	want := []string{
		`event: checkpoint` + "\n" + `data: {"kind":"checkpoint","namespace":"s","branch":"b","checkpoint":"cp_00000002"}`,
		`event: run.removed` + "\n" + `data: {"kind":"run.removed","namespace":"s","branch":"main","run_id":"run_1"}`,
		`event: run.event` + "\n" + `data: {"kind":"run.event","namespace":"s","branch":"main","run_id":"run_1","event":"{\"x\": Infinity}"}`,
		`event: clock` + "\n" + `data: {"kind":"clock","clock":{"now":1700000000000,"frozen":true,"offsetMs":5}}`,
		`event: branch.restored` + "\n" + `data: {"kind":"branch.restored","namespace":"s","branch":"main","checkpoint":"cp_00000001"}`,
		`event: namespace.reset` + "\n" + `data: {"kind":"namespace.reset","namespace":"s"}`,
		`event: fault` + "\n" + `data: {"kind":"fault","namespace":"s","fault_id":"f1"}`,
	}
	if end || len(frames) != len(want) {
		t.Fatalf("%d frames, end %v", len(frames), end)
	}
	for i, f := range frames {
		if string(f) != want[i]+"\n\n" {
			t.Errorf("frame %d\n got %q\nwant %q", i, f, want[i]+"\n\n")
		}
	}
	hub.Close()
	if _, end := hub.take(s); !end {
		t.Fatal("Close does not end the streams")
	}
}

// H5: at most MaxStreamSubscribers streams are open at once; one more is
// refused with 503 and the admin envelope, and so is any after Close. A freed
// place can be taken again.
func TestStreamSubscriberBound(t *testing.T) {
	hub := NewHub(0)
	a := New(Deps{Hub: hub, MaxBodyBytes: 1 << 20, Version: "test"})
	var first *subscriber
	for i := range MaxStreamSubscribers {
		s, err := hub.subscribe("s", false)
		if err != nil {
			t.Fatalf("subscriber %d: %v", i, err)
		}
		if first == nil {
			first = s
		}
	}
	// A name no namespace can have is refused, as by every route that reads
	// a namespace's state: the stream would stay silent for ever.
	w := adminDo(a, "GET", "/__admin/stream?namespace=bad%20name", "")
	if want := adminEnvelope("x-mockingbird-namespace must match /^[A-Za-z0-9_.-]{1,64}$/"); w.Code != 400 || w.Body.String() != want {
		t.Fatalf("a bad namespace: %d %s, want 400 %s", w.Code, w.Body, want)
	}
	w = adminDo(a, "GET", "/__admin/stream?namespace=s", "")
	if want := adminEnvelope("too many control-plane streams: at most 64 at once"); w.Code != 503 || w.Body.String() != want {
		t.Fatalf("one stream too many: %d %s, want 503 %s", w.Code, w.Body, want)
	}
	hub.unsubscribe(first)
	if _, err := hub.subscribe("s", true); err != nil {
		t.Fatalf("a freed place: %v", err)
	}
	hub.Close()
	w = adminDo(a, "GET", "/__admin/stream?namespace=s", "")
	if want := adminEnvelope("the server is shutting down"); w.Code != 503 || w.Body.String() != want {
		t.Fatalf("after Close: %d %s, want 503 %s", w.Code, w.Body, want)
	}
}

// The admin key is compared in constant time and exactly.
func TestAdminKey(t *testing.T) {
	a := New(Deps{AdminKey: "secret", MaxBodyBytes: 1 << 20, Version: "test"})
	for _, c := range []struct {
		key    []string
		status int
	}{{nil, 401}, {[]string{"secre"}, 401}, {[]string{"secret "}, 401}, {[]string{"secret", "secret"}, 401}, {[]string{"secret"}, 404}} {
		r := httptest.NewRequest("GET", "/__admin/nope", nil)
		r.Header[http.CanonicalHeaderKey("X-Mockingbird-Admin-Key")] = c.key
		w := httptest.NewRecorder()
		a.ServeHTTP(w, r, "/__admin/nope")
		if w.Code != c.status {
			t.Errorf("key %q: %d %s", c.key, w.Code, w.Body)
		}
	}
}

// The Hermes controls check their own bodies (x-hermes-body: handler), but
// admin.yaml still documents them: bodies the handler accepts conform to the
// schema, bodies it refuses do not (controls §11).
func TestHandlerBodiesDocumented(t *testing.T) {
	c := theContract()
	for _, tc := range []struct {
		op     string
		body   string
		accept bool
	}{
		{"POST /__admin/hermes/runs/:id/observe", `{"status":"completed","output":"o","usage":{"input_tokens":1,"output_tokens":2.0,"total_tokens":3}}`, true},
		{"POST /__admin/hermes/runs/:id/observe", `{"status":"waiting_for_approval","approval":{"command":"ls"}}`, true},
		{"POST /__admin/hermes/runs/:id/observe", `{"status":"bogus"}`, false},
		{"POST /__admin/hermes/runs/:id/observe", `{"status":"running","run_id":"x"}`, false},
		{"POST /__admin/hermes/runs/:id/observe", `{"status":"completed","output":5}`, false},
		{"POST /__admin/hermes/runs/:id/observe", `{"status":"completed","usage":{"input_tokens":-1,"output_tokens":0,"total_tokens":0}}`, false},
		{"POST /__admin/hermes/runs/:id/events", `{"events":[{"event":"tool.started","tool":"t","preview":null}]}`, true},
		{"POST /__admin/hermes/runs/:id/events", `{"events":[]}`, false},
		{"POST /__admin/hermes/runs/:id/events", `{"events":[{"event":"run.completed"}]}`, false},
		{"POST /__admin/hermes/runs/:id/events", `{"events":[{"event":"message.delta","delta":"x"}],"x":1}`, false},
		{"POST /__admin/hermes/drain", `{"draining":false}`, true},
		{"POST /__admin/hermes/drain", `{"draining":"yes"}`, false},
		{"POST /__admin/hermes/drain", `{}`, false},
		{"POST /__admin/hermes/restart", `{"owner":"stale"}`, true},
		{"POST /__admin/hermes/restart", `{"owner":["alive"]}`, false},
		{"POST /__admin/hermes/restart", `{"owner":"alive","x":1}`, false},
		{"POST /__admin/hermes/scope", `{"profile":"p","identity":"i"}`, true},
		{"POST /__admin/hermes/scope", `{"profile":"","identity":"i"}`, false},
		{"POST /__admin/hermes/scope", `{"profile":"p\u0000","identity":"i"}`, false},
		{"POST /__admin/hermes/scope", `{"profile":"p"}`, false},
	} {
		op := c.ops[tc.op]
		if op == nil || !op.handlerBody {
			t.Fatalf("%s: no handler-checked operation", tc.op)
		}
		v, err := runs.Parse([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		err2 := op.body.VisitJSON(plain(v), visitOpts...)
		if (err2 == nil) != tc.accept {
			t.Errorf("%s %s: schema error %v, want accepted=%v", tc.op, tc.body, err2, tc.accept)
		}
	}
}

// admin.yaml declares the 409s of the fault-rule bounds on both routes that
// add a rule (faults' TestMaxRulesPerNamespace and TestMaxTotalRules make them).
func TestFaultBoundsDeclared(t *testing.T) {
	h := http.Header{"Content-Type": {"application/json"}}
	for _, msg := range []string{"too many fault rules (max 1000)", "too many fault rules in all namespaces (max 10000)",
		"too many fault rule bytes in all namespaces (max 64 MiB)"} {
		for _, path := range []string{"/__admin/faults", "/__admin/faults/presets/hermes_throttled"} {
			if err := CheckResponse("POST", path, 409, h, []byte(adminEnvelope(msg))); err != nil {
				t.Errorf("%s %s: %v", path, msg, err)
			}
		}
	}
}

// A body that matches no branch of an anyOf only because a declared field has
// the wrong type is not refused as "unknown field": the handler answers its
// own message (controls §10).
func TestCredentialsWrongTypeMessages(t *testing.T) {
	a := New(Deps{Faults: faults.NewStore(), Credentials: credentials.NewStore(), MaxBodyBytes: 1 << 20, Version: "test"})
	for body, msg := range map[string]string{
		`{"credential":5}`:                         "each entry is a credential string or {credential, namespace}",
		`{"credentials":5}`:                        `expected {\"credentials\": {\"<credential>\": \"<namespace>\"}}`,
		`{"credentials":[5]}`:                      "each entry is a credential string or {credential, namespace}",
		`[{"credential":"b","namespace":5}]`:       "namespace for b must be a string",
		`{"credential":"b","namespace":["x"]}`:     "namespace for b must be a string",
		`{"credentials":{"a":"b"},"credential":1}`: "unknown field credential",
	} {
		w := adminDo(a, "PUT", "/__admin/credentials", body)
		if w.Code != 400 || w.Body.String() != adminEnvelope(msg) {
			t.Errorf("%s: %d %s, want %s", body, w.Code, w.Body, msg)
		}
	}
}

// admin.yaml declares the 409 of a branch past the process's bound on every
// route that can create one (gateway's TestBranchBound makes it).
func TestBranchBoundDeclared(t *testing.T) {
	h := http.Header{"Content-Type": {"application/json"}}
	body := []byte(adminEnvelope("too many branches (max 10000)"))
	for _, path := range []string{"/__admin/branches/b", "/__admin/branches/b/checkout", "/__admin/checkpoints"} {
		if err := CheckResponse("POST", path, 409, h, body); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// stalledConn is a ResponseWriter on a client that never reads: a body write
// blocks until a write deadline in the past is set (as net/http's
// ResponseController does on a socket), then fails.
type stalledConn struct {
	*httptest.ResponseRecorder
	mu    sync.Mutex
	cut   bool // a past write deadline was set
	cutCh chan struct{}
}

func (w *stalledConn) Write(b []byte) (int, error) {
	<-w.cutCh
	return 0, os.ErrDeadlineExceeded
}

func (w *stalledConn) Flush() {}

func (w *stalledConn) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !t.IsZero() && !t.After(time.Now()) && !w.cut {
		w.cut = true
		close(w.cutCh)
	}
	return nil
}

// H5, H4: a subscriber whose client stopped reading is blocked in a write
// when the hub drops it (or closes). Its stream must still end: the write in
// progress is cut, so the handler returns and gives back its connection, its
// goroutine and the frames it took — they are not held until the client
// goes away, and shutdown does not wait for it.
func TestStreamDroppedWhileWritingEnds(t *testing.T) {
	for _, how := range []string{"dropped", "closed"} {
		t.Run(how, func(t *testing.T) {
			hub := NewHub(300)
			w := &stalledConn{ResponseRecorder: httptest.NewRecorder(), cutCh: make(chan struct{})}
			done := streamTo(hub, w)
			change := gateway.Change{Kind: "run.changed", Namespace: "s", Branch: "main", RunID: "run_1", Status: "running"}
			hub.Change(change) // taken by the handler, which then blocks writing it
			if how == "closed" {
				time.Sleep(20 * time.Millisecond)
				hub.Close()
			}
			for i := 0; i < 10 && hub.count() == 1; i++ {
				time.Sleep(10 * time.Millisecond)
				hub.Change(change)
			}
			if hub.count() != 0 {
				t.Fatal("the slow subscriber was not dropped")
			}
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the stream of a subscriber blocked in a write did not end")
			}
		})
	}
}

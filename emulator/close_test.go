package emulator_test

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/gen"
)

// Close waits for a request in flight (held by a fault delay) to be answered,
// ends an open SSE stream at once without ": stream closed", refuses new
// connections afterwards, and is idempotent (issue 8).
func TestCloseWaitsForRequestsAndEndsStreams(t *testing.T) {
	srv, err := emulator.New(emulator.Options{SSEKeepalive: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := t.Context()
	ctl := srv.Control()
	id := startRun(t, srv.URL(), "")

	// An open stream.
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL()+"/v1/runs/"+id+"/events", nil)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("subscribe: %v %v", err, stream)
	}
	defer stream.Body.Close()
	streamed := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(bufio.NewReader(stream.Body))
		streamed <- string(b)
	}()

	// A poll delayed by 400 ms of real time.
	if _, err := ctl.AddFault(ctx, map[string]any{"operationId": "RunGet", "count": 1, "delayMs": 400}); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		status int
		err    error
	}
	polled := make(chan answer, 1)
	go func() {
		resp, err := http.Get(srv.URL() + "/v1/runs/" + id)
		if err != nil {
			polled <- answer{0, err}
			return
		}
		resp.Body.Close()
		polled <- answer{resp.StatusCode, nil}
	}()
	time.Sleep(100 * time.Millisecond) // the poll is now waiting in the delay

	began := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	took := time.Since(began)
	select {
	case a := <-polled:
		if a.err != nil || a.status != 200 {
			t.Fatalf("in-flight poll: %d %v, want 200", a.status, a.err)
		}
	default:
		t.Fatal("Close returned before the in-flight poll was answered")
	}
	if took < 200*time.Millisecond || took > 5*time.Second {
		t.Fatalf("Close took %v, want the rest of the 400 ms delay", took)
	}
	select {
	case s := <-streamed:
		if strings.Contains(s, "stream closed") {
			t.Fatalf("stream ended with %q", s)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the open stream did not end on Close")
	}
	if _, err := http.Get(srv.URL() + "/health"); err == nil {
		t.Fatal("a request after Close succeeded")
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// Without a listener, Client and Control call Handler() in-process.
func TestNoListenerClients(t *testing.T) {
	srv, err := emulator.New(emulator.Options{NoListener: true, AdminKey: "k", ClockStart: 1700000000000, FreezeClock: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := t.Context()
	if srv.URL() != "" {
		t.Fatalf("URL() = %q", srv.URL())
	}
	api := srv.Client()
	created, err := api.RunCreateWithResponse(ctx, nil, gen.RunCreateRequest{Input: "hi"})
	if err != nil || created.StatusCode() != 202 || created.JSON202.RunId != run1 {
		t.Fatalf("create: %v %s", err, created.Body)
	}
	run, err := srv.Control().Observe(ctx, run1, map[string]string{"status": "failed", "error": "boom"})
	if err != nil || run.Status != "failed" || *run.Error != "boom" {
		t.Fatalf("observe: %v %+v", err, run)
	}
	got, err := api.RunGetWithResponse(ctx, run1, nil)
	if err != nil || got.StatusCode() != 200 || string(got.JSON200.Status) != "failed" {
		t.Fatalf("get: %v %s", err, got.Body)
	}
	// A dropped response is a transport error, as over a socket.
	if _, err := srv.Control().ApplyPreset(ctx, "hermes_submit_accepted_drop", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := api.RunCreateWithResponse(ctx, nil, gen.RunCreateRequest{Input: "hi"}); err == nil || !strings.Contains(err.Error(), "connection closed without a response") {
		t.Fatalf("dropped create: %v", err)
	}
}

// URL is http://<host>:<actual port> with the host as given (runs-api §15).
func TestURLKeepsHost(t *testing.T) {
	srv, err := emulator.New(emulator.Options{Host: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !regexp.MustCompile(`^http://localhost:[0-9]+$`).MatchString(srv.URL()) {
		t.Fatalf("URL() = %q", srv.URL())
	}
	resp, err := http.Get(srv.URL() + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v %v", resp, err)
	}
	resp.Body.Close()
}

// A request that the grace cuts short ends before Close returns: its context
// ends, so a fault delay stops waiting, and it is done before the gateway and
// the store close. It went on sleeping after Close had returned, then ran
// against the closed store (a 500 "storage: closed") and logged through a
// Logger the caller had finished with — a goroutine leak, and a panic when
// the Logger writes to a test that has ended.
func TestCloseEndsTheRequestsItCuts(t *testing.T) {
	before := goleak.IgnoreCurrent()
	var logs closedLog
	srv, err := emulator.New(emulator.Options{ShutdownGrace: 100 * time.Millisecond, DBPath: filepath.Join(t.TempDir(), "x.db"),
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), LogRequests: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Control().AddFault(t.Context(), map[string]any{"operationId": "RunCreate", "delayMs": 5000}); err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	answered := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("POST", srv.URL()+"/v1/runs", strings.NewReader(`{"input":"x"}`))
		req.Header.Set("Idempotency-Key", "k1")
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		answered <- err
	}()
	time.Sleep(200 * time.Millisecond) // the submission waits in the delay
	began := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	logs.close()
	if took := time.Since(began); took > 2*time.Second {
		t.Fatalf("Close took %v", took)
	}
	if err := <-answered; err == nil {
		t.Fatal("the cut submission was answered")
	}
	hc.CloseIdleConnections()
	http.DefaultClient.CloseIdleConnections()
	goleak.VerifyNone(t, before)
	if after := logs.after(); after != "" {
		t.Fatalf("logged after Close returned: %q", after)
	}
	if !strings.Contains(logs.String(), "shutdown grace elapsed") {
		t.Fatalf("no WARN line: %q", logs.String())
	}
}

// closedLog is a log sink that keeps what is written after close separately.
type closedLog struct {
	mu           sync.Mutex
	closed       bool
	before, late strings.Builder
}

func (l *closedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.late.Write(p)
	}
	return l.before.Write(p)
}

func (l *closedLog) close() { l.mu.Lock(); l.closed = true; l.mu.Unlock() }

func (l *closedLog) after() string { l.mu.Lock(); defer l.mu.Unlock(); return l.late.String() }

func (l *closedLog) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.before.String() }

// Without a listener, Close treats the Handler() calls in progress as the
// listener's requests: it waits up to the grace for them, then ends their
// contexts and waits for them to return. It closed the store under them.
func TestCloseWaitsForHandlerCalls(t *testing.T) {
	var logs closedLog
	srv, err := emulator.New(emulator.Options{NoListener: true, ShutdownGrace: 2 * time.Second,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), LogRequests: true})
	if err != nil {
		t.Fatal(err)
	}
	ctl := srv.Control()
	if _, err := ctl.AddFault(t.Context(), map[string]any{"operationId": "RunGet", "count": 1, "delayMs": 300}); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.AddFault(t.Context(), map[string]any{"operationId": "RunStop", "count": 1, "delayMs": 60000}); err != nil {
		t.Fatal(err)
	}
	serve := func(method, path string) <-chan int {
		out := make(chan int, 1)
		go func() {
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, httptest.NewRequest(method, path, nil))
			out <- rec.Code
		}()
		return out
	}
	poll, stop := serve("GET", "/v1/runs/x"), serve("POST", "/v1/runs/x/stop")
	time.Sleep(100 * time.Millisecond) // both wait in their delays
	began := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	closed := time.Now()
	logs.close()
	// Both were answered before Close returned: their request lines were
	// written before it (below), not after. When their goroutines next run
	// is the scheduler's business, so no time is asserted for it.
	if p := <-poll; p != 404 {
		t.Fatalf("the poll within the grace: %d, want 404", p)
	}
	<-stop
	if took := closed.Sub(began); took < 1500*time.Millisecond || took > 5*time.Second {
		t.Fatalf("Close took %v, want the 2 s grace", took)
	}
	if l := logs.String(); !strings.Contains(l, `cut="POST /v1/runs/x/stop"`) || strings.Count(l, "msg=request") != 2 {
		t.Fatalf("want the WARN line and both request lines before Close returned: %q", l)
	}
	if after := logs.after(); after != "" {
		t.Fatalf("logged after Close returned: %q", after)
	}
}

// An IPv6 host may come in brackets, as it is written in a URL (serve --host
// [::1]): the listener and URL() add their own. "[::1]" failed with "address
// [[::1]]:0: missing port in address".
func TestBracketedIPv6Host(t *testing.T) {
	if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		ln.Close()
	}
	for _, host := range []string{"::1", "[::1]"} {
		srv, err := emulator.New(emulator.Options{Host: host})
		if err != nil {
			t.Fatalf("Host %q: %v", host, err)
		}
		if !regexp.MustCompile(`^http://\[::1\]:[0-9]+$`).MatchString(srv.URL()) {
			t.Fatalf("Host %q: URL() = %q", host, srv.URL())
		}
		resp, err := http.Get(srv.URL() + "/health")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("Host %q: health: %v %v", host, resp, err)
		}
		resp.Body.Close()
		srv.Close()
	}
}

// stuckWriter is a Handler() caller's ResponseWriter whose Write blocks
// until release is closed, and which says when the first Write began.
type stuckWriter struct {
	*httptest.ResponseRecorder
	writing, release chan struct{}
	once             sync.Once
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.writing) })
	<-w.release
	return w.ResponseRecorder.Write(p)
}

// A Handler() call that ignores its ended context (its caller's writer
// blocks) does not make Close hang: after the grace, and one more once the
// call's context ended, Close logs it and returns.
func TestCloseDoesNotHangOnABlockedCall(t *testing.T) {
	var logs closedLog
	srv, err := emulator.New(emulator.Options{NoListener: true, ShutdownGrace: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w := &stuckWriter{ResponseRecorder: httptest.NewRecorder(), writing: make(chan struct{}), release: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		srv.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/health", nil))
		close(done)
	}()
	<-w.writing
	closed := make(chan error, 1)
	go func() { closed <- srv.Close() }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close hung on a call whose writer blocks")
	}
	if l := logs.String(); !strings.Contains(l, `msg="requests still running after they were cut; closing the store under them" requests=1 cut="GET /health"`) {
		t.Fatalf("want the WARN line naming the call: %q", l)
	}
	close(w.release)
	<-done
}

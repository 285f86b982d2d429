package emulator_test

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// Hardening decisions H1, H2, H4, H5 and H9 (hardening.md) through the full
// stack.

var adminKeyErr = adminErr("missing or wrong x-mockingbird-admin-key")

// H1: with an admin key, x-mockingbird-at and x-mockingbird-branch on a vendor
// request need it too; without it the answer is 401 in the admin envelope and
// nothing is selected, created or moved.
func TestHistoryHeadersNeedTheAdminKey(t *testing.T) {
	x := newH(t, emulator.Options{AdminKey: "ak", APIKey: "k"})
	bearer := []string{"Authorization", "Bearer k"}
	admin := []string{"X-Mockingbird-Admin-Key", "ak"}
	with := func(hdr ...[]string) (out []string) {
		for _, h := range hdr {
			out = append(out, h...)
		}
		return out
	}
	r := x.post("/v1/runs", `{"input":"synthetic"}`, with(bearer, []string{"Idempotency-Key", "a"})...)
	x.want(r, 202, "")
	r = x.post("/v1/runs", `{"input":"synthetic"}`, with(bearer, []string{"Idempotency-Key", "b"})...)
	x.want(r, 202, "")
	second := r.field(t, "run_id")
	timeline := func() string { return string(x.get("/__admin/timeline", admin...).Body) }
	before := timeline()
	at := []string{"X-Mockingbird-At", "cp_00000001"}
	for _, tc := range []struct {
		name, method, path string
		hdr                []string
		status             int
		body               string
	}{
		{"no credentials, at", "POST", "/v1/runs", at, 401, authErr},
		{"bearer, at, no admin key", "POST", "/v1/runs", with(bearer, at), 401, adminKeyErr},
		{"bearer, at, wrong admin key", "POST", "/v1/runs", with(bearer, at, []string{"X-Mockingbird-Admin-Key", "nope"}), 401, adminKeyErr},
		{"bearer, at, admin key with a suffix", "POST", "/v1/runs", with(bearer, at, []string{"X-Mockingbird-Admin-Key", "akk"}), 401, adminKeyErr},
		{"bearer, at on a GET", "GET", "/v1/runs/" + second, with(bearer, at), 401, adminKeyErr},
		{"bearer, new branch on a GET", "GET", "/v1/runs/" + second, with(bearer, []string{"X-Mockingbird-Branch", "side"}), 401, adminKeyErr},
		{"bearer, branch main", "POST", "/v1/runs", with(bearer, []string{"X-Mockingbird-Branch", "main"}), 401, adminKeyErr},
	} {
		x.want(x.do(tc.method, tc.path, `{"input":"synthetic"}`, tc.hdr...), tc.status, tc.body)
		if got := timeline(); got != before {
			t.Fatalf("%s moved the timeline:\n%s\nwas\n%s", tc.name, got, before)
		}
	}
	// Journaled as 401s, none as an accepted mutation.
	j := string(x.get("/__admin/requests", admin...).Body)
	if n := strings.Count(j, `"status":401`); n != 7 || strings.Count(j, `"accepted":true`) != 2 {
		t.Fatalf("journal: %d entries with status 401, want 7; %d accepted, want the 2 admissions:\n%s", n, strings.Count(j, `"accepted":true`), j)
	}
	// The second run is still there and its key still replays.
	x.want(x.get("/v1/runs/"+second, bearer...), 200, "")
	r = x.post("/v1/runs", `{"input":"synthetic"}`, with(bearer, []string{"Idempotency-Key", "b"})...)
	if r.Status != 202 || r.Header.Get("Idempotency-Replayed") != "true" || r.field(t, "run_id") != second {
		t.Fatalf("replay after the refused rollbacks: %d %s", r.Status, r.Body)
	}
	// With the admin key the headers work as before (controls §8.6).
	x.want(x.get("/v1/runs/"+second, with(bearer, admin, []string{"X-Mockingbird-Branch", "side"})...), 200, "")
	if got := timeline(); !strings.Contains(got, `"side":"cp_`) {
		t.Fatalf("branch side not created with the admin key: %s", got)
	}
}

// H1 without --api-key: the history headers alone need the admin key, and the
// refused request creates no namespace.
func TestHistoryHeadersAdminKeyOnly(t *testing.T) {
	x := newH(t, emulator.Options{AdminKey: "ak"})
	x.want(x.get("/v1/runs/run_x", "X-Mockingbird-Branch", "side"), 401, adminKeyErr)
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, "X-Mockingbird-At", "cp_00000001"), 401, adminKeyErr)
	x.want(x.get("/__admin/namespaces", "X-Mockingbird-Admin-Key", "ak"), 200, `{"default":"default","namespaces":[]}`)
	// Without history headers the vendor routes need no admin key.
	x.start()
}

// H2: 8a body limit, 9 routing and 7 faults answer before 10 auth; 10 auth
// before 5 history selection and 8b the body read.
func TestPipelineOrder(t *testing.T) {
	x := newH(t, emulator.Options{APIKey: "k", MaxBodyBytes: 100})
	bearer := []string{"Authorization", "Bearer k"}
	tooLarge := hermesErr("Request body too large.", "body_too_large")
	x.want(x.post("/v1/runs", strings.Repeat(" ", 101)), 413, tooLarge)
	x.want(x.post("/v1/nope", `{}`), 404, `{"message":"page not found"}`)
	x.want(x.post("/v1/runs", `not json`), 401, authErr)
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, "X-Mockingbird-At", "cp_00000099"), 401, authErr)
	x.want(x.get("/v1/runs/run_x", "X-Mockingbird-Branch", "side"), 401, authErr)
	// The body of an unauthenticated request is never read: the answer does
	// not wait for the 95 bytes still missing.
	began := time.Now()
	resp, b := optRaw(t, x, "POST /v1/runs HTTP/1.1\r\nHost: e\r\nContent-Length: 100\r\n\r\n{\"in")
	if resp.StatusCode != 401 || string(b) != authErr || time.Since(began) > 2*time.Second {
		t.Fatalf("unauthenticated, body missing: %d %s after %v", resp.StatusCode, b, time.Since(began))
	}
	// None of these touched a timeline or created a namespace.
	x.want(x.get("/__admin/namespaces"), 200, `{"default":"default","namespaces":[]}`)
	// A fault rule answers before auth.
	x.want(x.post("/__admin/faults", `{"operationId":"RunCreate","status":503,"count":1}`), 201, "")
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 503, `{"detail":"Injected by Mockingbird"}`)
	// With credentials, history selection answers as before.
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`, append(bearer, "X-Mockingbird-At", "cp_00000099")...), 409, adminErr("no checkpoint cp_00000099"))
	x.want(x.post("/v1/runs", `not json`, bearer...), 400, hermesErr("Invalid JSON", ""))
}

// H4: a request whose declared body never arrives is answered within the read
// timeout, whatever its method; a head that never ends is closed; a stream
// outlives the read timeout.
func TestReadTimeout(t *testing.T) {
	x := newH(t, emulator.Options{ReadTimeout: 300 * time.Millisecond, SSEKeepalive: 100 * time.Millisecond})
	for _, tc := range []struct{ name, raw, body string }{
		{"GET with a body that never comes", "GET /v1/runs/x HTTP/1.1\r\nHost: e\r\nContent-Length: 10\r\n\r\n",
			hermesErr("Run not found: x", "run_not_found")},
		{"POST with half a body", "POST /v1/runs HTTP/1.1\r\nHost: e\r\nContent-Length: 100\r\n\r\n{\"input\"",
			hermesErr("Invalid JSON", "")},
		{"unmatched route with a body that never comes", "POST /v1/nope HTTP/1.1\r\nHost: e\r\nContent-Length: 10\r\n\r\n",
			`{"message":"page not found"}`},
		{"control plane with half a body", "POST /__admin/clock HTTP/1.1\r\nHost: e\r\nContent-Length: 100\r\n\r\n{",
			adminErr("request body is not valid JSON")},
		{"control GET with a body that never comes", "GET /__admin/faults HTTP/1.1\r\nHost: e\r\nContent-Length: 10\r\n\r\n",
			adminErr("request body is not valid JSON")},
		{"health with a body that never comes", "GET /health HTTP/1.1\r\nHost: e\r\nContent-Length: 10\r\n\r\n", ""},
		{"contract with a body that never comes", "GET /openapi.yaml HTTP/1.1\r\nHost: e\r\nContent-Length: 10\r\n\r\n", ""},
	} {
		began := time.Now()
		resp, b := optRaw(t, x, tc.raw)
		if d := time.Since(began); (tc.body != "" && string(b) != tc.body) || resp.StatusCode == 0 || d > 3*time.Second {
			t.Fatalf("%s: %d %s after %v, want %s", tc.name, resp.StatusCode, b, d, tc.body)
		}
	}
	// A head that never ends: the connection is closed.
	conn, err := net.Dial("tcp", strings.TrimPrefix(x.srv.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	began := time.Now()
	_, _ = io.WriteString(conn, "GET /v1/runs/x HTTP/1.1\r\nHost: e\r\n")
	_, _ = io.ReadAll(conn)
	if d := time.Since(began); d > 3*time.Second {
		t.Fatalf("unfinished head held for %v", d)
	}
	// A stream lives past the read timeout.
	id := x.start()
	s, _, _ := x.sseOpen(id)
	if got := s.quiet(900 * time.Millisecond); len(got) < 5 {
		t.Fatalf("%d keepalives in 900ms with a 300ms read timeout: %q", len(got), got)
	}
	s.close()
}

// H5: at most MaxInflightBodyBytes of bodies are held at once; past it a body
// waits the read timeout, then 503 server_busy with Retry-After: 1, on both
// planes. In-process, a stalled body holds its bytes until it ends.
func TestInflightBodyBytes(t *testing.T) {
	x := newH(t, emulator.Options{NoListener: true, MaxInflightBodyBytes: 1000, ReadTimeout: 100 * time.Millisecond})
	x.inproc = true
	pr, pw := io.Pipe()
	stalled := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		req := httptest.NewRequest("POST", "http://emulator/v1/runs", pr)
		req.ContentLength = 800
		rec := httptest.NewRecorder()
		x.srv.Handler().ServeHTTP(rec, req)
		stalled <- rec
	}()
	_, _ = io.WriteString(pw, `{"input"`)
	time.Sleep(50 * time.Millisecond) // the stalled body holds its 800 bytes
	busy := hermesErr("Request body backlog full.", "server_busy")
	body := `{"input":"synthetic","pad":"` + strings.Repeat("p", 400) + `"}`
	for _, path := range []string{"/v1/runs", "/__admin/clock"} {
		r := x.post(path, body)
		x.want(r, 503, busy)
		if r.Header.Get("Retry-After") != "1" {
			t.Fatalf("%s: Retry-After %q", path, r.Header.Get("Retry-After"))
		}
	}
	pw.Close()
	if rec := <-stalled; rec.Code != 400 || rec.Body.String() != hermesErr("Invalid JSON", "") {
		t.Fatalf("stalled body: %d %s", rec.Code, rec.Body)
	}
	x.want(x.post("/v1/runs", body), 202, "")
}

// blockedWriter is a client that does not read its answer: Write blocks
// until unblock is closed; writing is closed when the first Write begins.
type blockedWriter struct {
	hdr              http.Header
	writing, unblock chan struct{}
	once             sync.Once
}

func (w *blockedWriter) Header() http.Header { return w.hdr }
func (w *blockedWriter) WriteHeader(int)     {}
func (w *blockedWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.writing) })
	<-w.unblock
	return len(b), nil
}

// H5: a body counts against MaxInflightBodyBytes while it is read and used,
// not while its answer is written: a client that never reads its answer
// (here one whose Write blocks) held its body's bytes for as long as it kept
// the connection, so every later body that did not fit waited the read
// timeout and got 503 server_busy.
func TestInflightBodyReleasedBeforeTheAnswer(t *testing.T) {
	x := newH(t, emulator.Options{NoListener: true, MaxInflightBodyBytes: 1000, ReadTimeout: 100 * time.Millisecond})
	x.inproc = true
	pad := func(n int) string { return `{"input":"synthetic","pad":"` + strings.Repeat("p", n) + `"}` }
	id := x.start()
	observe := func(n int) string { return `{"status":"running","last_event":"` + strings.Repeat("e", n) + `"}` }
	for _, c := range []struct{ path, body, next string }{
		{"/v1/runs", pad(800), pad(400)},
		{"/__admin/hermes/runs/" + id + "/observe", observe(800), observe(400)},
	} {
		w := &blockedWriter{hdr: http.Header{}, writing: make(chan struct{}), unblock: make(chan struct{})}
		done := make(chan struct{})
		go func() {
			defer close(done)
			x.srv.Handler().ServeHTTP(w, httptest.NewRequest("POST", "http://emulator"+c.path, strings.NewReader(c.body)))
		}()
		<-w.writing
		if r := x.post(c.path, c.next); r.Status != 200 && r.Status != 202 {
			t.Fatalf("%s while an answer is stuck: %d %s", c.path, r.Status, r.Body)
		}
		close(w.unblock)
		<-done
	}
}

// H9: a 404 echoes at most the first 1024 bytes of the path.
func TestNotFoundEchoIsBounded(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.want(x.get("/v1/runs/"+strings.Repeat("r", 5000)), 404, hermesErr("Run not found: "+strings.Repeat("r", 1024), "run_not_found"))
	x.want(x.get("/__admin/"+strings.Repeat("x", 5000)), 404, adminErr("no admin route GET /"+strings.Repeat("x", 1023)+"; GET /__admin lists them"))
}

// H8: emulator.New refuses a foreign file before the lock file exists, and
// issue 15 item 5: a missing directory is named, not the lock file.
func TestForeignDatabaseRefused(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "other.db")
	content := []byte("SQLite format 3\x00" + strings.Repeat("\x00", 52) + "\x00\x00\x04\xd2" + strings.Repeat("\x00", 440))
	if err := os.WriteFile(foreign, content, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing", "x.db")
	for path, want := range map[string]string{
		foreign: "storage: open " + foreign + ": not a hermes-emulator database: application_id 0x4d2",
		missing: "storage: open " + missing + ": the directory " + filepath.Dir(missing) + " does not exist",
	} {
		srv, err := emulator.New(emulator.Options{DBPath: path, NoListener: true})
		if err == nil {
			srv.Close()
			t.Fatalf("%s: New succeeded", path)
		}
		if err.Error() != want {
			t.Fatalf("err = %q\nwant  %q", err, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "other.db" {
		t.Fatalf("files after the refusals: %v", entries)
	}
	if b, _ := os.ReadFile(foreign); string(b) != string(content) {
		t.Fatal("the foreign file changed")
	}
}

// H4: Close waits ShutdownGrace for a stalled upload, or a request head that
// never ends, then cuts it and says what it cut.
func TestShutdownGrace(t *testing.T) {
	for _, tc := range []struct{ name, sent, want string }{
		{"stalled body", "POST /v1/runs HTTP/1.1\r\nHost: e\r\nContent-Length: 100\r\n\r\n{\"input\"",
			`requests=1 cut="POST /v1/runs" unfinishedHeads=0`},
		{"unfinished head", "POST /v1/runs HTTP/1.1\r\nHost: e\r\n", `requests=0 cut="" unfinishedHeads=1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			srv, err := emulator.New(emulator.Options{ShutdownGrace: 300 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_, _ = io.WriteString(conn, tc.sent)
			time.Sleep(100 * time.Millisecond) // the server has read what was sent
			began := time.Now()
			if err := srv.Close(); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(began); d < 250*time.Millisecond || d > 3*time.Second {
				t.Fatalf("Close took %v with a 300ms grace", d)
			}
			want := `level=WARN msg="shutdown grace elapsed; closing the requests still in flight" grace=300ms ` + tc.want + "\n"
			if got := logs.String(); !strings.Contains(got, want) {
				t.Fatalf("log:\n%s\nwant the line\n%s", got, want)
			}
		})
	}
}

// H6 through the control plane: the attacks of issue 16 item 7 are refused
// and change nothing.
func TestControlInputBounds(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	clock := string(x.get("/__admin/clock").Body)
	for _, tc := range []struct{ path, body, msg string }{
		{"/__admin/faults", `{"delayMs":1e300}`, "fault field delayMs must be an integer from 0 to 600000"},
		{"/__admin/faults", `{"status":503,"headers":{"X-A":"a\u0000b"}}`, "fault header X-A has a CR, LF or NUL in its value"},
		{"/__admin/faults/presets/hermes_poll_timeout", `{"delayMs":600001}`, "fault field delayMs must be an integer from 0 to 600000"},
		{"/__admin/clock", `{"set":1e308}`, "set: out of range (the clock stays within ±8.64e15 ms)"},
		{"/__admin/clock", `{"advance":1e308}`, "advance: out of range (the clock stays within ±8.64e15 ms)"},
		{"/__admin/clock", `{"freeze":false,"advance":"100000000000d"}`, "advance: out of range (the clock stays within ±8.64e15 ms)"},
	} {
		x.want(x.post(tc.path, tc.body), 400, adminErr(tc.msg))
	}
	x.want(x.get("/__admin/faults"), 200, `{"faults":[]}`)
	if got := string(x.get("/__admin/clock").Body); got != clock {
		t.Fatalf("clock %s after the refused requests, was %s", got, clock)
	}
	for i := 0; i < 1000; i++ {
		x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":500,"namespace":"a"}`), 201, "")
	}
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":500,"namespace":"a"}`), 409, adminErr("too many fault rules (max 1000)"))
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":500,"namespace":"b"}`), 201, "")
}

package record

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// seen is a request as the upstream received it.
type seen struct {
	method, uri string
	header      http.Header
	body        string
}

// fakeUpstream answers canned bytes and keeps what it received. Its SSE
// route writes one frame, then waits for next before each further one, so a
// test can prove frames cross as they are written.
type fakeUpstream struct {
	mu   sync.Mutex
	got  []seen
	next chan struct{}
}

func (f *fakeUpstream) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	f.mu.Lock()
	f.got = append(f.got, seen{req.Method, req.RequestURI, req.Header.Clone(), string(b)})
	f.mu.Unlock()
	h := w.Header()
	switch {
	case strings.HasSuffix(req.URL.Path, "/events"):
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		w.WriteHeader(200)
		for i, frame := range []string{
			"data: {\"event\": \"message.delta\", \"run_id\": \"run_x\", \"timestamp\": 1700000000.0, \"delta\": \"caf\\u00e9\"}\n\n",
			": keepalive\n\n",
			"data: {\"event\": \"run.cancelled\", \"run_id\": \"run_x\", \"timestamp\": 1700000000.5}\n\n: stream closed\n\n",
		} {
			if i > 0 {
				<-f.next
			}
			io.WriteString(w, frame)
			w.(http.Flusher).Flush()
		}
	case req.URL.Path == "/v1/runs":
		h.Set("Content-Type", "application/json")
		h.Set("Idempotency-Replayed", "true")
		h.Set("X-Hermes-Session-Key", "mem-1")
		h.Add("X-Repeated", "a")
		h.Add("X-Repeated", "b")
		w.WriteHeader(202)
		io.WriteString(w, `{"run_id":"run_x","status":"queued","replayed":true}`)
	default:
		h.Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(404)
		io.WriteString(w, `{"message":"page not found"}`)
	}
}

func TestPassThroughBytes(t *testing.T) {
	f := &fakeUpstream{next: make(chan struct{})}
	up := httptest.NewServer(f)
	defer up.Close()
	rec, err := New(Options{Upstream: up.URL, Out: filepath.Join(t.TempDir(), "o.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(rec)
	defer px.Close()

	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/runs?x=1", `{"input":"hi"}`},
		{"GET", "/v1/runs/run_%2Fx", ""},
		{"POST", "/v1/runs/run_x/approval", `{"choice":"deny"}`},
		{"GET", "/__admin/journal", ""},
		{"GET", "/health", ""},
	} {
		direct := sendWith(t, up.URL, c.method, c.path, c.body)
		proxied := sendWith(t, px.URL, c.method, c.path, c.body)
		direct.header.Del("Date")
		proxied.header.Del("Date")
		if !reflect.DeepEqual(direct, proxied) {
			t.Errorf("%s %s: direct %+v, proxied %+v", c.method, c.path, direct, proxied)
		}
		f.mu.Lock()
		d, p := f.got[len(f.got)-2], f.got[len(f.got)-1]
		f.mu.Unlock()
		if !reflect.DeepEqual(d, p) {
			t.Errorf("%s %s upstream received: direct %+v, proxied %+v", c.method, c.path, d, p)
		}
	}

	// SSE: each frame reaches the client before the upstream writes the next.
	resp := openStream(t, px.URL+"/v1/runs/run_x/events")
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Errorf("stream headers: %v", resp.Header)
	}
	rd := bufio.NewReader(resp.Body)
	var all strings.Builder
	for i := 0; i < 2; i++ {
		got := readItem(t, rd)
		all.WriteString(got)
		f.next <- struct{}{}
	}
	rest, _ := io.ReadAll(rd)
	all.Write(rest)
	want := "data: {\"event\": \"message.delta\", \"run_id\": \"run_x\", \"timestamp\": 1700000000.0, \"delta\": \"caf\\u00e9\"}\n\n" +
		": keepalive\n\n" +
		"data: {\"event\": \"run.cancelled\", \"run_id\": \"run_x\", \"timestamp\": 1700000000.5}\n\n: stream closed\n\n"
	if all.String() != want {
		t.Errorf("stream bytes:\n%q\nwant\n%q", all.String(), want)
	}
}

func sendWith(t *testing.T, base, method, path, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", token)
	req.Header.Set("Idempotency-Key", "k-1")
	req.Header.Set("X-Hermes-Session-Key", "mem-1")
	req.Header.Set("X-Forwarded-For", "10.0.0.1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(b)}
}

func openStream(t *testing.T, url string) *http.Response {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readItem reads one SSE item through its blank line, failing after 5 s.
func readItem(t *testing.T, rd *bufio.Reader) string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		var b strings.Builder
		for {
			line, err := rd.ReadString('\n')
			b.WriteString(line)
			if err != nil || line == "\n" {
				done <- b.String()
				return
			}
		}
	}()
	select {
	case s := <-done:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("no frame crossed within 5 s")
		return ""
	}
}

func TestFlushRoute(t *testing.T) {
	r := newRig(t, Options{})
	got := r.do("GET", FlushPath, "")
	if got.status != 405 || got.header.Get("Allow") != "POST" || got.body != `{"error":{"type":"record","message":"use POST /__admin/record/flush"}}` {
		t.Errorf("GET flush: %+v", got)
	}
	gone := filepath.Join(t.TempDir(), "gone") // there at New (which checks), removed before the flush
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := newRig(t, Options{Out: filepath.Join(gone, "o.yaml")})
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	got = bad.do("POST", FlushPath, "")
	if got.status != 500 || !strings.HasPrefix(got.body, `{"error":{"type":"record","message":"record: write `) {
		t.Errorf("flush into a missing directory: %+v", got)
	}
	got = r.do("POST", FlushPath, "")
	if got.status != 200 {
		t.Fatalf("empty flush: %+v", got)
	}
	data, _ := r.rec.Scenarios()
	if !strings.HasSuffix(string(data), "\nscenarios: []\n") || !strings.Contains(string(data), "Upstream: unknown (no GET /v1/capabilities answered 200).") {
		t.Errorf("empty recording:\n%s", data)
	}
}

func TestAPIKeyPassthrough(t *testing.T) {
	for _, pass := range []bool{false, true} {
		up := emulatortest.New(t, emulator.Options{APIKey: strings.TrimPrefix(token, "Bearer ")})
		rec, err := New(Options{Upstream: up.URL(), Out: filepath.Join(t.TempDir(), "o.yaml"), APIKeyPassthrough: pass})
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.FetchCapabilities(context.Background(), ""); err == nil || err.Error() != "record: GET /v1/capabilities: status 401" {
			t.Fatalf("probe without a key: %v", err)
		}
		px := httptest.NewServer(rec)
		if got := send(t, px.URL, "GET", "/v1/runs/missing", ""); got.status != 404 {
			t.Fatalf("poll: %+v", got)
		}
		want := ""
		if pass {
			want = "platform hermes-agent, hermes@" + emulator.Version
		}
		deadline := time.Now().Add(5 * time.Second)
		for rec.Info() != want && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if got := rec.Info(); got != want {
			t.Errorf("passthrough %v: info %q, want %q", pass, got, want)
		}
		if strings.Contains(rec.dump(), "sk-never-stored") {
			t.Error("the recorder holds the key")
		}
		px.Close()
	}
}

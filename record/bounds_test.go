package record

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

// cannedUpstream admits runs run_1, run_2, … and answers every other request
// with the record rec(id).
func cannedUpstream(t *testing.T, rec func(id string) string) string {
	t.Helper()
	n := 0
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		if req.Method == "POST" && req.URL.Path == "/v1/runs" {
			n++
			w.WriteHeader(202)
			fmt.Fprintf(w, `{"run_id":"run_%d","status":"queued"}`, n)
			return
		}
		io.WriteString(w, rec(strings.TrimPrefix(req.URL.Path, "/v1/runs/")))
	}))
	t.Cleanup(up.Close)
	return up.URL
}

// Twelve runs that each completed with a 900 KiB output: all are recorded,
// but the file keeps only the scenarios that fit the loader's 10 MiB, so
// serve --scenarios still loads it; the header counts the others.
func TestFileFitsTheLoader(t *testing.T) {
	output := strings.Repeat("y", 900<<10)
	out := filepath.Join(t.TempDir(), "r.yaml")
	r, err := New(Options{Out: out, Upstream: cannedUpstream(t, func(id string) string {
		return `{"object":"hermes.run","run_id":"` + id + `","status":"completed","updated_at":1700000001.0,"created_at":1700000000.0,"output":"` +
			output + `","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`
	})})
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(r)
	defer px.Close()
	for i := 1; i <= 12; i++ {
		send(t, px.URL, "POST", "/v1/runs", fmt.Sprintf(`{"input":"m%d"}`, i))
		send(t, px.URL, "GET", fmt.Sprintf("/v1/runs/run_%d", i), "")
	}
	n, err := r.Flush()
	if err != nil {
		t.Fatal(err)
	}
	set, err := scenarios.Load(out)
	if err != nil {
		t.Fatalf("the written file does not load: %.200v", err)
	}
	if len(set.Scenarios) != n || n != 11 {
		t.Errorf("%d scenarios loaded, %d written, want 11", len(set.Scenarios), n)
	}
	data, _ := os.ReadFile(out)
	if !strings.Contains(string(data), "\n# 1 recorded run(s) left out: the scenario loader reads at most 10485760 bytes.\n") {
		t.Errorf("header: %.600s", data)
	}
}

// What the upstream names itself (the capabilities' version and platform)
// and its run ids reach the file's comments: a line break in them must not
// end the comment and leave the rest as YAML the loader refuses.
func TestCommentsStayComments(t *testing.T) {
	n := 0
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/v1/capabilities":
			io.WriteString(w, `{"version":"1.0\nextra: 1","platform":"p\r\u2028q\u0085"}`)
		case "/v1/runs":
			n++
			w.WriteHeader(202)
			fmt.Fprintf(w, `{"run_id":"run_%d\nextra: 2 \ud800","status":"queued"}`, n)
		}
	}))
	defer up.Close()
	out := filepath.Join(t.TempDir(), "r.yaml")
	r, err := New(Options{Out: out, Upstream: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.FetchCapabilities(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(r)
	defer px.Close()
	send(t, px.URL, "POST", "/v1/runs", `{"input":"go"}`)
	if _, err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := scenarios.Load(out); err != nil {
		data, _ := os.ReadFile(out)
		t.Fatalf("the written file does not load: %v\n%s", err, data)
	}
}

// What the recorder keeps is bounded across runs, not only per run: with
// every run under its own limits, 1000 runs of 10,000 frames of 1 MiB would
// still be 10 TB. Past maxKeptBytes nothing more is kept (and a comment
// says so); the requests still cross.
func TestKeptBytesBound(t *testing.T) {
	defer func(n int) { maxKeptBytes = n }(maxKeptBytes)
	maxKeptBytes = 1 << 20
	output := strings.Repeat("y", 100<<10)
	polls := 0
	out := filepath.Join(t.TempDir(), "r.yaml")
	r, err := New(Options{Out: out, Upstream: cannedUpstream(t, func(id string) string {
		polls++
		return fmt.Sprintf(`{"object":"hermes.run","run_id":"%s","status":"running","updated_at":%d.0,"created_at":1700000000.0,"last_event":"%s"}`,
			id, 1700000000+polls, output)
	})})
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(r)
	defer px.Close()
	send(t, px.URL, "POST", "/v1/runs", `{"input":"go"}`)
	for i := 0; i < 30; i++ {
		if a := send(t, px.URL, "GET", "/v1/runs/run_1", ""); a.status != 200 || len(a.body) < 100<<10 {
			t.Fatalf("poll %d: %d", i, a.status)
		}
	}
	r.mu.Lock()
	kept := len(r.order[0].obs)
	r.mu.Unlock()
	if kept > 10 {
		t.Errorf("%d polls of 100 KiB kept, budget 1 MiB", kept)
	}
	data, _ := r.Scenarios()
	if !strings.Contains(string(data), "# recording stopped: the recorder keeps at most 1048576 bytes of observations\n") {
		t.Errorf("no comment in %.400s", data)
	}
}

// An SSE event longer than MaxBodyBytes, sent as several data lines, crosses
// whole and is left out whole: its later lines are not learnt as an event of
// their own (they were: a line past the bound read as the event's end). A
// WARN names the run, the scenario's comment counts the event, and the file
// loads.
func TestOversizedMultiLineEvent(t *testing.T) {
	frame := func(ts, delta string) string {
		return `data: {"event": "message.delta", "run_id": "run_big", "timestamp": ` + ts + `, "delta": "` + delta + `"}` + "\n\n"
	}
	big := "data: " + strings.Repeat("y", 600<<10) + "\ndata: " + strings.Repeat("z", 600<<10) + "\ndata: more\n" + frame("1700000001.0", "bogus")
	stream := frame("1700000000.5", "before") + big + frame("1700000002.0", "after") +
		`data: {"event": "run.completed", "run_id": "run_big", "timestamp": 1700000003.0, "output": "done", "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}` + "\n\n: stream closed\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		switch req.URL.Path {
		case "/v1/runs":
			w.WriteHeader(202)
			io.WriteString(w, `{"run_id":"run_big","status":"queued","replayed":false}`)
		case "/v1/runs/run_big/events":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, stream)
		default:
			w.WriteHeader(404)
		}
	}))
	defer up.Close()
	var logs strings.Builder
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	r, err := New(Options{Upstream: up.URL, Out: filepath.Join(t.TempDir(), "r.yaml"),
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: noTime}))})
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(r)
	defer px.Close()
	send(t, px.URL, "POST", "/v1/runs", `{"input":"go"}`)
	if a := send(t, px.URL, "GET", "/v1/runs/run_big/events", ""); a.status != 200 || a.body != stream {
		t.Fatalf("the stream did not cross whole: %d, %d bytes of %d", a.status, len(a.body), len(stream))
	}
	// Every frame arrives at once: the admission is placed at the last
	// frame's time, so the first step is due at once.
	data, _ := r.Scenarios()
	if _, perr := scenarios.Parse(data); perr != nil {
		t.Fatalf("the written file does not load: %s\n%s", perr.Message, data)
	}
	want := `  # 1 SSE event(s) left out: longer than 1048576 bytes
  - name: "rec-001"
    match: {"input": "^go$"}
    steps:
      - after: 0s
        events:
          - {"event": "message.delta", "delta": "before"}
      - after: 1.5s
        events:
          - {"event": "message.delta", "delta": "after"}
      - after: 1s
        observe: {"status": "completed", "output": "done", "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}
`
	if !strings.HasSuffix(string(data), want) {
		t.Errorf("file:\n%s\nwant it to end with:\n%s", data, want)
	}
	if got := logs.String(); got != "level=WARN msg=\"record: SSE event over the bound not recorded\" run=run_big maxBytes=1048576\n" {
		t.Errorf("log: %q", got)
	}
}

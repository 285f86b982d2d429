package emulator_test

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// hardening H3 over HTTP: reads and 404s of unknown namespaces create
// nothing; a change that would create namespace N+1 answers 429 with the
// admin envelope, and changes nothing.
func TestMaxNamespaces(t *testing.T) {
	x := newH(t, emulator.Options{MaxNamespaces: 1})
	x.freeze()
	x.ns = "ghost"
	x.want(x.get("/v1/runs/run_x"), 404, hermesErr("Run not found: run_x", "run_not_found"))
	x.want(x.get("/v1/nowhere"), 404, "")
	x.ns = ""
	x.want(x.get("/__admin/namespaces"), 200, `{"default":"default","namespaces":[]}`)
	x.ns = "a"
	x.start()
	x.ns = "b"
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 429, adminErr("too many namespaces (max 1)"))
	x.want(x.post("/__admin/checkpoints", ""), 429, adminErr("too many namespaces (max 1)"))
	x.ns = ""
	x.want(x.get("/__admin/namespaces"), 200, `{"default":"default","namespaces":["a"]}`)
}

// hardening H3: at --max-namespaces, a change of an unknown namespace that
// fails (a stop of a run it cannot have, a body that is not JSON) creates
// nothing, so it answers as for an empty namespace, not 429.
func TestMaxNamespacesFailedChange(t *testing.T) {
	x := newH(t, emulator.Options{MaxNamespaces: 1})
	x.freeze()
	x.ns = "a"
	x.start()
	x.ns = "b"
	x.want(x.post("/v1/runs/run_x/stop", "{}"), 404, hermesErr("Run not found: run_x", "run_not_found"))
	x.want(x.post("/v1/runs", "{bad"), 400, hermesErr("Invalid JSON", ""))
	x.want(x.post("/v1/runs", `{"input":"synthetic"}`), 429, adminErr("too many namespaces (max 1)"))
	x.ns = ""
	x.want(x.get("/__admin/namespaces"), 200, `{"default":"default","namespaces":["a"]}`)
}

// hardening H5 over a real socket: a subscriber that never reads holds at
// most --sse-buffer-bytes of frames; past it the server logs a WARN naming
// the run and closes the stream; its frames stay undelivered.
func TestSSEBufferClosesAStalledStream(t *testing.T) {
	var log logBuffer
	srv, err := emulator.New(emulator.Options{SSEBufferBytes: 64 << 10, SSEKeepalive: time.Hour,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	id := startRun(t, srv.URL(), "")
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	if _, err := fmt.Fprintf(conn, "GET /v1/runs/%s/events HTTP/1.1\r\nHost: emulator\r\n\r\n", id); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // subscribed
	events := `{"events":[` + strings.Repeat(`{"event":"message.delta","delta":"`+strings.Repeat("x", 1000)+`"},`, 9) +
		`{"event":"message.delta","delta":"x"}]}`
	for i := 0; i < 4000 && !strings.Contains(log.String(), "SSE buffer full"); i++ {
		resp, err := http.Post(srv.URL()+"/__admin/hermes/runs/"+id+"/events", "application/json", strings.NewReader(events))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := log.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "run_id="+id) {
		t.Fatalf("no WARN naming the run: %q", got)
	}
	// The frames stay undelivered, as for a consumer that went away: the
	// transport is gone (a new subscriber waits, then 404s).
	resp, err := http.Get(srv.URL() + "/v1/runs/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(body), "Run not found: "+id) {
		t.Fatalf("subscribe after the close: %d %s", resp.StatusCode, body)
	}
}

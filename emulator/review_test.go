package emulator_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// controls §6.6: a fault response carries x-mockingbird and nothing else from
// the emulator — not the branch or at echoes of runs-api §3 step 12.
func TestFaultResponseHasNoHistoryEcho(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.want(x.post("/__admin/faults", `{"operationId":"RunGet","status":503}`), 201, "")
	cp := x.post("/__admin/checkpoints", `{}`).field(t, "id")
	for _, hdr := range [][]string{{"X-Mockingbird-Branch", "feat"}, {"X-Mockingbird-At", cp}} {
		r := x.get("/v1/runs/x", hdr...)
		x.want(r, 503, `{"detail":"Injected by Mockingbird"}`)
		if r.Header.Get("X-Mockingbird-Branch") != "" || r.Header.Get("X-Mockingbird-At") != "" || r.Header.Get("X-Frame-Options") != "" {
			t.Fatalf("fault response carries emulator headers: %v", r.Header)
		}
	}
	x.want(x.do("DELETE", "/__admin/faults", ""), 200, `{"status":"ok"}`)
	r := x.get("/v1/runs/x", "X-Mockingbird-Branch", "feat")
	x.want(r, 404, hermesErr("Run not found: x", "run_not_found"))
	if r.Header.Get("X-Mockingbird-Branch") != "feat" {
		t.Fatalf("operation answer lacks the branch echo: %v", r.Header)
	}
}

// runs-api §3 step 8: the body limit applies to POST, PUT and PATCH only; a
// DELETE is routed (404) whatever its declared length.
func TestBodyLimitOnlyForBodies(t *testing.T) {
	conn := rawRequest(t, newH(t, emulator.Options{}), "DELETE /v1/runs/x HTTP/1.1\r\nHost: e\r\nContent-Length: 99999999999\r\n\r\n")
	buf := make([]byte, 4096)
	n, _ := conn.Read(buf)
	if got := string(buf[:n]); !strings.HasPrefix(got, "HTTP/1.1 404") || !strings.Contains(got, `{"message":"page not found"}`) {
		t.Fatalf("got %q", got)
	}
}

// controls §4.1: reset is not one of the requests that create a namespace.
func TestResetCreatesNoNamespace(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.want(x.post("/__admin/reset?namespace=zzz", ""), 200, `{"status":"ok","reset":["zzz"]}`)
	x.want(x.get("/__admin/namespaces"), 200, `{"default":"default","namespaces":[]}`)
}

// runs-api §10.4: a database file is opened by at most one running instance.
func TestDatabaseFileLock(t *testing.T) {
	db := filepath.Join(t.TempDir(), "f.db")
	a, err := emulator.New(emulator.Options{DBPath: db})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emulator.New(emulator.Options{DBPath: db}); err == nil || !strings.Contains(err.Error(), "in use by another running instance") {
		t.Fatalf("second instance on the same file: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := emulator.New(emulator.Options{DBPath: db})
	if err != nil {
		t.Fatalf("after close: %v", err)
	}
	b.Close()
}

// Close ends every stream at once, also one whose transport was destroyed
// because the other subscriber of its run left (it receives only keepalives).
func TestCloseEndsOrphanedStream(t *testing.T) {
	srv, err := emulator.New(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := &h{t: t, srv: srv}
	id := x.start()
	ctx1, cancel1 := context.WithCancel(context.Background())
	open := func(ctx context.Context) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL()+"/v1/runs/"+id+"/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("subscribe: %v %v", resp, err)
		}
		return resp
	}
	first := open(ctx1)
	second := open(context.Background())
	cancel1()
	first.Body.Close()
	time.Sleep(50 * time.Millisecond) // the first subscriber's leave is processed
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(second.Body); done <- err }()
	began := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("Close took %v", d)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("orphaned stream did not end cleanly: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("orphaned stream still open after Close")
	}
}

// A body that does not arrive in full answers 400 Invalid JSON and closes the
// connection (pipeline step 8; README "Where the spec is silent").
func TestTruncatedBody(t *testing.T) {
	x := newH(t, emulator.Options{})
	conn := rawRequest(t, x, "POST /v1/runs HTTP/1.1\r\nHost: e\r\nContent-Length: 100\r\n\r\n{\"input\"")
	_ = conn.(*net.TCPConn).CloseWrite()
	got, _ := io.ReadAll(conn)
	if s := string(got); !strings.HasPrefix(s, "HTTP/1.1 400") || !strings.Contains(s, "Connection: close") ||
		!strings.HasSuffix(s, hermesErr("Invalid JSON", "")) {
		t.Fatalf("got %q", s)
	}
	x.want(x.get("/v1/runs/run_4e685a726271445348426a4a70783364"), 404, "") // nothing was admitted
}

// rawRequest writes raw bytes to a new connection to x's server (closed at
// the end of the test, reads and writes bounded by 5 s) and returns it.
func rawRequest(t *testing.T, x *h, raw string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(x.srv.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = conn.Write([]byte(raw))
	return conn
}

// `OPTIONS *` (the asterisk form) is a method and path not in runs-api §6:
// 404 page not found with the common and security headers, like OPTIONS on
// any path (§6.8), and journaled as unmatched. net/http answered it itself
// with an empty 200 that carried no x-mockingbird and was never journaled.
func TestOptionsAsteriskIsPageNotFound(t *testing.T) {
	x := newH(t, emulator.Options{})
	conn := rawRequest(t, x, "OPTIONS * HTTP/1.1\r\nHost: e\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 404 || string(body) != `{"message":"page not found"}` ||
		resp.Header.Get("Content-Type") != "application/json" ||
		resp.Header.Get("X-Mockingbird") != "hermes@0.0.0-dev; ns=default" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("OPTIONS * = %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if r := x.get("/__admin/requests"); !strings.Contains(r.String(), `"method":"OPTIONS","path":"*"`) {
		t.Fatalf("journal %s", r.Body)
	}
}

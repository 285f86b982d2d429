//go:build unix

package emulator_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// Close ends at once a stream whose transport was destroyed because the
// other subscriber of its run left, also when it is blocked in a write to a
// client that stopped reading: that write is cut as for any stream at
// shutdown, rather than waiting out the shutdown grace.
func TestCloseCutsOrphanedStreamBlockedInWrite(t *testing.T) {
	srv, err := emulator.New(emulator.Options{ShutdownGrace: 5 * time.Second, SSEBufferBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	x := &h{t: t, srv: srv}
	id := x.start()

	// The stalled subscriber: a small receive window, never read past the head.
	small := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := small.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /v1/runs/" + id + "/events HTTP/1.1\r\nHost: e\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("stalled subscriber: %v %v", resp, err)
	}

	// The other subscriber reads; it leaves once the stalled one is blocked.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL()+"/v1/runs/"+id+"/events", nil)
	other, err := http.DefaultClient.Do(req)
	if err != nil || other.StatusCode != 200 {
		t.Fatalf("reading subscriber: %v %v", other, err)
	}
	go func() { _, _ = io.Copy(io.Discard, other.Body) }()

	// Frames enough to fill the stalled subscriber's socket buffers.
	delta := `{"event":"message.delta","delta":"` + strings.Repeat("y", 60000) + `"}`
	body := `{"events":[` + strings.Repeat(delta+",", 39) + delta + `]}`
	for range 10 {
		if r := x.post("/__admin/hermes/runs/"+id+"/events", body); r.Status != 200 {
			t.Fatalf("events: %d %s", r.Status, r.Body)
		}
	}
	cancel()
	other.Body.Close()
	time.Sleep(200 * time.Millisecond) // the reading subscriber's leave is processed

	began := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Fatalf("Close took %v: it waited for the orphaned stream blocked in a write", d)
	}
}

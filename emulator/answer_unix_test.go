//go:build unix

package emulator_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// A client that never reads an answer holds its connection for at most
// --write-timeout from the answer's start: then the connection is closed and
// the answer is cut (before, the handler waited for ever). A stream has no
// such deadline, and a connection kept alive after one answer starts the next
// without the first's deadline.
func TestUnreadAnswerClosedAfterWriteTimeout(t *testing.T) {
	// Without response validation: validating the 8 MiB answer takes longer
	// than the second the client waits without reading under -race, and the
	// answer then starts while the client reads (nothing to cut).
	x := newH(t, emulator.Options{WriteTimeout: 200 * time.Millisecond, NoResponseValidation: true})
	big := strings.Repeat("s", 8<<20)
	r := x.post("/v1/runs", `{"input":"synthetic","session_id":"`+big+`"}`)
	if r.Status != 202 {
		t.Fatalf("create: %d", r.Status)
	}
	id := r.field(t, "run_id")
	get := "GET /v1/runs/" + id + " HTTP/1.1\r\nHost: e\r\n\r\n"

	// A small receive buffer from the start (a window the client advertises
	// in its handshake), so the answer cannot wait in the sockets.
	small := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := small.Dial("tcp", strings.TrimPrefix(x.srv.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(get)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // not reading, past the deadline
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, err := io.Copy(io.Discard, conn)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("after %d bytes: %v (want the connection closed, not a read timeout)", n, err)
	}
	if n >= int64(len(big)) {
		t.Fatalf("read %d bytes: the whole answer waited for the client", n)
	}

	// Kept alive: a second answer on the connection after the first one's
	// deadline passed arrives whole; then a stream outlives the deadline.
	conn2 := rawRequest(t, x, get)
	br := bufio.NewReader(conn2)
	for i := range 2 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		if n, _ := io.Copy(io.Discard, resp.Body); resp.StatusCode != 200 || n < int64(len(big)) {
			t.Fatalf("answer %d: %d, %d bytes", i, resp.StatusCode, n)
		}
		time.Sleep(300 * time.Millisecond)
		if i == 0 {
			_, _ = conn2.Write([]byte(get))
		}
	}
	id2 := x.start()
	_, _ = conn2.Write([]byte("GET /v1/runs/" + id2 + "/events HTTP/1.1\r\nHost: e\r\n\r\n"))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("events: %v %v", resp, err)
	}
	time.Sleep(300 * time.Millisecond)
	if r := x.post("/__admin/hermes/runs/"+id2+"/observe", `{"status":"completed"}`); r.Status != 200 {
		t.Fatalf("observe: %d %s", r.Status, r.Body)
	}
	frames, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(frames), "run.completed") || !strings.HasSuffix(string(frames), ": stream closed\n\n") {
		t.Fatalf("stream after the deadline: %q", frames)
	}
}

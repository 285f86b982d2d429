package handlers

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Every connection ends (hardening H4): after an answer given without reading
// the body, or after a body that did not arrive, the connection is closed at
// once. Before, net/http drained the unread body after the handler with no
// deadline, and a body that never came held the connection for ever.
func TestConnectionEndsAfterUnreadBody(t *testing.T) {
	b := NewBodies(1000, 1<<20, 300*time.Millisecond)
	// readFailing reads the body, wants err, and answers status.
	readFailing := func(want error, status int) func(w http.ResponseWriter, r *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			_, release, err := b.Read(w, r)
			release()
			if err != want {
				t.Errorf("Read: %v, want %v", err, want)
			}
			w.WriteHeader(status)
		}
	}
	tests := []struct {
		name, head string
		handle     func(w http.ResponseWriter, r *http.Request)
		status     int
	}{
		{"early answer (Unread)", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
			func(w http.ResponseWriter, r *http.Request) { b.Unread(w, r); w.WriteHeader(401) }, 401},
		{"body that never arrives (Read)", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
			readFailing(ErrBodyIncomplete, 400), 400},
		{"declared over the limit (Read)", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n{",
			readFailing(ErrBodyTooLarge, 413), 413},
		{"GET body that never arrives (Discard)", "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n",
			func(w http.ResponseWriter, r *http.Request) { b.Discard(w, r); w.WriteHeader(200) }, 200},
		{"chunked GET body over the limit (Discard)", "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"7d0\r\n" + strings.Repeat("x", 2000) + "\r\n",
			func(w http.ResponseWriter, r *http.Request) { b.Discard(w, r); w.WriteHeader(200) }, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(tc.handle))
			defer srv.Close()
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			began := time.Now()
			if _, err := io.WriteString(conn, tc.head); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !resp.Close {
				t.Errorf("status %d, Connection: close %v; want %d and close", resp.StatusCode, resp.Close, tc.status)
			}
			rest, err := io.ReadAll(br) // EOF once the server closes
			if took := time.Since(began); err != nil || took > 2*time.Second {
				t.Fatalf("the connection stayed open after the answer: %v after %v (read %q)", err, took, strings.TrimSpace(string(rest)))
			}
		})
	}
}

//go:build reliability

package reliability

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// H4: every connection ends. 300 clients each declare a body, send one byte
// of it and then nothing (unauthenticated POSTs answered 401, unmatched
// routes answered 404, authenticated POSTs answered 400 after --read-timeout,
// a GET with a body). Each gets its answer, and the server closes every one
// of those connections: the process's open descriptors come back to where
// they were. Before, each stayed open for ever after its answer.
func TestHardenConnectionsEndAfterAnswer(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "conn.db"), "--api-key", "k", "--read-timeout", "1s")
	c := newClient(1)
	p.healthy(c, "start")
	c.CloseIdleConnections()
	base := openFDs(t, p)
	u, _ := url.Parse(p.url)
	heads := []string{
		"POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
		"POST /nope HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
		"POST /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Length: 100\r\n\r\n{",
		"GET /v1/runs/x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Length: 10\r\n\r\n{",
	}
	const clients = 300
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	conns := make([]net.Conn, 0, clients)
	for i := range clients {
		conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			st := -1
			if _, err := io.WriteString(conn, heads[i%len(heads)]); err == nil {
				if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
					st = resp.StatusCode
					resp.Body.Close()
				}
			}
			mu.Lock()
			statuses[st]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	// The clients keep their sockets open: only the server can end them.
	var open int
	deadline := time.Now().Add(5 * time.Second)
	for {
		open = openFDs(t, p)
		if open <= base+5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("statuses %v; open descriptors: %d before, %d after %d answered clients that never sent their bodies", statuses, base, open, clients)
	for _, conn := range conns {
		conn.Close()
	}
	// The GET of an unknown run answers 404 once its body is given up on.
	if statuses[401] != clients/4 || statuses[404] != clients/2 || statuses[400] != clients/4 {
		t.Errorf("statuses %v, want %d 401s, %d 404s and %d 400s", statuses, clients/4, clients/2, clients/4)
	}
	if open > base+5 {
		t.Errorf("%d descriptors open, %d before: the server kept the answered connections", open, base)
	}
	p.healthy(newClient(1), "the half-sent bodies")
}

// openFDs counts the descriptors the process has open.
func openFDs(t *testing.T, p *proc) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

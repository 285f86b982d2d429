//go:build reliability

package reliability

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The resource bounds of hardening.md against the real binary.

// H4: a request whose declared body never arrives is answered within
// --read-timeout (the attack of issue 16 item 4 was held for ever).
func TestHardenBodyNeverArrives(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "h4.db"), "--read-timeout", "1s")
	for _, tc := range []struct{ name, head string }{
		{"GET with Content-Length 10 and no body", "GET /v1/runs/x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n"},
		{"POST with 8 of 100 bytes", "POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"input\""},
		{"control plane with 1 of 100 bytes", "POST /__admin/clock HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"},
	} {
		began := time.Now()
		st, b, err := p.raw(tc.head, nil)
		took := time.Since(began)
		t.Logf("%s: %d after %v", tc.name, st, took.Round(time.Millisecond))
		if err != nil || took > 3*time.Second {
			t.Errorf("%s: %v %d %s after %v, want an answer within the 1s read timeout", tc.name, err, st, b, took)
		}
	}
	// A head that never ends is closed.
	u, _ := url.Parse(p.url)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	began := time.Now()
	fmt.Fprint(conn, "GET /v1/runs/x HTTP/1.1\r\nHost: x\r\n")
	buf := make([]byte, 512)
	for err == nil {
		_, err = conn.Read(buf)
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("unfinished head held for %v (%v)", took, err)
	}
	p.healthy(newClient(1), "the slow clients")
}

// H2/H5: 100 concurrent 9.9 MB bodies without credentials are answered 401
// without being read; the process's peak RSS stays bounded (issue 16 item 5
// measured 1.04 GB before).
func TestHardenUnauthenticatedBodiesRSS(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "h5.db"), "--api-key", "k")
	c := newClient(4)
	p.healthy(c, "start")
	base := p.peakRSS()
	big := strings.Repeat("x", 9_900_000)
	head := fmt.Sprintf("POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(big))
	statuses := sendAll(t, p, 100, head, big)
	peak := p.peakRSS()
	t.Logf("statuses %v; VmHWM %d kB at start, %d kB after 100 × 9.9 MB unauthenticated bodies", statuses, base, peak)
	if statuses[401] < 90 {
		t.Errorf("statuses %v, want 401s", statuses)
	}
	if peak > 150_000 {
		t.Errorf("peak RSS %d kB, want under 150 MB", peak)
	}
	p.healthy(c, "the unauthenticated bodies")
}

// H1: with --admin-key, x-mockingbird-at without the admin key does not roll
// main back — also not durably: after kill -9 and a restart the keyed runs
// still replay their ids and new runs get new ids.
func TestHardenHistoryHeaderUnauthenticated(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h1.db")
	p := start(t, db, "--admin-key", "ak", "--api-key", "k")
	c := newClient(4)
	bearer := []string{"Authorization", "Bearer k"}
	ids := map[string]string{}
	for _, key := range []string{"a", "b", "c"} {
		r := p.must(c, "POST", "/v1/runs", `{"input":"synthetic"}`, append(bearer, "Idempotency-Key", key)...)
		if r.status != 202 {
			t.Fatalf("start %s: %d %s", key, r.status, r.body)
		}
		ids[key] = r.field("run_id")
	}
	adminKeyErr := `{"error":{"type":"mockingbird_admin","message":"missing or wrong x-mockingbird-admin-key"}}`
	for _, hdr := range [][]string{
		{"X-Mockingbird-At", "cp_00000001"},
		append([]string{"X-Mockingbird-At", "cp_00000001"}, bearer...),
		append([]string{"X-Mockingbird-Branch", "side", "X-Mockingbird-Admin-Key", "wrong"}, bearer...),
	} {
		r := p.must(c, "POST", "/v1/runs", `{"input":"synthetic"}`, hdr...)
		if r.status != 401 || (len(hdr) > 2 && string(r.body) != adminKeyErr) {
			t.Fatalf("%v: %d %s, want 401", hdr, r.status, r.body)
		}
	}
	check := func(when string) {
		for key, id := range ids {
			r := p.must(c, "POST", "/v1/runs", `{"input":"synthetic"}`, append(bearer, "Idempotency-Key", key)...)
			if r.status != 202 || r.field("run_id") != id || r.header.Get("Idempotency-Replayed") != "true" {
				t.Fatalf("%s: key %s: %d %s, want a replay of %s", when, key, r.status, r.body, id)
			}
		}
		r := p.must(c, "GET", "/__admin/timeline", "", "X-Mockingbird-Admin-Key", "ak")
		if strings.Contains(string(r.body), `"side"`) {
			t.Fatalf("%s: branch side exists: %s", when, r.body)
		}
	}
	check("after the refused rollbacks")
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	p = start(t, db, "--admin-key", "ak", "--api-key", "k")
	check("after kill -9 and a restart")
	r := p.must(c, "POST", "/v1/runs", `{"input":"synthetic"}`, bearer...)
	for _, id := range ids {
		if r.field("run_id") == id {
			t.Fatalf("run id %s handed out again", id)
		}
	}
}

// H10: listening beyond loopback without an admin key says so at start; with
// one it does not. H4: SIGTERM with a stalled upload waits --shutdown-grace,
// then says what it cut.
func TestHardenOpenNetworkWarnAndShutdownGrace(t *testing.T) {
	dir := t.TempDir()
	const warn = "the control plane is open to the network"
	p := start(t, filepath.Join(dir, "open.db"), "--host", "0.0.0.0", "--log", "pretty", "--shutdown-grace", "500ms")
	if out := p.out.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, warn) {
		t.Errorf("no WARN line on 0.0.0.0 without an admin key:\n%s", out)
	}
	// A stalled upload: 8 of 100 bytes, then nothing.
	u, _ := url.Parse(p.url)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"input\"")
	time.Sleep(200 * time.Millisecond)
	sent := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("still running 10 s after SIGTERM:\n%s", p.out)
	}
	took := time.Since(sent)
	t.Logf("exit after %v with a stalled upload and --shutdown-grace 500ms", took.Round(time.Millisecond))
	if took > 3*time.Second || !strings.Contains(p.out.String(), "shutdown grace elapsed") {
		t.Errorf("shutdown took %v; output:\n%s", took, p.out)
	}
	q := start(t, filepath.Join(dir, "locked.db"), "--host", "0.0.0.0", "--log", "pretty", "--admin-key", "ak")
	if strings.Contains(q.out.String(), warn) {
		t.Errorf("WARN line with an admin key:\n%s", q.out)
	}
}

// H5: 100 concurrent 9.9 MB bodies with credentials: at most
// --max-inflight-body-bytes (64 MiB) of them are held at once; the rest wait
// their turn up to --read-timeout or get 503 server_busy; peak RSS stays
// bounded.
func TestHardenInflightBodiesRSS(t *testing.T) {
	p := start(t, filepath.Join(t.TempDir(), "inflight.db"), "--api-key", "k", "--read-timeout", "2s")
	c := newClient(4)
	p.healthy(c, "start")
	base := p.peakRSS()
	big := strings.Repeat("x", 9_900_000) // not JSON: read in full, then 400
	head := fmt.Sprintf("POST /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Length: %d\r\n\r\n", len(big))
	statuses := sendAll(t, p, 100, head, big)
	peak := p.peakRSS()
	t.Logf("statuses %v; VmHWM %d kB at start, %d kB after 100 × 9.9 MB authenticated bodies", statuses, base, peak)
	// -1: a 503 closes the connection on the unread rest of the body, and a
	// client still writing may see the reset before the answer.
	if statuses[400] == 0 || statuses[400]+statuses[503]+statuses[-1] != 100 {
		t.Errorf("statuses %v, want 400s (read, not JSON) and 503s or resets", statuses)
	}
	if peak > 250_000 {
		t.Errorf("peak RSS %d kB, want under 250 MB (64 MiB of bodies in flight)", peak)
	}
	p.healthy(c, "the bodies")
}

// sendAll sends n copies of the raw request head+body at once and counts the
// answers by status (-1: the connection closed while the client still wrote).
// A 503 must be the in-flight bound's exact envelope.
func sendAll(t *testing.T, p *proc, n int, head, body string) map[int]int {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, b, err := p.raw(head, strings.NewReader(body))
			switch {
			case err != nil:
				st = -1
			case st == 503 && string(b) != hermesErr("Request body backlog full.", "server_busy"):
				t.Errorf("503 body %s", b)
			}
			mu.Lock()
			statuses[st]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return statuses
}

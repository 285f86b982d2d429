//go:build reliability

package reliability

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// SIGTERM while an SSE stream is open and a (fault-delayed) poll is in flight:
// the poll still gets its answer, the stream ends, the process exits 0
// promptly, and the database reopens with the keyed run interrupted and its
// key replaying the same id (cmd: graceful shutdown; runs-api §10.4).
func TestGracefulShutdown(t *testing.T) {
	db := filepath.Join(t.TempDir(), "term.db")
	p := start(t, db)
	c := newClient(4)
	body := `{"input":"synthetic shutdown"}`
	r := p.must(c, "POST", "/v1/runs", body, "Idempotency-Key", "term")
	if r.status != 202 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	id := r.field("run_id")
	keyless := p.must(c, "POST", "/v1/runs", body).field("run_id")

	// An open stream.
	req, _ := http.NewRequest("GET", p.url+"/v1/runs/"+id+"/events", nil)
	stream, err := newClient(1).Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("events: %v %v", err, stream)
	}
	streamEnded := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, stream.Body)
		stream.Body.Close()
		streamEnded <- err
	}()

	// A request in flight: the next poll is delayed 1500 ms by a fault rule.
	if r := p.must(c, "POST", "/__admin/faults", `{"operationId":"RunGet","delayMs":1500,"count":1}`); r.status != 201 {
		t.Fatalf("fault: %d %s", r.status, r.body)
	}
	type result struct {
		r   reply
		err error
	}
	inflight := make(chan result, 1)
	go func() {
		r, err := call(context.Background(), c, "GET", p.url+"/v1/runs/"+id, "")
		inflight <- result{r, err}
	}()
	time.Sleep(300 * time.Millisecond)

	sent := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("still running 10 s after SIGTERM:\n%s", p.out)
	}
	took := time.Since(sent)
	t.Logf("exit %v %s after SIGTERM (stream open, poll in flight)", p.err, took.Round(time.Millisecond))
	if p.err != nil || p.cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("exit: %v, want status 0\n%s", p.err, p.out)
	}
	if took > 5*time.Second {
		t.Errorf("shutdown took %v, want under 5 s", took)
	}
	select {
	case got := <-inflight:
		if got.err != nil || got.r.status != 200 || got.r.field("run_id") != id || got.r.field("status") != "queued" {
			t.Errorf("in-flight poll: %v %d %s, want 200 and the queued record", got.err, got.r.status, got.r.body)
		}
	case <-time.After(5 * time.Second):
		t.Error("the in-flight poll never finished")
	}
	select {
	case <-streamEnded:
	case <-time.After(5 * time.Second):
		t.Error("the stream did not end")
	}

	// The database reopens cleanly.
	q := start(t, db)
	r = q.must(c, "GET", "/v1/runs/"+id, "")
	if r.status != 200 || r.field("status") != "interrupted" {
		t.Fatalf("after restart: %d %s", r.status, r.body)
	}
	if r := q.must(c, "POST", "/v1/runs", body, "Idempotency-Key", "term"); string(r.body) != `{"run_id":"`+id+`","status":"interrupted","replayed":true}` {
		t.Fatalf("replay after restart: %d %s", r.status, r.body)
	}
	if r := q.must(c, "GET", "/v1/runs/"+keyless, ""); r.status != 404 {
		t.Fatalf("keyless after restart: %d %s", r.status, r.body)
	}
	if next := q.must(c, "POST", "/v1/runs", body).field("run_id"); next == id || next == keyless || next == "" {
		t.Fatalf("new run id %q repeats an earlier one", next)
	}
	q.healthy(c, "restart")
}

package emulator_test

import (
	"bufio"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/gen"
)

// Close waits for a request in flight (held by a fault delay) to be answered,
// ends an open SSE stream at once without ": stream closed", refuses new
// connections afterwards, and is idempotent (issue 8).
func TestCloseWaitsForRequestsAndEndsStreams(t *testing.T) {
	srv, err := emulator.New(emulator.Options{SSEKeepalive: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := t.Context()
	ctl := srv.Control()
	id := startRun(t, srv.URL(), "")

	// An open stream.
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL()+"/v1/runs/"+id+"/events", nil)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("subscribe: %v %v", err, stream)
	}
	defer stream.Body.Close()
	streamed := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(bufio.NewReader(stream.Body))
		streamed <- string(b)
	}()

	// A poll delayed by 400 ms of real time.
	if _, err := ctl.AddFault(ctx, map[string]any{"operationId": "RunGet", "count": 1, "delayMs": 400}); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		status int
		err    error
	}
	polled := make(chan answer, 1)
	go func() {
		resp, err := http.Get(srv.URL() + "/v1/runs/" + id)
		if err != nil {
			polled <- answer{0, err}
			return
		}
		resp.Body.Close()
		polled <- answer{resp.StatusCode, nil}
	}()
	time.Sleep(100 * time.Millisecond) // the poll is now waiting in the delay

	began := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	took := time.Since(began)
	select {
	case a := <-polled:
		if a.err != nil || a.status != 200 {
			t.Fatalf("in-flight poll: %d %v, want 200", a.status, a.err)
		}
	default:
		t.Fatal("Close returned before the in-flight poll was answered")
	}
	if took < 200*time.Millisecond || took > 5*time.Second {
		t.Fatalf("Close took %v, want the rest of the 400 ms delay", took)
	}
	select {
	case s := <-streamed:
		if strings.Contains(s, "stream closed") {
			t.Fatalf("stream ended with %q", s)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the open stream did not end on Close")
	}
	if _, err := http.Get(srv.URL() + "/health"); err == nil {
		t.Fatal("a request after Close succeeded")
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// Without a listener, Client and Control call Handler() in-process.
func TestNoListenerClients(t *testing.T) {
	srv, err := emulator.New(emulator.Options{NoListener: true, AdminKey: "k", ClockStart: 1700000000000, FreezeClock: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := t.Context()
	if srv.URL() != "" {
		t.Fatalf("URL() = %q", srv.URL())
	}
	api := srv.Client()
	created, err := api.RunCreateWithResponse(ctx, nil, gen.RunCreateRequest{Input: "hi"})
	if err != nil || created.StatusCode() != 202 || created.JSON202.RunId != run1 {
		t.Fatalf("create: %v %s", err, created.Body)
	}
	run, err := srv.Control().Observe(ctx, run1, map[string]string{"status": "failed", "error": "boom"})
	if err != nil || run.Status != "failed" || *run.Error != "boom" {
		t.Fatalf("observe: %v %+v", err, run)
	}
	got, err := api.RunGetWithResponse(ctx, run1, nil)
	if err != nil || got.StatusCode() != 200 || string(got.JSON200.Status) != "failed" {
		t.Fatalf("get: %v %s", err, got.Body)
	}
	// A dropped response is a transport error, as over a socket.
	if _, err := srv.Control().ApplyPreset(ctx, "hermes_submit_accepted_drop", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := api.RunCreateWithResponse(ctx, nil, gen.RunCreateRequest{Input: "hi"}); err == nil || !strings.Contains(err.Error(), "connection closed without a response") {
		t.Fatalf("dropped create: %v", err)
	}
}

// URL is http://<host>:<actual port> with the host as given (runs-api §15).
func TestURLKeepsHost(t *testing.T) {
	srv, err := emulator.New(emulator.Options{Host: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !regexp.MustCompile(`^http://localhost:[0-9]+$`).MatchString(srv.URL()) {
		t.Fatalf("URL() = %q", srv.URL())
	}
	resp, err := http.Get(srv.URL() + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v %v", resp, err)
	}
	resp.Body.Close()
}

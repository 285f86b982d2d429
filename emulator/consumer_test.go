package emulator_test

// A consumer test in the style of a real application: the application talks to
// the Hermes API with its own net/http client (appClient below, not the
// generated one) — submit with an idempotency key and retry on a lost
// response, poll until terminal under a deadline, stop — while the test plays
// the agent and the operator through the control plane (package control).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/control"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// appClient is the application's own Hermes client.
type appClient struct {
	base string
	hc   *http.Client
}

// appError is a non-2xx Hermes answer as the application sees it.
type appError struct {
	status  int
	message string
	code    string
}

func (e *appError) Error() string {
	return fmt.Sprintf("hermes %d: %s (%s)", e.status, e.message, e.code)
}

func (a *appClient) call(ctx context.Context, method, path, key string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var env struct {
			Error struct {
				Message string  `json:"message"`
				Code    *string `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(b, &env)
		e := &appError{status: resp.StatusCode, message: env.Error.Message}
		if env.Error.Code != nil {
			e.code = *env.Error.Code
		}
		return e
	}
	return json.Unmarshal(b, out)
}

type appAccepted struct {
	RunID    string `json:"run_id"`
	Status   string `json:"status"`
	Replayed bool   `json:"replayed"`
}

type appRun struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	Output string `json:"output"`
	Error  string `json:"error"`
}

// submit sends the task with key, retrying on a transport error (the response
// was lost: the run may exist) with the same key, as the API recommends.
// (net/http also resends a keyed request by itself when a reused keep-alive
// connection closes before any response; appSetup's fresh transport makes the
// first attempt use a new connection, so the loss is seen here.)
func (a *appClient) submit(ctx context.Context, key, input string, attempts int) (appAccepted, int, error) {
	var last error
	for i := 1; i <= attempts; i++ {
		var out appAccepted
		err := a.call(ctx, "POST", "/v1/runs", key, map[string]string{"input": input}, &out)
		var he *appError
		if err == nil || errors.As(err, &he) {
			return out, i, err
		}
		last = err
	}
	return appAccepted{}, attempts, last
}

func (a *appClient) get(ctx context.Context, id string) (appRun, error) {
	var run appRun
	err := a.call(ctx, "GET", "/v1/runs/"+id, "", nil, &run)
	return run, err
}

func (a *appClient) stop(ctx context.Context, id string) (map[string]any, error) {
	var out map[string]any
	err := a.call(ctx, "POST", "/v1/runs/"+id+"/stop", "", nil, &out)
	return out, err
}

// wait polls every interval until the run is terminal or ctx ends.
func (a *appClient) wait(ctx context.Context, id string, interval time.Duration) (appRun, int, error) {
	for polls := 1; ; polls++ {
		run, err := a.get(ctx, id)
		if err != nil {
			return run, polls, err
		}
		switch run.Status {
		case "completed", "failed", "cancelled", "interrupted":
			return run, polls, nil
		}
		select {
		case <-ctx.Done():
			return run, polls, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// appSetup starts a private emulator with a frozen clock, the application's
// client and the test's control client.
func appSetup(t *testing.T, timeout time.Duration) (*appClient, *control.Client, *emulator.Server) {
	t.Helper()
	srv := emulatortest.New(t, emulator.Options{ClockStart: 1700000000000, FreezeClock: true})
	hc := &http.Client{Timeout: timeout, Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	return &appClient{base: srv.URL(), hc: hc}, srv.Control(), srv
}

// startRun submits {"input":"synthetic"} with plain net/http, with key when
// not "", and returns the run id.
func startRun(t *testing.T, base, key string) string {
	t.Helper()
	a := &appClient{base: base, hc: http.DefaultClient}
	acc, _, err := a.submit(t.Context(), key, "synthetic", 1)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	return acc.RunID
}

// A lost 202 (preset hermes_submit_accepted_drop) and the retry with the same
// key: one run, the retry replays it (acceptance 84; runs-api §6.1 step 14).
func TestConsumerLostResponseRetry(t *testing.T) {
	app, ctl, _ := appSetup(t, 5*time.Second)
	ctx := t.Context()
	if _, err := ctl.ApplyPreset(ctx, "hermes_submit_accepted_drop", nil); err != nil {
		t.Fatal(err)
	}
	acc, attempts, err := app.submit(ctx, "order-1", "summarise", 3)
	if err != nil {
		t.Fatal(err)
	}
	want := appAccepted{RunID: run1, Status: "queued", Replayed: true}
	if acc != want || attempts != 2 {
		t.Fatalf("submit = %+v after %d attempts, want %+v after 2", acc, attempts, want)
	}
	// Exactly one run was created: the next one gets the second id.
	if got := startRun(t, app.base, ""); got != "run_57703349705258663741626769756c5a" {
		t.Fatalf("next run id %s: the lost submission created more than one run", got)
	}
	// Without a key, the application cannot tell: the lost submission created
	// the third run, and the retry creates a fourth.
	if _, err := ctl.ApplyPreset(ctx, "hermes_submit_accepted_drop", nil); err != nil {
		t.Fatal(err)
	}
	acc, attempts, err = app.submit(ctx, "", "summarise", 2)
	if err != nil || acc.Replayed || acc.RunID != "run_556c454e564275594a696b6e654d4354" || attempts != 2 {
		t.Fatalf("keyless retry = %+v, %d, %v", acc, attempts, err)
	}
}

// Polling until terminal with a deadline: the agent (the test) moves the run
// to running and completed while the application polls; a run that never
// finishes ends the wait with the deadline.
func TestConsumerPollUntilTerminal(t *testing.T) {
	app, ctl, _ := appSetup(t, 5*time.Second)
	ctx := t.Context()
	id := startRun(t, app.base, "order-2")
	agent := make(chan error, 1)
	go func() {
		time.Sleep(30 * time.Millisecond)
		if _, err := ctl.Observe(ctx, id, map[string]any{"status": "running"}); err != nil {
			agent <- err
			return
		}
		time.Sleep(30 * time.Millisecond)
		_, err := ctl.Observe(ctx, id, map[string]any{"status": "completed", "output": "Three findings."})
		agent <- err
	}()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	run, polls, err := app.wait(wctx, id, 5*time.Millisecond)
	if err != nil || <-agent != nil {
		t.Fatalf("wait: %v", err)
	}
	if run != (appRun{RunID: id, Status: "completed", Output: "Three findings."}) || polls < 2 {
		t.Fatalf("wait = %+v after %d polls", run, polls)
	}

	// Nobody finishes the second run: the deadline ends the wait.
	id2 := startRun(t, app.base, "")
	dctx, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	began := time.Now()
	run, _, err = app.wait(dctx, id2, 20*time.Millisecond)
	// On a loaded machine the deadline may pass before the first poll answers:
	// then the wait saw nothing, which is right too.
	if !errors.Is(err, context.DeadlineExceeded) || run.Status != "queued" && run != (appRun{}) {
		t.Fatalf("wait without an agent = %+v, %v; want queued (or nothing seen) and the deadline", run, err)
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Fatalf("deadline honoured after %v", d)
	}
	if run, err := app.get(ctx, id2); err != nil || run.Status != "queued" {
		t.Fatalf("after the wait: %+v, %v; want queued", run, err)
	}
}

// Stopping: the application asks, the agent confirms cancellation; a stop on
// the cancelled run answers the record unchanged (runs-api §6.3).
func TestConsumerStop(t *testing.T) {
	app, ctl, _ := appSetup(t, 5*time.Second)
	ctx := t.Context()
	id := startRun(t, app.base, "")
	if _, err := ctl.Observe(ctx, id, map[string]any{"status": "running"}); err != nil {
		t.Fatal(err)
	}
	out, err := app.stop(ctx, id)
	if err != nil || fmt.Sprint(out) != fmt.Sprint(map[string]any{"run_id": id, "status": "stopping"}) {
		t.Fatalf("stop = %v, %v", out, err)
	}
	if run, err := app.get(ctx, id); err != nil || run.Status != "stopping" {
		t.Fatalf("after stop: %+v %v", run, err)
	}
	if _, err := ctl.Observe(ctx, id, map[string]any{"status": "cancelled"}); err != nil {
		t.Fatal(err)
	}
	run, _, err := app.wait(ctx, id, time.Millisecond)
	if err != nil || run.Status != "cancelled" {
		t.Fatalf("wait = %+v, %v", run, err)
	}
	out, err = app.stop(ctx, id)
	if err != nil || out["status"] != "cancelled" || out["last_event"] != "run.cancelled" {
		t.Fatalf("stop on a cancelled run = %v, %v", out, err)
	}
	_, err = app.stop(ctx, "run_missing")
	var he *appError
	if !errors.As(err, &he) || *he != (appError{404, "Run not found: run_missing", "run_not_found"}) {
		t.Fatalf("stop missing = %v", err)
	}
}

// The poll-timeout preset against a client deadline: the delayed poll (1000 ms)
// fails the 200 ms client timeout; the retry is answered at once.
func TestConsumerPollTimeout(t *testing.T) {
	app, ctl, _ := appSetup(t, 200*time.Millisecond)
	ctx := t.Context()
	id := startRun(t, app.base, "order-3")
	rules, err := ctl.ApplyPreset(ctx, "hermes_poll_timeout", nil)
	if err != nil || len(rules) != 1 || rules[0].DelayMs != 1000 || rules[0].ID != "hermes_poll_timeout" {
		t.Fatalf("preset = %+v, %v", rules, err)
	}
	began := time.Now()
	_, err = app.get(ctx, id)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("delayed poll = %v, want a client timeout", err)
	}
	if d := time.Since(began); d < 200*time.Millisecond || d > 900*time.Millisecond {
		t.Fatalf("timed out after %v", d)
	}
	run, err := app.get(ctx, id)
	if err != nil || run.Status != "queued" {
		t.Fatalf("retry = %+v, %v", run, err)
	}
}

// Expiry: a keyless completed run is swept once it is older than 3600 s
// (runs-api §11.2): after +3600001 ms and a sweep, the poll is 404; a keyed
// run comes back from its reservation.
func TestConsumerExpiry(t *testing.T) {
	app, ctl, _ := appSetup(t, 5*time.Second)
	ctx := t.Context()
	keyless := startRun(t, app.base, "")
	keyed := startRun(t, app.base, "order-4")
	for _, id := range []string{keyless, keyed} {
		if _, err := ctl.Observe(ctx, id, map[string]any{"status": "completed", "output": "done"}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := ctl.Clock().Advance(ctx, 3600001*time.Millisecond)
	if err != nil || st.Now != 1700003600001 || !st.Frozen {
		t.Fatalf("advance = %+v, %v", st, err)
	}
	if run, err := app.get(ctx, keyless); err != nil || run.Status != "completed" {
		t.Fatalf("before the sweep: %+v %v", run, err) // the tick B+3600 keeps it (age exactly 3600)
	}
	removed, err := ctl.Sweep(ctx)
	if err != nil || removed != 2 {
		t.Fatalf("sweep removed %d, %v; want 2", removed, err)
	}
	_, err = app.get(ctx, keyless)
	var he *appError
	if !errors.As(err, &he) || *he != (appError{404, "Run not found: " + keyless, "run_not_found"}) {
		t.Fatalf("expired keyless run = %v", err)
	}
	if run, err := app.get(ctx, keyed); err != nil || run.Status != "completed" || run.Output != "done" {
		t.Fatalf("keyed run after the sweep = %+v, %v", run, err)
	}
}

package control_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/control"
	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
)

// Play the agent and the operator in a test: freeze the clock, script a run,
// move time forward, sweep, and read a control error.
func Example() {
	srv, err := emulator.New(emulator.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	ctl := control.New(srv.URL(), control.Namespace("checkout")) // or srv.Control(control.Namespace("checkout"))

	clock, _ := ctl.Clock().FreezeAt(ctx, 1700000000000)
	fmt.Println("clock:", clock.Time().Format(time.RFC3339), clock.Frozen)

	// The application submits a run (here with plain net/http).
	req, _ := http.NewRequest("POST", srv.URL()+"/v1/runs", strings.NewReader(`{"input":"hi"}`))
	req.Header.Set("X-Mockingbird-Namespace", "checkout")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	var accepted struct {
		RunID string `json:"run_id"`
	}
	json.NewDecoder(resp.Body).Decode(&accepted)
	resp.Body.Close()
	id := accepted.RunID

	// The agent reports progress and finishes.
	ev, _ := ctl.Events(ctx, id, map[string]any{"event": "tool.started", "tool": "terminal", "preview": "ls"})
	fmt.Println("events:", ev.Emitted)
	run, err := ctl.Observe(ctx, id, map[string]any{"status": "completed", "output": "done"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("observed:", run.Status, *run.Output, *run.LastEvent)

	// An hour and a millisecond later a sweep removes the keyless run.
	ctl.Clock().Advance(ctx, time.Hour+time.Millisecond)
	removed, _ := ctl.Sweep(ctx)
	fmt.Println("swept:", removed)

	// Errors carry the status and the envelope.
	_, err = ctl.Observe(ctx, id, map[string]any{"status": "running"})
	var ce *control.Error
	if errors.As(err, &ce) {
		fmt.Println("error:", ce.Status, ce.Code, ce.Message)
	}
	// Output:
	// clock: 2023-11-14T22:13:20Z true
	// events: 1
	// observed: completed done run.completed
	// swept: 1
	// error: 404 run_not_found Run not found: run_52354e706a726642417546715457526c
}

// Lose the response of the next submission, then recover with the same
// idempotency key.
func ExampleClient_ApplyPreset() {
	srv, err := emulator.New(emulator.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()

	rules, err := srv.Control().ApplyPreset(ctx, "hermes_submit_accepted_drop", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rules[0].ID, rules[0].OperationID, rules[0].Effect, *rules[0].Count)

	// net/http itself resends a request that carries an Idempotency-Key when
	// a reused keep-alive connection closes before any response: the lost
	// response would be recovered silently. Without keep-alives every attempt
	// is visible.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	submit := func() (string, error) {
		req, _ := http.NewRequest("POST", srv.URL()+"/v1/runs", strings.NewReader(`{"input":"hi"}`))
		req.Header.Set("Idempotency-Key", "order-7")
		resp, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), nil
	}
	if _, err := submit(); err != nil {
		fmt.Println("first attempt: no response")
	}
	body, _ := submit()
	fmt.Println("retry:", body)
	// Output:
	// hermes_submit_accepted_drop RunCreate hermes.accepted_drop 1
	// first attempt: no response
	// retry: {"run_id":"run_4e685a726271445348426a4a70783364","status":"queued","replayed":true}
}

// List the runs the emulator holds, page by page, look at one of them, and
// verify WireMock-style how often the application called an operation.
func ExampleClient_Runs() {
	srv, err := emulator.New(emulator.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	ctl := srv.Control()
	ctl.Clock().FreezeAt(ctx, 1700000000000)
	for range 3 {
		resp, err := http.Post(srv.URL()+"/v1/runs", "application/json", strings.NewReader(`{"input":"hi"}`))
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		ctl.Clock().Advance(ctx, time.Second)
	}

	page, err := ctl.Runs(ctx, control.RunsQuery{Limit: 2})
	if err != nil {
		log.Fatal(err)
	}
	for page.Next != nil {
		fmt.Println("page of", len(page.Runs), "newest", page.Runs[0].RunId)
		page, _ = ctl.Runs(ctx, control.RunsQuery{Limit: 2, Cursor: *page.Next})
	}
	fmt.Println("last page of", len(page.Runs), "oldest", page.Runs[len(page.Runs)-1].RunId)

	view, _ := ctl.Run(ctx, page.Runs[0].RunId)
	fmt.Println(view.Status, view.Transport, view.Keyed, view.EventsBuffered)

	op, status := "RunCreate", 202
	n, _ := ctl.Count(ctx, genadmin.CountFilter{OperationId: &op, Status: &status})
	fmt.Println("submissions:", n)
	// Output:
	// page of 2 newest run_77774b677732707967695639616f3561
	// last page of 1 oldest run_4e685a726271445348426a4a70783364
	// queued buffering false 0
	// submissions: 3
}

package control

import (
	"context"
	"strconv"

	"github.com/hermes-emulator/hermes-emulator/gen"
	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
)

// The Hermes controls (controls §11) and the run views.

// Observe scripts what the executor reports for run runID (controls §11.1):
// body is the observation, e.g. {"status":"completed","output":"done"} as a
// map, a struct or raw JSON. It returns the full new record. (A record whose
// echoed model or session_id holds a non-finite float, wire.md §3.1, is not
// strict JSON and fails to decode; read such a run with a raw GET.)
func (c *Client) Observe(ctx context.Context, runID string, body any) (*gen.Run, error) {
	if err := need("Observe", "run id", runID); err != nil {
		return nil, err
	}
	rd, err := encode(body)
	if err != nil {
		return nil, err
	}
	var run gen.Run
	resp, err := c.api.HermesObserveWithBody(ctx, runID, nil, jsonType, rd)
	if err := c.result(resp, err, &run); err != nil {
		return nil, err
	}
	return &run, nil
}

// EventsResult is the answer of Events.
type EventsResult struct {
	RunID    string `json:"run_id"`
	Emitted  int    `json:"emitted"`  // events emitted
	Buffered int    `json:"buffered"` // events appended to the run's SSE transport
}

// Events emits non-status events on run runID, in order (controls §11.2),
// e.g. map[string]any{"event": "message.delta", "delta": "Hi"}.
func (c *Client) Events(ctx context.Context, runID string, events ...any) (EventsResult, error) {
	if events == nil {
		events = []any{}
	}
	var out EventsResult
	if err := need("Events", "run id", runID); err != nil {
		return out, err
	}
	rd, err := encode(map[string]any{"events": events})
	if err != nil {
		return out, err
	}
	resp, err := c.api.HermesEventsWithBody(ctx, runID, nil, jsonType, rd)
	return out, c.result(resp, err, &out)
}

// Deliver consumes the queued steer texts of run runID (controls §11.3) and
// returns how many were removed.
func (c *Client) Deliver(ctx context.Context, runID string) (int, error) {
	var out genadmin.DeliverResult
	if err := need("Deliver", "run id", runID); err != nil {
		return 0, err
	}
	resp, err := c.api.HermesDeliver(ctx, runID, nil, genadmin.Empty{})
	return out.Delivered, c.result(resp, err, &out)
}

// Owner is the gateway that Restart says owns the surviving reservations.
type Owner string

// The two owners of controls §11.5.
const (
	Stale Owner = "stale" // the old process is gone: unfinished keyed runs become interrupted
	Alive Owner = "alive" // the old process still runs them: they stay as they are, not local
)

// RestartResult is the answer of Restart.
type RestartResult struct {
	Owner     Owner `json:"owner"`
	Retained  int   `json:"retained"`  // reservations kept
	Discarded int   `json:"discarded"` // cached runs without a reservation, gone
}

// Restart models a gateway restart of the namespace (controls §11.5,
// runs-api §10.3).
func (c *Client) Restart(ctx context.Context, owner Owner) (RestartResult, error) {
	var out RestartResult
	rd, _ := encode(map[string]string{"owner": string(owner)})
	resp, err := c.api.HermesRestartWithBody(ctx, nil, jsonType, rd)
	return out, c.result(resp, err, &out)
}

// Scope sets the namespace's scope to profile and identity (controls §11.6);
// runs of another scope are invisible (runs-api §9).
func (c *Client) Scope(ctx context.Context, profile, identity string) error {
	resp, err := c.api.HermesScope(ctx, nil, genadmin.HermesScopeJSONRequestBody{Profile: profile, Identity: identity})
	return c.result(resp, err, nil)
}

// Sweep runs one retention sweep now (controls §11.7, runs-api §11.2) and
// returns the number of cached runs removed.
func (c *Client) Sweep(ctx context.Context) (int, error) {
	var out genadmin.SweepResult
	resp, err := c.api.HermesSweep(ctx, nil, genadmin.Empty{})
	return out.CacheRemoved, c.result(resp, err, &out)
}

// Drain sets or clears the namespace's drain flag (controls §11.4): while
// set, RunCreate answers 503 gateway_draining.
func (c *Client) Drain(ctx context.Context, draining bool) error {
	resp, err := c.api.HermesDrainSet(ctx, nil, genadmin.Draining{Draining: draining})
	return c.result(resp, err, nil)
}

// Draining reports the namespace's drain flag.
func (c *Client) Draining(ctx context.Context) (bool, error) {
	var out genadmin.Draining
	resp, err := c.api.HermesDrainGet(ctx, nil)
	return out.Draining, c.result(resp, err, &out)
}

// Reset clears the namespace's state, or every namespace's with all
// (controls §4.3), and returns the namespaces reset. Fault rules, the journal,
// metrics and the clock are kept.
func (c *Client) Reset(ctx context.Context, all bool) ([]string, error) {
	p := &genadmin.ResetParams{}
	if all {
		one := genadmin.ResetParamsAllN1
		p.All = &one
	}
	var out genadmin.ResetResult
	resp, err := c.api.Reset(ctx, p, genadmin.Empty{})
	return out.Reset, c.result(resp, err, &out)
}

// RunsQuery selects a page of Runs; zero fields are left out.
type RunsQuery struct {
	Status string // only runs in this status
	Limit  int    // page size, 1–1000 (default 100)
	Cursor string // the Next of the previous page
}

// Runs lists the namespace's runs, newest first, one page at a time: pass the
// page's Next (nil on the last page) as the next query's Cursor.
func (c *Client) Runs(ctx context.Context, q RunsQuery) (genadmin.RunPage, error) {
	p := &genadmin.HermesRunsListParams{}
	if q.Status != "" {
		st := genadmin.HermesRunsListParamsStatus(q.Status)
		p.Status = &st
	}
	if q.Limit != 0 {
		s := strconv.Itoa(q.Limit)
		p.Limit = &s
	}
	if q.Cursor != "" {
		p.Cursor = &q.Cursor
	}
	var out genadmin.RunPage
	resp, err := c.api.HermesRunsList(ctx, p)
	return out, c.result(resp, err, &out)
}

// Run returns one run's full view: summary, record, reservation keys, pending
// approvals, queued steer texts and SSE transport counts.
func (c *Client) Run(ctx context.Context, runID string) (genadmin.RunView, error) {
	var out genadmin.RunView
	if err := need("Run", "run id", runID); err != nil {
		return out, err
	}
	resp, err := c.api.HermesRunGet(ctx, runID, nil)
	return out, c.result(resp, err, &out)
}

// Package control is a small Go client of the emulator's control plane
// (/__admin, controls.md): script runs (observe, events, steer delivery),
// move the clock, restart the gateway, set the scope, sweep, drain, and add
// or remove fault rules — the things a test does between the calls of the
// application it tests.
//
//	ctl := control.New(srv.URL(), control.Namespace("t1"))
//	if _, err := ctl.Clock().FreezeAt(ctx, 1700000000000); err != nil { … }
//	run, err := ctl.Observe(ctx, runID, map[string]any{"status": "completed", "output": "done"})
//
// Every method returns a typed result or an error; a control answer outside
// 2xx is an *Error carrying the status and the envelope's message (and code,
// for the Hermes controls). The package depends only on the contract's
// generated types (package gen), not on the emulator, so it works against any
// emulator: in-process, a binary, or a container.
package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-emulator/hermes-emulator/gen"
)

// Client calls the control plane of one emulator, in one namespace. It is
// safe for concurrent use; a Client is immutable after New.
type Client struct {
	base     string
	hc       *http.Client
	ns       string // "" = no x-mockingbird-namespace header (the default namespace)
	adminKey string
}

// Option configures a Client.
type Option func(*Client)

// Namespace sends x-mockingbird-namespace: ns with every request, so the
// controls act on that namespace (controls §1 "Admin namespace"). Default: no
// header, i.e. the namespace "default".
func Namespace(ns string) Option { return func(c *Client) { c.ns = ns } }

// AdminKey sends x-mockingbird-admin-key: key with every request, for an
// emulator started with an admin key (controls §1 "Admin key"). "" sends none.
func AdminKey(key string) Option { return func(c *Client) { c.adminKey = key } }

// HTTPClient makes the Client send its requests with hc (default
// http.DefaultClient).
func HTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// New returns a Client of the emulator at baseURL, e.g. "http://127.0.0.1:8827"
// (a trailing slash is ignored). It does not contact the emulator.
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimSuffix(baseURL, "/"), hc: http.DefaultClient}
	for _, o := range opts {
		o(c)
	}
	return c
}

// In returns a copy of c that acts on namespace ns.
func (c *Client) In(ns string) *Client {
	d := *c
	d.ns = ns
	return &d
}

// Error is a control answer outside 2xx. Message, Type and Code come from the
// body's envelope: the admin envelope {"error":{"type":"mockingbird_admin",
// "message":…}} of the generic routes, or the Hermes envelope
// {"error":{"message":…,"type":…,"code":…}} of the Hermes controls (controls
// §1 "Envelopes"); Code is "" when null or absent.
type Error struct {
	Method, Path string // the control request, e.g. "POST", "/__admin/hermes/sweep"
	Status       int
	Type         string
	Message      string
	Code         string
	Body         []byte // the raw response body
}

// Error renders "control: <METHOD> <path>: <status> <message>" and, when
// there is one, " (<code>)".
func (e *Error) Error() string {
	s := fmt.Sprintf("control: %s %s: %d %s", e.Method, e.Path, e.Status, e.Message)
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	return s
}

// newError reads the envelope of a non-2xx body; a body that is not an
// envelope leaves Message as the body text.
func newError(method, path string, status int, body []byte) *Error {
	e := &Error{Method: method, Path: path, Status: status, Body: body, Message: strings.TrimSpace(string(body))}
	var env struct {
		Error *struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil {
		e.Message, e.Type = env.Error.Message, env.Error.Type
		if env.Error.Code != nil {
			e.Code = *env.Error.Code
		}
	}
	return e
}

// do sends method path with body (nil = no body; json.RawMessage and []byte
// verbatim; anything else JSON-encoded) and decodes a 2xx answer into out
// (when not nil).
func (c *Client) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case json.RawMessage:
		rd = bytes.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("control: %s %s: encode body: %w", method, path, err)
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.ns != "" {
		req.Header.Set("X-Mockingbird-Namespace", c.ns)
	}
	if c.adminKey != "" {
		req.Header.Set("X-Mockingbird-Admin-Key", c.adminKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("control: %s %s: read: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return newError(method, path, resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("control: %s %s: decode %s: %w", method, path, b, err)
	}
	return nil
}

func runPath(runID, tail string) string {
	return "/__admin/hermes/runs/" + url.PathEscape(runID) + tail
}

// Observe scripts what the executor reports for run runID (controls §11.1):
// body is the observation, e.g. {"status":"completed","output":"done"} as a
// map, a struct or raw JSON. It returns the full new record. (A record whose
// echoed model or session_id holds a non-finite float, wire.md §3.1, is not
// strict JSON and fails to decode; read such a run with a raw GET.)
func (c *Client) Observe(ctx context.Context, runID string, body any) (*gen.Run, error) {
	var run gen.Run
	if err := c.do(ctx, "POST", runPath(runID, "/observe"), body, &run); err != nil {
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
	err := c.do(ctx, "POST", runPath(runID, "/events"), map[string]any{"events": events}, &out)
	return out, err
}

// Deliver consumes the queued steer texts of run runID (controls §11.3) and
// returns how many were removed.
func (c *Client) Deliver(ctx context.Context, runID string) (int, error) {
	var out struct {
		Delivered int `json:"delivered"`
	}
	err := c.do(ctx, "POST", runPath(runID, "/steer/deliver"), json.RawMessage("{}"), &out)
	return out.Delivered, err
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
	err := c.do(ctx, "POST", "/__admin/hermes/restart", map[string]string{"owner": string(owner)}, &out)
	return out, err
}

// Scope sets the namespace's scope to profile and identity (controls §11.6);
// runs of another scope are invisible (runs-api §9).
func (c *Client) Scope(ctx context.Context, profile, identity string) error {
	return c.do(ctx, "POST", "/__admin/hermes/scope", map[string]string{"profile": profile, "identity": identity}, nil)
}

// Sweep runs one retention sweep now (controls §11.7, runs-api §11.2) and
// returns the number of cached runs removed.
func (c *Client) Sweep(ctx context.Context) (int, error) {
	var out struct {
		CacheRemoved int `json:"cacheRemoved"`
	}
	err := c.do(ctx, "POST", "/__admin/hermes/sweep", json.RawMessage("{}"), &out)
	return out.CacheRemoved, err
}

// Drain sets or clears the namespace's drain flag (controls §11.4): while
// set, RunCreate answers 503 gateway_draining.
func (c *Client) Drain(ctx context.Context, draining bool) error {
	return c.do(ctx, "POST", "/__admin/hermes/drain", map[string]bool{"draining": draining}, nil)
}

// Draining reports the namespace's drain flag.
func (c *Client) Draining(ctx context.Context) (bool, error) {
	var out struct {
		Draining bool `json:"draining"`
	}
	err := c.do(ctx, "GET", "/__admin/hermes/drain", nil, &out)
	return out.Draining, err
}

// Reset clears the namespace's state, or every namespace's with all
// (controls §4.3), and returns the namespaces reset. Fault rules, the journal,
// metrics and the clock are kept.
func (c *Client) Reset(ctx context.Context, all bool) ([]string, error) {
	path := "/__admin/reset"
	if all {
		path += "?all=1"
	}
	var out struct {
		Reset []string `json:"reset"`
	}
	err := c.do(ctx, "POST", path, nil, &out)
	return out.Reset, err
}

// ClockState is the global controlled clock (controls §5).
type ClockState struct {
	Now      float64 `json:"now"` // epoch milliseconds
	Frozen   bool    `json:"frozen"`
	OffsetMs float64 `json:"offsetMs"` // live clock: now = wall clock + OffsetMs
}

// Time is Now as a time.Time (UTC).
func (s ClockState) Time() time.Time {
	return time.UnixMicro(int64(s.Now * 1000)).UTC()
}

// Clock is the clock control, from Client.Clock.
type Clock struct{ c *Client }

// Clock returns the clock control. The clock is shared by all namespaces.
func (c *Client) Clock() Clock { return Clock{c} }

func (k Clock) post(ctx context.Context, body string) (ClockState, error) {
	var out ClockState
	err := k.c.do(ctx, "POST", "/__admin/clock", json.RawMessage(body), &out)
	return out, err
}

func ms(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Get returns the clock state.
func (k Clock) Get(ctx context.Context) (ClockState, error) {
	var out ClockState
	err := k.c.do(ctx, "GET", "/__admin/clock", nil, &out)
	return out, err
}

// Set moves the clock to epochMs, keeping it frozen or live.
func (k Clock) Set(ctx context.Context, epochMs float64) (ClockState, error) {
	return k.post(ctx, `{"set":`+ms(epochMs)+`}`)
}

// FreezeAt sets the clock to epochMs and freezes it there in one request,
// e.g. 1700000000000 (the base instant of the acceptance tests).
func (k Clock) FreezeAt(ctx context.Context, epochMs float64) (ClockState, error) {
	return k.post(ctx, `{"set":`+ms(epochMs)+`,"freeze":true}`)
}

// Freeze stops the clock at its current instant.
func (k Clock) Freeze(ctx context.Context) (ClockState, error) {
	return k.post(ctx, `{"freeze":true}`)
}

// Unfreeze lets the clock run again from its current instant.
func (k Clock) Unfreeze(ctx context.Context) (ClockState, error) {
	return k.post(ctx, `{"freeze":false}`)
}

// Advance moves the clock by d (which may be negative), frozen or live; the
// emulator takes milliseconds, fractions included.
func (k Clock) Advance(ctx context.Context, d time.Duration) (ClockState, error) {
	return k.post(ctx, `{"advance":`+ms(float64(d)/float64(time.Millisecond))+`}`)
}

// Reset returns the clock to the wall clock: offset 0, live.
func (k Clock) Reset(ctx context.Context) (ClockState, error) {
	return k.post(ctx, `{"reset":true}`)
}

// Fault is a fault rule (controls §6.1), as sent to AddFault and as the
// emulator stores and lists it. Zero fields are left out when sending, so
// Count and Rate, where 0 means something, are pointers.
type Fault struct {
	ID          string            `json:"id,omitempty"`
	Namespace   string            `json:"namespace,omitempty"` // default: the client's namespace; "*" = all
	OperationID string            `json:"operationId,omitempty"`
	Method      string            `json:"method,omitempty"`
	PathPrefix  string            `json:"pathPrefix,omitempty"`
	Status      int               `json:"status,omitempty"`
	Body        any               `json:"body,omitempty"` // nil = {"detail":"Injected by Mockingbird"}; json.RawMessage("null") = no body
	Headers     map[string]string `json:"headers,omitempty"`
	Count       *int              `json:"count,omitempty"` // uses before the rule retires; nil = unlimited
	Rate        *float64          `json:"rate,omitempty"`  // fraction of matching requests that fire; nil = 1
	DelayMs     float64           `json:"delayMs,omitempty"`
	Drop        bool              `json:"drop,omitempty"`
	Effect      string            `json:"effect,omitempty"`
	Params      map[string]any    `json:"params,omitempty"`
	Preset      string            `json:"preset,omitempty"`

	Remaining *int `json:"remaining,omitempty"` // listed only: uses left (nil = unlimited)
	Hits      int  `json:"hits,omitempty"`      // listed only: times fired
}

// AddFault adds (or, with an existing id, replaces) a fault rule in the
// client's namespace (controls §6.2). rule is a Fault, a map or raw JSON; a
// rule with "preset" expands that preset. It returns the stored rule.
func (c *Client) AddFault(ctx context.Context, rule any) (Fault, error) {
	var raw json.RawMessage
	if err := c.do(ctx, "POST", "/__admin/faults", rule, &raw); err != nil {
		return Fault{}, err
	}
	var out struct {
		Rules []Fault `json:"rules"`
	}
	if err := json.Unmarshal(raw, &out); err == nil && len(out.Rules) > 0 {
		return out.Rules[0], nil
	}
	var f Fault
	if err := json.Unmarshal(raw, &f); err != nil {
		return Fault{}, fmt.Errorf("control: POST /__admin/faults: decode %s: %w", raw, err)
	}
	return f, nil
}

// ApplyPreset adds the rules of a named preset (controls §6.4), e.g.
// "hermes_submit_accepted_drop" or "hermes_poll_timeout", with overrides (nil
// for none; a map or a Fault) and returns the stored rules.
func (c *Client) ApplyPreset(ctx context.Context, name string, overrides any) ([]Fault, error) {
	if overrides == nil {
		overrides = json.RawMessage("{}")
	}
	var out struct {
		Rules []Fault `json:"rules"`
	}
	err := c.do(ctx, "POST", "/__admin/faults/presets/"+url.PathEscape(name), overrides, &out)
	return out.Rules, err
}

// Faults lists every fault rule of every namespace, with counters
// (controls §6.3).
func (c *Client) Faults(ctx context.Context) ([]Fault, error) {
	var out struct {
		Faults []Fault `json:"faults"`
	}
	err := c.do(ctx, "GET", "/__admin/faults", nil, &out)
	return out.Faults, err
}

// DeleteFaults removes the rule with id, or every rule when id is "".
func (c *Client) DeleteFaults(ctx context.Context, id string) error {
	path := "/__admin/faults"
	if id != "" {
		path += "?id=" + url.QueryEscape(id)
	}
	return c.do(ctx, "DELETE", path, nil, nil)
}

// Package control is the friendly Go client of the emulator's control plane
// (/__admin, controls.md): script runs (observe, events, steer delivery),
// move the clock, restart the gateway, set the scope, sweep, drain, add or
// remove fault rules, read the journal, the metrics, the timeline and the runs
// — the things a test does between the calls of the application it tests.
//
//	ctl := control.New(srv.URL(), control.Namespace("t1"))
//	if _, err := ctl.Clock().FreezeAt(ctx, 1700000000000); err != nil { … }
//	run, err := ctl.Observe(ctx, runID, map[string]any{"status": "completed", "output": "done"})
//
// It is a thin layer over the client generated from admin.yaml (package
// gen/admin, available as API for anything this package does not wrap): it
// adds the namespace and admin-key headers, encodes bodies, decodes answers
// into small types and turns every answer outside 2xx into an *Error carrying
// the status and the envelope's message (and code, for the Hermes controls).
// An argument no request can carry — an empty run id, preset, branch or
// checkpoint, a NaN or infinite clock instant — is refused before anything is
// sent, with an error that is not an *Error ("control: Run: empty run id").
// It depends only on the contracts' generated code, not on the emulator, so it
// works against any emulator: in-process, a binary, or a container.
package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
)

// Client calls the control plane of one emulator, in one namespace. It is
// safe for concurrent use; a Client is immutable after New.
type Client struct {
	base     string
	hc       *http.Client
	ns       string // "" = no x-mockingbird-namespace header (the default namespace)
	adminKey string
	api      *genadmin.Client
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
	c.build()
	return c
}

// build makes the generated client; its request editor adds the headers.
func (c *Client) build() {
	api, err := genadmin.NewClient(c.base, genadmin.WithHTTPClient(c.hc), genadmin.WithRequestEditorFn(c.headers))
	if err != nil { // only a base URL that does not parse
		api, _ = genadmin.NewClient("http://invalid.invalid", genadmin.WithHTTPClient(c.hc))
		api.RequestEditors = append(api.RequestEditors, func(context.Context, *http.Request) error {
			return fmt.Errorf("control: base URL %q: %w", c.base, err)
		})
	}
	c.api = api
}

func (c *Client) headers(_ context.Context, req *http.Request) error {
	if c.ns != "" {
		req.Header.Set("X-Mockingbird-Namespace", c.ns)
	}
	if c.adminKey != "" {
		req.Header.Set("X-Mockingbird-Admin-Key", c.adminKey)
	}
	return nil
}

// In returns a copy of c that acts on namespace ns.
func (c *Client) In(ns string) *Client {
	d := *c
	d.ns = ns
	d.build()
	return &d
}

// API is the generated client of admin.yaml this Client wraps, with the same
// base URL, HTTP client and headers: for the routes and options this package
// does not wrap (e.g. GET /__admin/stream).
func (c *Client) API() *genadmin.Client { return c.api }

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

// result finishes a generated call: a 2xx answer is decoded into out (when
// not nil), anything else becomes an *Error.
func (c *Client) result(resp *http.Response, err error, out any) error {
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	method, path := resp.Request.Method, c.path(resp.Request)
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

// path is the request's path and query relative to the base URL.
func (c *Client) path(r *http.Request) string {
	p := r.URL.EscapedPath()
	if i := strings.Index(p, "/__admin"); i > 0 {
		p = p[i:]
	}
	if r.URL.RawQuery != "" {
		p += "?" + r.URL.RawQuery
	}
	return p
}

// jsonType is the Content-Type of every control body.
const jsonType = "application/json"

// encode returns body as JSON text: nil as no body, json.RawMessage and
// []byte verbatim, anything else JSON-encoded.
func encode(body any) (io.Reader, error) {
	switch b := body.(type) {
	case nil:
		return http.NoBody, nil
	case json.RawMessage:
		return bytes.NewReader(b), nil
	case []byte:
		return bytes.NewReader(b), nil
	}
	enc, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("control: encode body: %w", err)
	}
	return bytes.NewReader(enc), nil
}

func raw(s string) io.Reader { return strings.NewReader(s) }

// need refuses an empty path argument before anything is sent: the request
// would reach another route (Run("") the run list), or none.
func need(method, what, v string) error {
	if v == "" {
		return fmt.Errorf("control: %s: empty %s", method, what)
	}
	return nil
}

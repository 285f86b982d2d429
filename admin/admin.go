// Package admin is the control plane: GET /health and every /__admin route
// (controls.md), described by admin.yaml at the repository root. It implements
// the generated server interface of gen/admin (one thin handler per route),
// validates every request against admin.yaml before the handler runs
// (validate.go), and holds no state of its own apart from the change stream's
// subscribers (stream.go): it hands control requests to the gateway, the fault
// store, the journal, the metrics and the credentials store.
package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hermes-emulator/hermes-emulator/credentials"
	"github.com/hermes-emulator/hermes-emulator/faults"
	"github.com/hermes-emulator/hermes-emulator/gateway"
	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
	"github.com/hermes-emulator/hermes-emulator/handlers"
	"github.com/hermes-emulator/hermes-emulator/journal"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Deps are what the control plane acts on.
type Deps struct {
	GW           *gateway.Gateway
	Faults       *faults.Store
	Journal      *journal.Journal
	Metrics      *journal.Metrics
	Credentials  *credentials.Store
	Hub          *Hub   // the change stream of GET /__admin/stream; nil = a private hub nobody publishes to
	AdminKey     string // "" = open
	MaxBodyBytes int64  // the body limit when Bodies is nil
	// Bodies reads control request bodies, as it reads the vendor ones
	// (hardening H2, H5); nil = a reader of MaxBodyBytes, 10s, no in-flight bound.
	Bodies  *handlers.Bodies
	Version string
}

// Admin serves the control plane.
type Admin struct {
	d    Deps
	echo *echo.Echo
}

var _ genadmin.ServerInterface = (*Admin)(nil)

// call is one control request as the middleware prepared it for a handler.
type call struct {
	w       http.ResponseWriter // the caller's writer (read deadlines)
	r       *http.Request
	rel     string // the path relative to /__admin as sent ("/" when empty; "" for /health), for the 404 message
	ns      string // the admin namespace: ?namespace=, header, default
	body    runs.Value
	hasBody bool
	query   url.Values
	// queryErr: the query string did not split into name=value pairs (a
	// ";", a bad %-escape); url.ParseQuery drops those pairs.
	queryErr error
}

type callKey struct{}

// callOf returns the call of a request inside the Echo stack.
func callOf(c echo.Context) *call { return c.Request().Context().Value(callKey{}).(*call) }

// New builds the control plane.
func New(d Deps) *Admin {
	if d.Bodies == nil {
		d.Bodies = handlers.NewBodies(d.MaxBodyBytes, 0, 10*time.Second)
	}
	if d.Hub == nil {
		d.Hub = NewHub(0)
	}
	a := &Admin{d: d, echo: echo.New()}
	a.echo.HideBanner, a.echo.HidePort = true, true
	a.echo.HTTPErrorHandler = a.errorHandler
	a.echo.Use(a.prepare)
	genadmin.RegisterHandlers(a.echo, a)
	return a
}

// ServeHTTP answers a control-plane request; rawPath is the path after the
// /ns/<name> prefix was removed (runs-api §3 step 2).
func (a *Admin) ServeHTTP(w http.ResponseWriter, r *http.Request, rawPath string) {
	headerNS := strings.Join(r.Header.Values("X-Mockingbird-Namespace"), ", ")
	if _, ok := r.Header["X-Mockingbird-Namespace"]; !ok {
		headerNS = "default"
	}
	stamp := "hermes@" + a.d.Version
	if runs.ValidName(headerNS) {
		stamp += "; ns=" + headerNS
	}
	w.Header().Set("X-Mockingbird", stamp)
	query, queryErr := url.ParseQuery(r.URL.RawQuery)
	c := &call{w: w, r: r, ns: headerNS, query: query, queryErr: queryErr}
	if v, ok := c.query["namespace"]; ok {
		c.ns = v[0]
	}
	path := "/health"
	if rawPath != "/health" {
		if a.d.AdminKey != "" && !runs.AdminKeyOK(strings.Join(r.Header.Values("X-Mockingbird-Admin-Key"), ", "), a.d.AdminKey) {
			a.d.Bodies.Unread(w, r)
			handlers.WriteError(w, runs.ErrAdminKey)
			return
		}
		c.rel = strings.TrimPrefix(rawPath, "/__admin")
		if c.rel == "" {
			c.rel = "/"
		}
		path = normalize(c.rel)
	}
	in := r.Clone(context.WithValue(r.Context(), callKey{}, c))
	in.URL.RawPath = path
	in.URL.Path = unescape(path)
	c.r = in
	a.echo.ServeHTTP(w, in)
}

// normalize maps a path relative to /__admin to the Echo path: empty segments
// ignored (controls §1 "Routing"), segments kept percent-encoded so that an
// encoded "/" stays inside its segment.
func normalize(rel string) string {
	var segs []string
	for _, s := range strings.Split(rel, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	if len(segs) == 0 {
		return "/__admin"
	}
	return "/__admin/" + strings.Join(segs, "/")
}

func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// prepare runs after routing and before every handler: read the body (413,
// 400 not JSON, 503 busy), check the admin namespace of state routes, validate
// against admin.yaml. A path or method that is no operation of admin.yaml
// answers the admin 404 of errorHandler.
func (a *Admin) prepare(next echo.HandlerFunc) echo.HandlerFunc {
	return func(ec echo.Context) error {
		c := callOf(ec)
		if c.rel == "" { // GET /health reads nothing (controls §2)
			return next(ec)
		}
		op := theContract().op(ec.Request().Method, ec.Path())
		if op == nil {
			// No operation of admin.yaml: the admin 404, never Echo's
			// own answers (204 to OPTIONS, 405 with Allow).
			return echo.ErrNotFound
		}
		release, err := a.readBody(c)
		// The handler reads the parsed body, a copy: the raw bytes go back
		// to the in-flight bound before it answers, which lasts as long as
		// the client takes to read the answer (hardening H5).
		release()
		if err != nil {
			return err
		}
		if c.queryErr != nil { // a pair Go dropped would be read as absent
			return runs.Admin(400, "query string is not valid: "+runs.Echo(c.queryErr.Error()))
		}
		if op.stateNS && !runs.ValidName(c.ns) {
			return runs.BadName("x-mockingbird-namespace", 400)
		}
		if err := op.validate(c.query, c.body, c.hasBody); err != nil {
			return err
		}
		return next(ec)
	}
}

// readBody reads the request body (controls §1 "Body") with the one body
// reader of both planes (handlers.Bodies: the limit, the read timeout and the
// in-flight bound): empty or whitespace is no body; otherwise JSON, parsed
// into c.body. release gives the raw bytes back to the in-flight bound.
func (a *Admin) readBody(c *call) (release func(), _ *runs.Error) {
	raw, release, err := a.d.Bodies.Read(c.w, c.r)
	switch {
	case errors.Is(err, handlers.ErrBodyTooLarge):
		return release, runs.Admin(413, "request body too large")
	case errors.Is(err, handlers.ErrBodyBusy):
		return release, runs.ErrServerBusy
	case err != nil:
		return release, runs.Admin(400, "request body is not valid JSON")
	}
	if strings.TrimSpace(string(raw)) != "" {
		v, perr := runs.Parse(raw)
		if perr != nil {
			return release, runs.Admin(400, "request body is not valid JSON")
		}
		c.body, c.hasBody = v, true
	}
	return release, nil
}

// errorHandler renders every error through the one renderer (STYLE.md rule 3):
// an unmatched route or method is the admin 404 of controls §1.
func (a *Admin) errorHandler(err error, ec echo.Context) {
	if ec.Response().Committed {
		return
	}
	var he *echo.HTTPError
	if errors.As(err, &he) && (he.Code == http.StatusNotFound || he.Code == http.StatusMethodNotAllowed) {
		c := callOf(ec)
		a.d.Bodies.Unread(ec.Response(), c.r)
		ec.Response().Header().Del(echo.HeaderAllow) // x-mockingbird and nothing else (controls §1)
		err = runs.Admin(404, "no admin route "+runs.Echo(c.r.Method)+" "+runs.Echo(c.rel)+"; GET /__admin lists them")
	}
	handlers.WriteError(ec.Response(), err)
}

// reply writes a successful JSON answer.
func reply(ec echo.Context, status int, body []byte) error {
	return ec.Blob(status, "application/json", body)
}

func ok200(ec echo.Context, body []byte) error { return reply(ec, 200, body) }

// Package admin is the control plane: GET /health and every /__admin route
// (controls.md), kept identical to the seed package's so a suite written for it
// runs unchanged. It holds no state of its own: it validates control requests
// and hands them to the gateway, the fault store, the journal, the metrics and
// the credentials store.
package admin

import (
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/hermes-emulator/hermes-emulator/credentials"
	"github.com/hermes-emulator/hermes-emulator/faults"
	"github.com/hermes-emulator/hermes-emulator/gateway"
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
	AdminKey     string // "" = open
	MaxBodyBytes int64  // the body limit when Bodies is nil
	// Bodies reads control request bodies, as it reads the vendor ones
	// (hardening H2, H5); nil = a reader of MaxBodyBytes, 10s, no in-flight bound.
	Bodies  *handlers.Bodies
	Version string
}

// Admin serves the control plane.
type Admin struct {
	d      Deps
	routes []route
}

// call is one control request after routing.
type call struct {
	r       *http.Request
	ns      string // the admin namespace: ?namespace=, header, default
	params  map[string]string
	body    runs.Value
	hasBody bool
	query   url.Values
	out     http.Header // the response headers: a route may set Content-Type
}

// reply is a control answer: a status and a compact JSON body.
type reply struct {
	status int
	body   []byte
}

type route struct {
	method  string
	segs    []string // ":name" = parameter
	stateNS bool     // reads or writes a namespace's state: the namespace must be valid
	fn      func(c *call) (reply, *runs.Error)
}

func (r route) key() string { return r.method + " /" + strings.Join(r.segs, "/") }

// New builds the control plane.
func New(d Deps) *Admin {
	if d.Bodies == nil {
		d.Bodies = handlers.NewBodies(d.MaxBodyBytes, 0, 10*time.Second)
	}
	a := &Admin{d: d}
	a.routes = a.table()
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
	if gateway.NamePattern.MatchString(headerNS) {
		stamp += "; ns=" + headerNS
	}
	w.Header().Set("X-Mockingbird", stamp)
	if rawPath == "/health" {
		a.write(w, reply{200, a.health()})
		return
	}
	rep, err := a.serve(w, r, rawPath, headerNS)
	if err != nil {
		// One renderer for every error envelope (STYLE.md rule 3).
		handlers.WriteError(w, err)
		return
	}
	a.write(w, rep)
}

// write sends a successful rep; Content-Type is application/json unless the
// route set another one.
func (a *Admin) write(w http.ResponseWriter, rep reply) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(rep.status)
	_, _ = w.Write(rep.body)
}

func (a *Admin) serve(w http.ResponseWriter, r *http.Request, rawPath, headerNS string) (reply, *runs.Error) {
	if a.d.AdminKey != "" && !runs.AdminKeyOK(strings.Join(r.Header.Values("X-Mockingbird-Admin-Key"), ", "), a.d.AdminKey) {
		a.d.Bodies.Unread(w, r)
		return reply{}, runs.ErrAdminKey
	}
	rel := strings.TrimPrefix(rawPath, "/__admin")
	if rel == "" {
		rel = "/"
	}
	rt, params := a.find(r.Method, rel)
	if rt == nil {
		a.d.Bodies.Unread(w, r)
		return reply{}, runs.Admin(404, "no admin route "+runs.Echo(r.Method)+" "+runs.Echo(rel)+"; GET /__admin lists them")
	}
	q := r.URL.Query()
	c := &call{r: r, ns: headerNS, params: params, query: q, out: w.Header()}
	if v, ok := q["namespace"]; ok {
		c.ns = v[0]
	}
	// The one body reader of both planes (handlers.Bodies): within the read
	// timeout and the in-flight bound.
	raw, release, err := a.d.Bodies.Read(w, r)
	defer release()
	switch {
	case errors.Is(err, handlers.ErrBodyTooLarge):
		return reply{}, runs.Admin(413, "request body too large")
	case errors.Is(err, handlers.ErrBodyBusy):
		return reply{}, runs.ErrServerBusy
	case err != nil:
		return reply{}, runs.Admin(400, "request body is not valid JSON")
	}
	if strings.TrimSpace(string(raw)) != "" {
		v, perr := runs.Parse(raw)
		if perr != nil {
			return reply{}, runs.Admin(400, "request body is not valid JSON")
		}
		c.body, c.hasBody = v, true
	}
	if rt.stateNS && !gateway.NamePattern.MatchString(c.ns) {
		return reply{}, runs.Admin(400, "x-mockingbird-namespace must match /^[A-Za-z0-9_.-]{1,64}$/")
	}
	return rt.fn(c)
}

// find matches method and path: exact method, empty segments ignored on both
// sides, equal segment counts, parameters percent-decoded (controls §1).
func (a *Admin) find(method, rel string) (*route, map[string]string) {
	var segs []string
	for _, s := range strings.Split(rel, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
next:
	for i := range a.routes {
		rt := &a.routes[i]
		if rt.method != method || len(rt.segs) != len(segs) {
			continue
		}
		var params map[string]string
		for j, want := range rt.segs {
			if strings.HasPrefix(want, ":") {
				if params == nil {
					params = map[string]string{}
				}
				v, err := url.PathUnescape(segs[j])
				if err != nil {
					v = segs[j]
				}
				params[want[1:]] = v
				continue
			}
			if want != segs[j] {
				continue next
			}
		}
		return rt, params
	}
	return nil, nil
}

// routeKeys lists "METHOD /path" of every route, sorted by code point (controls §3).
func (a *Admin) routeKeys() []string {
	keys := make([]string, 0, len(a.routes))
	for _, rt := range a.routes {
		k := rt.key()
		if len(rt.segs) == 0 {
			k = rt.method + " /"
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

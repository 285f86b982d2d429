package emulator

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/hermes-emulator/hermes-emulator/console"
	"github.com/hermes-emulator/hermes-emulator/faults"
	"github.com/hermes-emulator/hermes-emulator/gateway"
	"github.com/hermes-emulator/hermes-emulator/handlers"
	"github.com/hermes-emulator/hermes-emulator/journal"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// ServeHTTP is the request pipeline of runs-api §3, as Handler() serves it:
// the request's context also ends when Close cuts the requests still in
// flight after Options.ShutdownGrace.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.base, cancel)()
	s.serve(w, r.WithContext(ctx))
}

// serve is the request pipeline. The listener serves it directly: its
// requests' contexts derive from s.base already.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	w = newAnswerWriter(w, s.opts.WriteTimeout)
	s.calls.begin(r)
	defer s.calls.end(r)
	// Step 1: the /ns/<name> prefix.
	rawPath := r.URL.EscapedPath()
	prefixNS := ""
	if m := nsPrefix.FindStringSubmatch(rawPath); m != nil {
		prefixNS = unescape(m[1])
		rawPath = m[2]
		if rawPath == "" {
			rawPath = "/"
		}
		// The caller's request is not changed (http.Handler contract).
		r = r.Clone(r.Context())
		r.URL.RawPath = rawPath
		r.URL.Path = unescape(rawPath)
	}
	headerNS := strings.Join(r.Header.Values("X-Mockingbird-Namespace"), ", ")
	_, hasHeaderNS := r.Header["X-Mockingbird-Namespace"]
	if !hasHeaderNS && prefixNS != "" {
		headerNS, hasHeaderNS = prefixNS, true
		r.Header.Set("X-Mockingbird-Namespace", prefixNS) // r is a clone here
	}
	ns := headerNS
	if !hasHeaderNS {
		ns = "default"
	}
	// Step 2: the control plane. The console's files hold no data and are
	// served without the admin key (docs/console.md); its calls carry it.
	if console.Owns(rawPath) {
		s.bodies.Unread(w, r)
		s.stamp(w, ns, runs.ValidName(ns))
		console.ServeHTTP(w, r, rawPath)
		return
	}
	// /health and the contract read no body: one
	// that comes anyway closes the connection rather than being waited for (H4).
	health, contract := rawPath == "/health" && r.Method == "GET", rawPath == ContractPath && r.Method == "GET"
	if health || contract {
		s.bodies.Unread(w, r)
	}
	if health || rawPath == "/__admin" || strings.HasPrefix(rawPath, "/__admin/") {
		s.admin.ServeHTTP(w, r, rawPath)
		return
	}
	if contract {
		s.serveContract(w, ns)
		return
	}
	s.vendor(w, r, ns, rawPath, start)
}

func (s *Server) stamp(w http.ResponseWriter, ns string, valid bool) {
	v := "hermes@" + Version
	if valid {
		v += "; ns=" + ns
	}
	w.Header().Set("X-Mockingbird", v)
}

// exchange is one vendor request on its way through steps 3–12 of the
// pipeline (runs-api §3 in the order of hardening H2): each step is a method
// that returns true when it answered the request.
type exchange struct {
	s       *Server
	w       http.ResponseWriter
	r       *http.Request
	start   time.Time
	ns      string
	path    string // the raw path after the /ns prefix
	method  string
	opID    string
	runID   string
	branch  string // x-mockingbird-branch, or main
	at      string // x-mockingbird-at, "" when absent
	fault   faults.Outcome
	target  gateway.Target
	body    []byte
	release func() // gives the body's bytes back to the in-flight bound
	entry   journal.Entry
}

// vendor runs steps 3–12 for a vendor request, in the order of hardening H2:
// an unauthenticated request reads no body and touches no timeline.
func (s *Server) vendor(w http.ResponseWriter, r *http.Request, ns, rawPath string, start time.Time) {
	if r.Method == "HEAD" {
		w = headWriter{w} // no body on any HEAD answer, in-process too (wire.md §6)
	}
	x := &exchange{s: s, w: w, r: r, start: start, ns: ns, path: rawPath, method: r.Method, release: func() {}}
	defer func() { x.release() }()
	x.matchOperation()
	if x.namespace() || x.branchSyntax() || x.faults() || x.declaredLimit() || x.routing() ||
		x.auth() || x.history() || x.readBody() {
		return
	}
	x.operate()
}

// mutating reports a POST, PUT, PATCH or DELETE (runs-api §3 step 12).
func (x *exchange) mutating() bool {
	m := x.method
	return m == "POST" || m == "PUT" || m == "PATCH" || m == "DELETE"
}

// hasBody reports a method whose body the operation reads (step 8).
func (x *exchange) hasBody() bool {
	return x.method == "POST" || x.method == "PUT" || x.method == "PATCH"
}

// journal records the request with status (0 = dropped) in the journal, the
// metrics and the request log.
func (x *exchange) journal(status int) {
	e := &x.entry
	e.Status = status
	e.DurationMs = float64(time.Since(x.start).Microseconds()) / 1000 // journal rounds
	e.At = x.s.gw.Now()
	x.s.journal.Add(*e)
	x.s.metrics.Record(*e)
	x.s.logRequest(*e)
}

// fail answers err before the operation ran, with the upstream security
// headers when provider (steps 8–11), and journals it with the request's
// metadata. The unread body is bounded by the read timeout (H4).
func (x *exchange) fail(err *runs.Error, provider bool) bool {
	if provider {
		handlers.SetSecurityHeaders(x.w.Header())
	}
	if x.body == nil {
		x.s.bodies.Unread(x.w, x.r)
	}
	handlers.WriteError(x.w, err)
	x.entry.Request = requestMeta(x.r)
	x.journal(err.Status)
	return true
}

// Step 6: the operation of method and path ("" = unmatched).
func (x *exchange) matchOperation() {
	x.opID, x.runID = match(x.method, x.path)
	x.entry = journal.Entry{Namespace: x.ns, OperationID: x.opID, Method: x.method, Path: x.path}
}

// Step 3: the namespace must match the name pattern.
func (x *exchange) namespace() bool {
	if runs.ValidName(x.ns) {
		x.s.stamp(x.w, x.ns, true)
		return false
	}
	x.s.stamp(x.w, x.ns, false)
	return x.fail(runs.BadName("x-mockingbird-namespace", 400), false)
}

// Step 4: the branch name's syntax (selecting it is step 5).
func (x *exchange) branchSyntax() bool {
	x.branch = "main"
	if _, ok := x.r.Header["X-Mockingbird-Branch"]; ok {
		x.branch = strings.Join(x.r.Header.Values("X-Mockingbird-Branch"), ", ")
	}
	x.at = strings.Join(x.r.Header.Values("X-Mockingbird-At"), ", ")
	if runs.ValidName(x.branch) {
		return false
	}
	return x.fail(runs.BadName("x-mockingbird-branch", 400), false)
}

// Step 7: fault rules (controls §6.5). The branch and at echoes go on the
// answers from here on, not on fault responses (controls §6.6).
func (x *exchange) faults() bool {
	out := x.s.faults.Match(faults.Request{NS: x.ns, OperationID: x.opID, Method: x.method, Path: x.path}, x.s.gw.Draw)
	x.fault, x.entry.FaultID = out, out.FaultID
	x.s.faultFired(x.ns, x.opID, out)
	if out.Delay > 0 {
		sleep(x.r.Context(), out.Delay)
	}
	switch {
	case out.Drop:
		x.journal(0)
		drop(x.w)
		return true
	case out.Response != nil:
		x.s.bodies.Unread(x.w, x.r)
		writeFault(x.w, out.Response)
		x.journal(out.Response.Status)
		return true
	}
	if x.branch != "main" {
		x.w.Header().Set("X-Mockingbird-Branch", x.branch)
	}
	if x.at != "" {
		x.w.Header().Set("X-Mockingbird-At", x.at)
	}
	return false
}

// Step 8a: a declared Content-Length over the limit → 413, nothing read.
func (x *exchange) declaredLimit() bool {
	if !x.hasBody() || !x.s.bodies.Declared(x.r) {
		return false
	}
	return x.fail(runs.ErrBodyTooLarge, true)
}

// Step 9: a method and path not in runs-api §6 → 404 page not found.
func (x *exchange) routing() bool {
	if x.opID != "" {
		return false
	}
	return x.fail(runs.ErrPageNotFound, true)
}

// Step 10: auth (runs-api §14.3), then hardening H1: with an admin key, the
// history headers x-mockingbird-at and x-mockingbird-branch are control-plane
// power and need x-mockingbird-admin-key too.
func (x *exchange) auth() bool {
	h := x.r.Header
	if key := x.s.opts.APIKey; key != "" && !runs.Authorized(strings.Join(h.Values("Authorization"), ", "), key) {
		return x.fail(runs.ErrAuth, true)
	}
	_, hasAt := h["X-Mockingbird-At"]
	_, hasBranch := h["X-Mockingbird-Branch"]
	key := x.s.opts.AdminKey
	if key != "" && (hasAt || hasBranch) && !runs.AdminKeyOK(strings.Join(h.Values("X-Mockingbird-Admin-Key"), ", "), key) {
		return x.fail(runs.ErrAdminKey, true)
	}
	return false
}

// Step 5: history selection (controls §8.6), after auth (hardening H2).
func (x *exchange) history() bool {
	target, err := x.s.gw.Select(x.ns, x.branch, x.at, x.mutating())
	if err != nil {
		return x.fail(err, false)
	}
	x.target = target
	return false
}

// Step 8b: the body, read in full under the body bounds (413 for an undeclared
// body over the limit, 503 when the in-flight bound stays full, 400 Invalid
// JSON when it does not arrive). A GET or HEAD body is discarded unread.
func (x *exchange) readBody() bool {
	if !x.hasBody() {
		x.s.bodies.Discard(x.w, x.r)
		return false
	}
	body, release, err := x.s.bodies.Read(x.w, x.r)
	x.release = release
	switch {
	case errors.Is(err, handlers.ErrBodyTooLarge):
		return x.fail(runs.ErrBodyTooLarge, true)
	case errors.Is(err, handlers.ErrBodyBusy):
		return x.fail(runs.ErrServerBusy, true)
	case err != nil:
		// The body did not arrive in full (timeout, reset, truncated):
		// answered as an unparseable body, the closest pinned error, and the
		// connection closed (Bodies.Read).
		return x.fail(runs.ErrInvalidJSON, true)
	}
	x.body = body
	if x.body == nil {
		x.body = []byte{}
	}
	return false
}

package emulator

import (
	"context"
	"github.com/hermes-emulator/hermes-emulator/api"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-emulator/hermes-emulator/console"
	"github.com/hermes-emulator/hermes-emulator/faults"
	"github.com/hermes-emulator/hermes-emulator/gateway"
	"github.com/hermes-emulator/hermes-emulator/handlers"
	"github.com/hermes-emulator/hermes-emulator/journal"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// bodyReadTimeout bounds the time a request body may take to arrive.
const bodyReadTimeout = 30 * time.Second

var nsPrefix = regexp.MustCompile(`^/ns/([^/]+)(/.*)?$`)

// route is one vendor operation for matching (runs-api §6; wire.md §6).
type route struct {
	method, opID string
	segs         []string // "" = the {run_id} parameter
}

var routes = []route{
	{"POST", "RunCreate", []string{"v1", "runs"}},
	{"GET", "CapabilitiesGet", []string{"v1", "capabilities"}},
	{"GET", "RunGet", []string{"v1", "runs", ""}},
	{"POST", "RunStop", []string{"v1", "runs", "", "stop"}},
	{"GET", "RunEvents", []string{"v1", "runs", "", "events"}},
	{"POST", "RunApproval", []string{"v1", "runs", "", "approval"}},
	{"POST", "RunSteer", []string{"v1", "runs", "", "steer"}},
}

// match finds the operation of method and raw path: exact segments, no
// trailing slash, one non-empty {run_id}. HEAD matches the GET operations.
func match(method, rawPath string) (opID, runID string) {
	if method == "HEAD" {
		method = "GET"
	}
	if !strings.HasPrefix(rawPath, "/") {
		return "", ""
	}
	segs := strings.Split(rawPath[1:], "/")
next:
	for _, rt := range routes {
		if rt.method != method || len(rt.segs) != len(segs) {
			continue
		}
		param := ""
		for i, want := range rt.segs {
			switch {
			case want == "" && segs[i] == "":
				continue next
			case want == "":
				param = segs[i]
			case want != segs[i]:
				continue next
			}
		}
		return rt.opID, unescape(param)
	}
	return "", ""
}

// unescape percent-decodes a path segment; a malformed escape leaves it as sent.
func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// respWriter buffers an operation's response so the finishing step can add
// headers (checkpoint) and validate it before it is sent; Flush switches to
// streaming (SSE).
type respWriter struct {
	w         http.ResponseWriter
	status    int
	buf       []byte
	streaming bool
}

func (r *respWriter) Header() http.Header { return r.w.Header() }

func (r *respWriter) WriteHeader(code int) {
	if r.streaming {
		r.w.WriteHeader(code)
		return
	}
	if r.status == 0 {
		r.status = code
	}
}

func (r *respWriter) Write(b []byte) (int, error) {
	if r.streaming {
		return r.w.Write(b)
	}
	if r.status == 0 {
		r.status = 200
	}
	r.buf = append(r.buf, b...)
	return len(b), nil
}

func (r *respWriter) Flush() {
	if !r.streaming {
		r.streaming = true
		if r.status == 0 {
			r.status = 200
		}
		r.w.WriteHeader(r.status)
		if len(r.buf) > 0 {
			_, _ = r.w.Write(r.buf)
		}
	}
	if f, ok := r.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *respWriter) Unwrap() http.ResponseWriter { return r.w }

// loadedContract waits until the contract is loaded (emulator.New loads it in
// the background) and returns it; nil without response validation.
func (s *Server) loadedContract() (*api.Contract, error) {
	<-s.contractReady
	return s.contract, s.contractErr
}

// ServeHTTP is the request pipeline of runs-api §3.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
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
		s.stamp(w, ns, gateway.NamePattern.MatchString(ns))
		console.ServeHTTP(w, r, rawPath)
		return
	}
	if (rawPath == "/health" && r.Method == "GET") || rawPath == "/__admin" || strings.HasPrefix(rawPath, "/__admin/") {
		s.admin.ServeHTTP(w, r, rawPath)
		return
	}
	if rawPath == ContractPath && r.Method == "GET" {
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

// vendor runs steps 3–12 for a vendor request.
func (s *Server) vendor(w http.ResponseWriter, r *http.Request, ns, rawPath string, start time.Time) {
	method := r.Method
	if method == "HEAD" {
		w = headWriter{w} // no body on any HEAD answer, in-process too (wire.md §6)
	}
	opID, runID := match(method, rawPath)
	entry := journal.Entry{Namespace: ns, OperationID: opID, Method: method, Path: rawPath}
	finish := func(status int) {
		entry.Status = status
		entry.DurationMs = float64(time.Since(start).Microseconds()) / 1000 // journal rounds
		entry.At = s.gw.Now()
		s.journal.Add(entry)
		s.metrics.Record(entry)
		s.logRequest(entry)
	}
	failed := func(status int) {
		entry.Request = requestMeta(r)
		finish(status)
	}
	// Step 3: namespace; step 4: branch.
	if !gateway.NamePattern.MatchString(ns) {
		s.stamp(w, ns, false)
		handlers.WriteError(w, runs.Admin(400, "x-mockingbird-namespace must match /^[A-Za-z0-9_.-]{1,64}$/"))
		failed(400)
		return
	}
	s.stamp(w, ns, true)
	branch := strings.Join(r.Header.Values("X-Mockingbird-Branch"), ", ")
	if _, ok := r.Header["X-Mockingbird-Branch"]; !ok {
		branch = "main"
	}
	if !gateway.NamePattern.MatchString(branch) {
		handlers.WriteError(w, runs.Admin(400, "x-mockingbird-branch must match /^[A-Za-z0-9_.-]{1,64}$/"))
		failed(400)
		return
	}
	// Step 5: history selection. The branch and at echoes go on the
	// operation's answers, not on fault responses (controls §6.6).
	at := strings.Join(r.Header.Values("X-Mockingbird-At"), ", ")
	echoHistory := func() {
		if branch != "main" {
			w.Header().Set("X-Mockingbird-Branch", branch)
		}
		if at != "" {
			w.Header().Set("X-Mockingbird-At", at)
		}
	}
	mutating := method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE"
	target, serr := s.gw.Select(ns, branch, at, mutating)
	if serr != nil {
		echoHistory()
		handlers.WriteError(w, serr)
		failed(serr.Status)
		return
	}
	// Step 7: fault rules.
	out := s.faults.Match(faults.Request{NS: ns, OperationID: opID, Method: method, Path: rawPath}, s.gw.Draw)
	entry.FaultID = out.FaultID
	s.faultFired(ns, opID, out)
	if out.Delay > 0 {
		sleep(r.Context(), out.Delay)
	}
	if out.Drop {
		finish(0)
		drop(w)
		return
	}
	if out.Response != nil {
		writeFault(w, out.Response)
		finish(out.Response.Status)
		return
	}
	echoHistory()
	handlers.SetSecurityHeaders(w.Header())
	// Step 8: body limit.
	var body []byte
	if method == "POST" || method == "PUT" || method == "PATCH" {
		if r.ContentLength > s.opts.MaxBodyBytes {
			handlers.WriteError(w, runs.ErrBodyTooLarge)
			failed(413)
			return
		}
		// A slow client may not hold the connection for ever: the body must
		// arrive within bodyReadTimeout (issue 6).
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(bodyReadTimeout))
		b, err := io.ReadAll(io.LimitReader(r.Body, s.opts.MaxBodyBytes+1))
		_ = rc.SetReadDeadline(time.Time{})
		if err != nil {
			// The body did not arrive in full (timeout, reset, truncated):
			// answered as an unparseable body, the closest pinned error, and
			// the connection closed (the server would otherwise wait to
			// discard the rest of the body before answering).
			w.Header().Set("Connection", "close")
			handlers.WriteError(w, runs.ErrInvalidJSON)
			failed(400)
			return
		}
		if int64(len(b)) > s.opts.MaxBodyBytes {
			handlers.WriteError(w, runs.ErrBodyTooLarge)
			failed(413)
			return
		}
		body = b
	}
	// Step 9: routing.
	if opID == "" {
		handlers.WriteError(w, runs.ErrPageNotFound)
		failed(404)
		return
	}
	// Step 10: auth.
	if s.opts.APIKey != "" && !runs.Authorized(strings.Join(r.Header.Values("Authorization"), ", "), s.opts.APIKey) {
		handlers.WriteError(w, runs.ErrAuth)
		failed(401)
		return
	}
	// Step 11: the operation, through the generated Echo server.
	call := &handlers.Call{Target: target, Body: body, Effects: out.Effects, Head: method == "HEAD"}
	rw := &respWriter{w: w}
	req := r.WithContext(handlers.WithCall(r.Context(), call))
	if call.Head {
		req.Method = "GET"
	}
	s.echo.ServeHTTP(rw, req)
	if rw.streaming {
		finish(rw.status)
		return
	}
	status := rw.status
	if status == 0 {
		status = 200
	}
	resp := rw.buf
	contract, cerr := s.loadedContract()
	if cerr != nil {
		status, resp = 500, runs.Internal("contract: "+cerr.Error()).Body()
		w.Header().Set("Content-Type", "application/json")
	} else if contract != nil {
		if err := contract.ValidateResponse(opID, status, w.Header(), resp); err != nil {
			s.log.Error("response broke the contract", "operationId", opID, "status", status, "error", err)
			status, resp = 500, runs.Internal("response broke the contract: "+err.Error()).Body()
			w.Header().Set("Content-Type", "application/json")
		}
	}
	// Step 12: finishing.
	if call.Checkpoint != "" {
		entry.Accepted, entry.Checkpoint = true, call.Checkpoint
	}
	entry.RunID = call.RunID
	if call.Drop {
		finish(0)
		drop(w)
		return
	}
	if mutating && status >= 200 && status < 400 {
		w.Header().Set("X-Mockingbird-Checkpoint", s.gw.Finish(target, call.Checkpoint))
	}
	if status >= 400 {
		entry.Request = requestMeta(r)
		if contract != nil {
			for _, is := range contract.RequestIssues(opID, r, map[string]string{"run_id": runID}, body) {
				entry.Issues = append(entry.Issues, journal.Issue{In: is.In, Pointer: is.Pointer})
			}
		}
	}
	w.WriteHeader(status)
	if !call.Head {
		_, _ = w.Write(resp)
	}
	finish(status)
}

func requestMeta(r *http.Request) *journal.RequestMeta {
	m := &journal.RequestMeta{}
	if v, ok := r.Header["Content-Type"]; ok {
		s := strings.Join(v, ", ")
		m.ContentType = &s
	}
	if v, ok := r.Header["Content-Length"]; ok {
		cl := strings.Join(v, ", ")
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && cl != "" && strings.Trim(cl, "0123456789") == "" {
			m.BodyBytes = &n
		}
	}
	if len(r.TransferEncoding) > 0 {
		s := strings.Join(r.TransferEncoding, ", ")
		m.TransferEncoding = &s
	}
	return m
}

func writeFault(w http.ResponseWriter, f *faults.Response) {
	h := w.Header()
	if !f.NoBody {
		h.Set("Content-Type", "application/json")
	}
	for _, kv := range f.Header {
		h.Set(kv[0], kv[1])
	}
	w.WriteHeader(f.Status)
	if !f.NoBody {
		_, _ = w.Write(f.Body)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// drop closes the connection without a response (controls §6.5 step 7, runs-api
// §6.1 step 14). Over TCP the socket is reset (SO_LINGER 0) so the client sees a
// connection reset; without a hijackable connection the handler aborts.
func drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if t, ok := conn.(*net.TCPConn); ok {
		_ = t.SetLinger(0)
	}
	_ = conn.Close()
}

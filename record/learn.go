package record

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// route is one of the seven public routes the recorder learns from.
type route uint8

const (
	routeCreate route = iota + 1
	routeGet
	routeStop
	routeApproval
	routeSteer
	routeEvents
	routeCapabilities
)

// classify finds the public route of method and raw path (runs-api §6, an
// emulator's /ns/<name> prefix removed), the run id (percent-decoded) and the
// prefix's namespace. ok is false for every other request.
func classify(method, raw string) (rt route, ns, runID string, ok bool) {
	if rest, found := strings.CutPrefix(raw, "/ns/"); found {
		name, tail, _ := strings.Cut(rest, "/")
		ns, raw = name, "/"+tail
	}
	switch {
	case raw == "/v1/runs" && method == http.MethodPost:
		return routeCreate, ns, "", true
	case raw == "/v1/capabilities" && method == http.MethodGet:
		return routeCapabilities, ns, "", true
	}
	rest, found := strings.CutPrefix(raw, "/v1/runs/")
	if !found {
		return 0, "", "", false
	}
	seg, tail, _ := strings.Cut(rest, "/")
	if seg == "" {
		return 0, "", "", false
	}
	if id, err := url.PathUnescape(seg); err == nil {
		seg = id
	}
	switch {
	case tail == "" && method == http.MethodGet && !strings.Contains(rest, "/"):
		rt = routeGet
	case tail == "events" && method == http.MethodGet:
		rt = routeEvents
	case tail == "stop" && method == http.MethodPost:
		rt = routeStop
	case tail == "approval" && method == http.MethodPost:
		rt = routeApproval
	case tail == "steer" && method == http.MethodPost:
		rt = routeSteer
	default:
		return 0, "", "", false
	}
	return rt, ns, seg, true
}

// exchange is one proxied request of a public route while it crosses.
type exchange struct {
	route route
	key   string // namespace + "\x00" + run id (run id "" for create and capabilities)
	ns    string

	mu      sync.Mutex
	reqBody []byte // the request body copy, once read whole
	reqDone chan struct{}
	at      float64 // local time the response headers arrived
	header  http.Header
}

type exchangeKey struct{}

// exchangeOf starts an exchange for a public route (nil for any other
// request), keeping a copy of the request body when the route needs it.
func (r *Recorder) exchangeOf(req *http.Request) *exchange {
	rt, ns, id, ok := classify(req.Method, req.URL.EscapedPath())
	if !ok {
		return nil
	}
	if h := req.Header.Get("X-Mockingbird-Namespace"); h != "" {
		ns = h
	}
	ex := &exchange{route: rt, key: ns + "\x00" + id, ns: ns, reqDone: make(chan struct{})}
	if (rt == routeCreate || rt == routeSteer) && req.Body != nil && req.Body != http.NoBody && req.ContentLength != 0 {
		req.Body = newTee(req.Body, func(b []byte, whole bool) {
			ex.mu.Lock()
			if whole {
				ex.reqBody = append([]byte(nil), b...)
			}
			ex.mu.Unlock()
			close(ex.reqDone)
		}, false)
	} else {
		close(ex.reqDone)
	}
	return ex
}

// request waits (briefly) until the request body was read whole and returns
// it; nil when it was not.
func (ex *exchange) request() []byte {
	select {
	case <-ex.reqDone:
	case <-time.After(time.Second):
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.reqBody
}

// observeResponse is the proxy's ModifyResponse: it notes the arrival time
// and wraps the body so the recorder reads along as it crosses.
func (r *Recorder) observeResponse(resp *http.Response) error {
	ex, _ := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil
	}
	ex.at, ex.header = r.now(), resp.Header
	if ex.route == routeEvents {
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			resp.Body = &frames{rc: resp.Body, now: r.now,
				onData: func(data []byte, at float64) { r.learnFrame(ex, data, at) },
				onOver: func(float64) { r.skipFrame(ex) }}
		}
		return nil
	}
	status := resp.StatusCode
	resp.Body = newTee(resp.Body, func(b []byte, whole bool) {
		if whole {
			r.learn(ex, status, b)
		}
	}, true)
	return nil
}

// learn reads one whole JSON answer of a public route.
func (r *Recorder) learn(ex *exchange, status int, body []byte) {
	if ex.route == routeCapabilities {
		if status == http.StatusOK {
			r.learnCapabilities(ex.header, body)
		}
		return
	}
	v, err := runs.ParseStored(body)
	if err != nil || v.Kind != runs.Object {
		return
	}
	ans := v.Obj
	switch ex.route {
	case routeCreate:
		if status == http.StatusAccepted && str(ans, "run_id") != "" && !isTrue(ans, "replayed") {
			r.admit(ex, str(ans, "run_id"), ex.request())
		}
	case routeGet:
		if str(ans, "object") == "hermes.run" {
			r.observe(ex.key, observation{kind: obsRecord, at: ex.at, body: ans}, body)
		}
	case routeStop:
		switch {
		case ans.Len() == 2 && str(ans, "status") == "stopping":
			r.observe(ex.key, observation{kind: obsStop, at: ex.at}, body)
		case str(ans, "object") == "hermes.run":
			r.observe(ex.key, observation{kind: obsRecord, at: ex.at, body: ans}, body)
		}
	case routeApproval:
		r.observe(ex.key, observation{kind: obsAnswer, at: ex.at, body: ans}, body)
	case routeSteer:
		b, _ := runs.Parse(ex.request())
		if text, err := runs.SteerText(b); err == nil {
			r.observe(ex.key, observation{kind: obsSteer, at: ex.at, text: text}, body)
		}
	}
}

func isTrue(o *runs.Obj, k string) bool {
	v, ok := o.Get(k)
	return ok && v.Kind == runs.Bool && v.Bool
}

// admit starts the log of a new run from its RunCreate body (nil when the
// body could not be read along: the run is then matched by order).
func (r *Recorder) admit(ex *exchange, runID string, reqBody []byte) {
	l := &runLog{runID: runID, admitted: ex.at}
	if b, err := runs.Parse(reqBody); err == nil {
		l.input, l.hasInput = userMessage(b)
		if b.Kind == runs.Object {
			l.sessionID = str(b.Obj, "session_id")
			sid, _ := b.Obj.Get("session_id")
			l.sessionOther = sid.Kind != runs.String && sid.Truthy()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := ex.ns + "\x00" + runID
	if _, dup := r.runs[key]; dup {
		return
	}
	if len(r.order) >= MaxRuns {
		r.dropped++
		return
	}
	l.seq = len(r.order) + 1
	r.runs[key] = l
	r.order = append(r.order, l)
}

// observe adds o to the log of the run with key (runs not admitted through
// the recorder are not recorded) while all kept observations stay within
// maxKeptBytes.
func (r *Recorder) observe(key string, o observation, raw []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.runs[key]
	switch {
	case l == nil:
	case l.capped || r.kept+len(raw) > maxKeptBytes: // a run's log stays a prefix
		l.capped = true
	case l.add(o, raw):
		r.kept += len(raw)
	}
}

// learnFrame reads one SSE data frame of a run's stream.
func (r *Recorder) learnFrame(ex *exchange, data []byte, at float64) {
	v, err := runs.ParseStored(data)
	if err != nil || v.Kind != runs.Object {
		return
	}
	r.observe(ex.key, observation{kind: obsFrame, at: at, body: v.Obj}, data)
}

// skipFrame notes an SSE event of a run's stream whose data is longer than
// MaxBodyBytes: it crossed whole but is not learnt. For a recorded run, a
// WARN names the run and its scenario's comment counts the event.
func (r *Recorder) skipFrame(ex *exchange) {
	r.mu.Lock()
	l := r.runs[ex.key]
	if l != nil {
		l.oversized++
	}
	r.mu.Unlock()
	if l != nil {
		r.opts.Logger.Warn("record: SSE event over the bound not recorded", "run", l.runID, "maxBytes", MaxBodyBytes)
	}
}

// learnCapabilities keeps what a 200 of GET /v1/capabilities says the
// upstream is: a "version" field when the body has one, the platform, and the
// Server and X-Mockingbird headers (an emulator's "hermes@<version>").
func (r *Recorder) learnCapabilities(h http.Header, body []byte) {
	var parts []string
	if v, err := runs.ParseStored(body); err == nil && v.Kind == runs.Object {
		if s := str(v.Obj, "version"); s != "" {
			parts = append(parts, "version "+s)
		}
		if s := str(v.Obj, "platform"); s != "" {
			parts = append(parts, "platform "+s)
		}
	}
	if s, _, _ := strings.Cut(h.Get("X-Mockingbird"), ";"); s != "" {
		parts = append(parts, s)
	}
	if s := h.Get("Server"); s != "" {
		parts = append(parts, "server "+s)
	}
	if len(parts) == 0 {
		return
	}
	r.mu.Lock()
	r.info = strings.Join(parts, ", ")
	r.mu.Unlock()
}

// readCapped reads at most MaxBodyBytes of rc; whole is false when it was longer.
func readCapped(rc io.Reader) ([]byte, bool) {
	b, err := io.ReadAll(io.LimitReader(rc, MaxBodyBytes+1))
	return b, err == nil && len(b) <= MaxBodyBytes
}

func quoteJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

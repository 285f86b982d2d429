// Package record is `hermes-emulator record` (docs/record.md): a reverse
// proxy in front of a Hermes gateway that passes every request and response
// through unchanged and, from what crosses it, learns each run's lifecycle —
// admission, polled records, SSE frames, approval answers, steers, stops — so
// that it can write one scenario per run (the scenario format of
// docs/scenarios.md) that replays the run in the emulator.
//
//	rec, _ := record.New(record.Options{Upstream: "http://gateway:8642", Out: "recorded.yaml"})
//	http.ListenAndServe("127.0.0.1:8828", rec)   // point the application here
//	rec.Flush()                                  // or POST /__admin/record/flush
//
// The recorder stores no request header: not Authorization, not
// Idempotency-Key, not X-Hermes-Session-Key.
package record

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

// FlushPath is the recorder's own route: POST writes the file now.
const FlushPath = "/__admin/record/flush"

// MinSpeed and MaxSpeed bound Options.Speed (--speed): a day's delay divided
// by MinSpeed is still far inside a scenario step's bound, and MaxSpeed makes
// every recorded delay 0 ms long before it is reached.
const (
	MinSpeed = 0.001
	MaxSpeed = 1_000_000
)

// CheckSpeed refuses a --speed outside MinSpeed..MaxSpeed (NaN too).
func CheckSpeed(speed float64) error {
	if !(speed >= MinSpeed && speed <= MaxSpeed) {
		return fmt.Errorf("record: --speed must be from %g to %d, not %g", MinSpeed, MaxSpeed, speed)
	}
	return nil
}

// Options configure a Recorder.
type Options struct {
	// Upstream is the gateway's base URL, e.g. "http://127.0.0.1:8642".
	Upstream string
	// Out is the scenario file Flush writes (replaced whole each time).
	Out string
	// Redact replaces free text by placeholders of the same length
	// (docs/record.md "Redaction").
	Redact bool
	// Speed divides every recorded delay: 10 replays ten times faster. 0 = 1;
	// else MinSpeed to MaxSpeed (CheckSpeed).
	Speed float64
	// Match is how each scenario selects its run: MatchInput (default) or MatchOrder.
	Match MatchMode
	// APIKeyPassthrough lets the recorder reuse, once, the Authorization
	// header of a client request for its own GET /v1/capabilities when the
	// upstream requires a key and no client has read the capabilities yet.
	// The value is used for that one request and never kept.
	APIKeyPassthrough bool
	// Transport sends the proxied requests; nil = a clone of
	// http.DefaultTransport without compression (bodies cross byte for byte).
	Transport http.RoundTripper
	// Now is the clock of arrival times and of the file's date; nil = time.Now.
	Now func() time.Time
	// Logger receives one line per flush and per proxy error; nil = discard.
	Logger *slog.Logger
}

// Recorder is the recording proxy, an http.Handler. Safe for concurrent use.
type Recorder struct {
	opts     Options
	upstream *url.URL
	proxy    *httputil.ReverseProxy
	client   *http.Client
	probing  atomic.Bool

	mu      sync.Mutex
	runs    map[string]*runLog // by namespace + "\x00" + run id
	order   []*runLog
	dropped int    // admissions past MaxRuns
	info    string // what the upstream says it is, "" = unknown
	busy    int    // answers of public routes (not streams) still crossing
	kept    int    // bytes of all kept observations (maxKeptBytes)
}

// New returns a Recorder of opts. It does not contact the upstream. It
// refuses an Out it could not write at a flush, having tried to create a file
// there (probeOut; nothing is left behind).
func New(opts Options) (*Recorder, error) {
	u, err := url.Parse(opts.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("record: --upstream must be an http(s) URL, not %q", opts.Upstream)
	}
	// The base URL's path is a prefix every route is appended to: a query or
	// a fragment would be sent with every request, or cut the routes off.
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.User != nil {
		// Redacted: the error goes to stderr and logs, and must not repeat a password.
		return nil, fmt.Errorf("record: --upstream must be a base URL without credentials, query or fragment, not %q", u.Redacted())
	}
	if opts.Out == "" {
		return nil, errors.New("record: --out is required")
	}
	if err := checkOut(opts.Out); err != nil {
		return nil, err
	}
	if opts.Speed == 0 {
		opts.Speed = 1
	}
	if err := CheckSpeed(opts.Speed); err != nil {
		return nil, err
	}
	if opts.Match == "" {
		opts.Match = MatchInput
	}
	if opts.Match != MatchInput && opts.Match != MatchOrder {
		return nil, fmt.Errorf("record: --match must be input or order, not %q", opts.Match)
	}
	// The file is written only at a flush: an --out it cannot write would
	// lose the whole recording, so it is tried now (once the options are
	// known to be valid), leaving nothing behind.
	if err := probeOut(opts.Out); err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DisableCompression = true
		t.MaxIdleConnsPerHost = 64
		opts.Transport = t
	}
	r := &Recorder{opts: opts, upstream: u, runs: map[string]*runLog{}}
	r.client = &http.Client{Transport: opts.Transport, Timeout: 10 * time.Second}
	r.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			// Rewrite drops the client's X-Forwarded-* headers; the upstream
			// sees them as the client sent them (and none of ours).
			for _, k := range [...]string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
				if v, ok := pr.In.Header[k]; ok {
					pr.Out.Header[k] = v
				}
			}
		},
		Transport:      opts.Transport,
		FlushInterval:  -1,
		ModifyResponse: r.observeResponse,
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			r.opts.Logger.Warn("record: upstream", "method", req.Method, "path", req.URL.Path, "err", err)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	return r, nil
}

// ServeHTTP proxies req to the upstream, learning from the seven public
// routes on the way; FlushPath is answered by the recorder itself.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path == FlushPath {
		r.serveFlush(w, req)
		return
	}
	if r.opts.APIKeyPassthrough {
		if auth := req.Header.Get("Authorization"); auth != "" && r.Info() == "" && r.probing.CompareAndSwap(false, true) {
			go r.FetchCapabilities(context.Background(), auth)
		}
	}
	if ex := r.exchangeOf(req); ex != nil {
		req = req.WithContext(context.WithValue(req.Context(), exchangeKey{}, ex))
		if ex.route != routeEvents {
			r.mu.Lock()
			r.busy++
			r.mu.Unlock()
			defer func() {
				r.mu.Lock()
				r.busy--
				r.mu.Unlock()
			}()
		}
	}
	r.proxy.ServeHTTP(w, req)
}

// settle waits (at most settleWait) until no answer of a public route is
// still crossing: the recorder learns an answer once the proxy has passed its
// last byte on, so a client may hold an answer the recorder has not read yet.
func (r *Recorder) settle() {
	for deadline := time.Now().Add(settleWait); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		r.mu.Lock()
		busy := r.busy
		r.mu.Unlock()
		if busy == 0 {
			return
		}
	}
}

// settleWait bounds how long a flush waits for answers still crossing.
const settleWait = 2 * time.Second

// now is the local time in epoch seconds.
func (r *Recorder) now() float64 { return float64(r.opts.Now().UnixNano()) / 1e9 }

func (r *Recorder) serveFlush(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		w.WriteHeader(http.StatusMethodNotAllowed)
		fmt.Fprintf(w, `{"error":{"type":"record","message":"use POST %s"}}`, FlushPath)
		return
	}
	n, err := r.Flush()
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error":{"type":"record","message":%s}}`, quoteJSON(err.Error()))
		return
	}
	fmt.Fprintf(w, `{"file":%s,"scenarios":%d}`, quoteJSON(r.opts.Out), n)
}

// Flush writes one scenario per recorded run into the Out file (replacing it
// atomically) and returns how many it wrote. Recording goes on.
func (r *Recorder) Flush() (int, error) {
	data, n := r.Scenarios()
	if err := writeOut(r.opts.Out, data); err != nil {
		return 0, err
	}
	r.opts.Logger.Info("record: flushed", "file", r.opts.Out, "scenarios", n)
	return n, nil
}

// Scenarios renders the scenario file of the runs recorded so far (once the
// answers still crossing are read) and returns it with the number of
// scenarios in it.
func (r *Recorder) Scenarios() ([]byte, int) {
	r.settle()
	r.mu.Lock()
	logs := make([]*runLog, len(r.order))
	for i, l := range r.order {
		c := *l
		c.obs = append([]observation(nil), l.obs...)
		logs[i] = &c
	}
	dropped, info := r.dropped, r.info
	r.mu.Unlock()
	ss := buildScenarios(logs, buildOptions{speed: r.opts.Speed, match: r.opts.Match, redact: r.opts.Redact})
	// headerRoom is more than the header's counts can grow by once fit has run.
	const headerRoom = 512
	ss, left := fit(ss, scenarios.MaxFileBytes-len(writeFile(r.header(len(ss), dropped, len(ss), info), nil))-headerRoom)
	return writeFile(r.header(len(ss), dropped, left, info), ss), len(ss)
}

// header is the file's comment: where and when it was recorded, and how;
// dropped and left count the runs not recorded and not written.
func (r *Recorder) header(n, dropped, left int, info string) []string {
	up := url.URL{Scheme: r.upstream.Scheme, Host: r.upstream.Host, Path: r.upstream.Path}
	if info == "" {
		info = "unknown (no GET /v1/capabilities answered 200)"
	}
	timing := "as recorded"
	if r.opts.Speed != 1 {
		timing = fmt.Sprintf("%gx faster than recorded (--speed %g)", r.opts.Speed, r.opts.Speed)
	}
	h := []string{
		fmt.Sprintf("Recorded by hermes-emulator record from %s: %d run(s), one scenario each.", up.String(), n),
		"Upstream: " + info + ".",
		"Recorded on " + r.opts.Now().UTC().Format(time.RFC3339) + "; timing " + timing + "; match by " + string(r.opts.Match) + ".",
	}
	if r.opts.Redact {
		h = append(h, "Free text redacted: each character replaced by \""+Placeholder+"\".")
	}
	if dropped > 0 {
		h = append(h, fmt.Sprintf("%d later run(s) not recorded: at most %d per recording.", dropped, MaxRuns))
	}
	if left > 0 {
		h = append(h, fmt.Sprintf("%d recorded run(s) left out: the scenario loader reads at most %d bytes.", left, scenarios.MaxFileBytes))
	}
	return h
}

// Info is what the upstream said it is, from GET /v1/capabilities ("" until one answered 200).
func (r *Recorder) Info() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.info
}

// FetchCapabilities asks the upstream's GET /v1/capabilities (with the given
// Authorization value when not "") and keeps what it says it is. The
// authorization value is used for this request only.
func (r *Recorder) FetchCapabilities(ctx context.Context, authorization string) error {
	defer r.probing.Store(false)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(r.upstream.String(), "/")+"/v1/capabilities", nil)
	if err != nil {
		return err
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("record: GET /v1/capabilities: %w", err)
	}
	defer resp.Body.Close()
	body, whole := readCapped(resp.Body)
	if resp.StatusCode != http.StatusOK || !whole {
		return fmt.Errorf("record: GET /v1/capabilities: status %d", resp.StatusCode)
	}
	r.learnCapabilities(resp.Header, body)
	return nil
}

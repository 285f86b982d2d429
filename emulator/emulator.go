// Package emulator is the embeddable Hermes peer-run emulator: it wires the
// domain, the state, storage, the generated server, the control plane and the
// contract validator into one http.Handler, and serves it like
// net/http/httptest does — New, URL, Close, Client, Handler.
//
//	srv, err := emulator.New(emulator.Options{})
//	if err != nil { … }
//	defer srv.Close()
//	resp, err := http.Post(srv.URL()+"/v1/runs", "application/json", strings.NewReader(`{"input":"hi"}`))
//
// In a test, emulatortest.New(t, opts) does the same in one line and closes
// the server when the test ends.
//
// Two servers in one process never share state: without DBPath each has a
// private in-memory store (no SQLite). With NoListener there is no socket: serve
// Handler() in-process (httptest.NewRecorder, or your own mux).
//
// What a server offers:
//
//   - the seven public operations of openapi.yaml under /v1 (runs-api.md),
//     also behind a /ns/<name> prefix; Client is a typed client of them,
//     generated from the contract (package gen);
//   - the control plane: GET /health and /__admin (controls.md), described by
//     admin.yaml (served at GET /__admin/openapi.yaml), with views of the runs
//     held, a journal count and a live change stream (GET /__admin/stream);
//     Control is a Go client of it (package control) for clocks,
//     observations, faults, the journal, the runs, restarts and sweeps;
//   - the contract itself at GET /openapi.yaml (ContractPath);
//   - request metrics at GET /__admin/metrics, as JSON (controls §9) or, with
//     Accept: text/plain or ?format=prometheus, in the Prometheus text format;
//     Metrics returns them as a prometheus.Collector for your own registry;
//   - with Options.LogRequests, one log/slog line per vendor request with
//     method, path, status, operationId, durationMs, namespace and faultId —
//     never bodies, headers, keys or credentials.
//
// Every response carries x-mockingbird: hermes@<Version>; ns=<namespace>.
package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hermes-emulator/hermes-emulator/admin"
	"github.com/hermes-emulator/hermes-emulator/api"
	"github.com/hermes-emulator/hermes-emulator/credentials"
	"github.com/hermes-emulator/hermes-emulator/faults"
	"github.com/hermes-emulator/hermes-emulator/gateway"
	"github.com/hermes-emulator/hermes-emulator/gen"
	"github.com/hermes-emulator/hermes-emulator/handlers"
	"github.com/hermes-emulator/hermes-emulator/journal"
	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// Version is the emulator's own version, as `hermes-emulator version` prints it
// and every response's x-mockingbird header carries. Set at build time with
// -ldflags "-X github.com/hermes-emulator/hermes-emulator/emulator.Version=…".
var Version = "0.0.0-dev"

// Server is a running emulator, from New. Its methods are safe for concurrent
// use. Close it when done.
type Server struct {
	opts          Options
	db            storage.Store
	gw            *gateway.Gateway
	echo          *echo.Echo
	admin         *admin.Admin
	hub           *admin.Hub // the control plane's change stream
	faults        *faults.Store
	bodies        *handlers.Bodies // the one body reader of both planes
	journal       *journal.Journal
	metrics       *journal.Metrics
	contract      *api.Contract // nil without response validation; read after contractReady
	contractErr   error
	contractReady chan struct{}
	log           *slog.Logger

	ln       net.Listener
	http     *http.Server
	url      string
	closeErr error
	unlock   func() // releases the --db file lock
	once     sync.Once
	served   chan struct{}
	calls    calls              // requests in the pipeline: Close waits for them
	base     context.Context    // every request's context ends with it (Close, after the grace)
	cut      context.CancelFunc // ends base
	conns    sync.Map           // net.Conn → http.ConnState: the listener's open connections, for the same line
}

// New starts an emulator with opts: it opens (and migrates) the database,
// loads the contract and, unless opts.NoListener, listens and serves in the
// background. The server is ready when New returns. Errors: an option that
// no server can take (each named as its field, "emulator: Options.Port must
// be …"; see Options), the database cannot be opened or is in use, the
// address is taken, or the admin or API key is one no request can carry
// (runs.KeyProblem).
func New(opts Options) (*Server, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if p := runs.KeyProblem(opts.AdminKey, false); p != "" {
		return nil, errors.New("emulator: Options.AdminKey " + p + "; every control request would answer 401")
	}
	if p := runs.KeyProblem(opts.APIKey, true); p != "" {
		return nil, errors.New("emulator: Options.APIKey " + p + "; every public request would answer 401")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	db, unlock, abandon, err := openStore(opts.DBPath)
	if err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			db.Close()
			abandon()
		}
	}()
	hub := admin.NewHub(0)
	metrics := &journal.Metrics{}
	// The control plane's change stream hears every committed change.
	gw, err := gateway.New(db, gateway.Options{APIKey: opts.APIKey, MaxConcurrentRuns: opts.MaxConcurrentRuns,
		MaxCheckpoints: opts.MaxCheckpoints, SubscribeWait: opts.SSESubscribeWait, Seed: opts.Seed,
		MaxNamespaces: opts.MaxNamespaces, SSEBufferBytes: opts.SSEBufferBytes, Logger: log,
		OnStorageError: func(err error) { log.Error("storage write failed; the store is rewritten from memory", "err", err) },
		OnChange:       hub.Change, Listening: hub.Listening, Scenarios: opts.Scenarios, OnScenarioStep: metrics.ScenarioStep})
	if err != nil {
		return nil, err
	}
	if err := startClock(gw, opts); err != nil {
		gw.Close()
		return nil, fmt.Errorf("emulator: Options.ClockStart %v: %w", opts.ClockStart, err)
	}
	s := &Server{opts: opts, db: db, gw: gw, hub: hub, faults: faults.NewStore(), journal: journal.New(opts.JournalSize),
		metrics: metrics, log: log, served: make(chan struct{}), contractReady: make(chan struct{}),
		bodies: handlers.NewBodies(opts.MaxBodyBytes, opts.MaxInflightBodyBytes, opts.ReadTimeout)}
	s.base, s.cut = context.WithCancel(context.Background())
	s.loadContract()
	s.route()
	if opts.NoListener {
		close(s.served)
	} else if err := s.listen(); err != nil {
		gw.Close()
		return nil, err
	}
	started, s.unlock = true, unlock
	return s, nil
}

// openStore opens the durable store: the SQLite file at path, locked against
// a second process, or, without a path, a private in-memory store. unlock
// releases the lock (Close); abandon also removes the lock file when this call
// created it, for a New that fails: a refused file is refused before the lock
// file exists, and a later failure leaves none behind (hardening H8).
func openStore(path string) (db storage.Store, unlock, abandon func(), err error) {
	if path == "" {
		return storage.NewMemory(), func() {}, func() {}, nil
	}
	if err := storage.Preflight(path); err != nil {
		return nil, nil, nil, err
	}
	_, statErr := os.Stat(path + ".lock")
	created := errors.Is(statErr, fs.ErrNotExist)
	if unlock, err = lockFile(path); err != nil {
		return nil, nil, nil, err
	}
	abandon = func() {
		unlock()
		if created {
			os.Remove(path + ".lock")
		}
	}
	file, err := storage.Open(path)
	if err != nil {
		abandon()
		return nil, nil, nil, err
	}
	return file, unlock, abandon, nil
}

// startClock applies Options.ClockStart and FreezeClock to the clock.
func startClock(gw *gateway.Gateway, opts Options) error {
	if opts.ClockStart == 0 && !opts.FreezeClock {
		return nil
	}
	body := `{`
	if opts.ClockStart != 0 {
		body += `"set":` + strconv.FormatFloat(opts.ClockStart, 'f', -1, 64)
	}
	if opts.FreezeClock {
		if opts.ClockStart != 0 {
			body += ","
		}
		body += `"freeze":true`
	}
	_, err := gw.SetClockJSON([]byte(body + "}"))
	return err
}

// loadContract loads the contract for response validation (~5 ms) while the
// server starts listening: /health answers at once (cold start, issue 9) and
// the first vendor answer waits for it (loadedContract).
func (s *Server) loadContract() {
	if s.opts.NoResponseValidation {
		close(s.contractReady)
		return
	}
	go func() {
		s.contract, s.contractErr = api.Load()
		close(s.contractReady)
	}()
}

// route builds the generated vendor server and the control plane.
func (s *Server) route() {
	s.echo = echo.New()
	s.echo.HideBanner, s.echo.HidePort = true, true
	s.echo.HTTPErrorHandler = handlers.ErrorHandler
	gen.RegisterHandlers(s.echo, &handlers.Handlers{GW: s.gw, Opts: handlers.Options{
		APIKey: s.opts.APIKey, Durable: s.opts.DBPath != "", Keepalive: s.opts.SSEKeepalive}})
	s.admin = admin.New(admin.Deps{GW: s.gw, Faults: s.faults, Journal: s.journal, Metrics: s.metrics,
		Credentials: credentials.NewStore(), Hub: s.hub, AdminKey: s.opts.AdminKey, Bodies: s.bodies, Version: Version})
}

// listen opens the listener and serves it in a goroutine until Close.
func (s *Server) listen() error {
	ln, err := net.Listen("tcp", net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port)))
	if err != nil {
		return err
	}
	s.ln = ln
	// http://<host>:<actual port> (runs-api §15): the host as given, so
	// 0.0.0.0 stays 0.0.0.0 (the listener would report [::]).
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	s.url = "http://" + net.JoinHostPort(s.opts.Host, port)
	// The head must arrive within ReadTimeout; each body is read under its own
	// deadline (handlers.Bodies), not http.Server.ReadTimeout, whose deadline
	// would also end every SSE stream that outlives it (hardening H4). No
	// http.Server.WriteTimeout either: a stream writes for as long as it
	// lives; every other answer has WriteTimeout from its start (answerWriter).
	// `OPTIONS *` goes through the pipeline like every other request (a 404:
	// no such route) instead of net/http's own empty 200.
	// Every request's context derives from s.base, which Close ends once the
	// grace is over.
	s.http = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: s.opts.ReadTimeout, IdleTimeout: 120 * time.Second,
		DisableGeneralOptionsHandler: true, ConnState: s.connState, BaseContext: func(net.Listener) context.Context { return s.base }}
	// Streams opened by requests that were in flight when Shutdown began end
	// too: Shutdown calls this after it closed the listener.
	s.http.RegisterOnShutdown(s.gw.Shutdown)
	s.http.RegisterOnShutdown(s.hub.Close)
	go func() {
		defer close(s.served)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("serve", "error", err)
		}
	}()
	return nil
}

// URL is the base URL without a trailing slash, e.g. http://127.0.0.1:8827
// ("" without a listener).
func (s *Server) URL() string { return s.url }

// Handler is the emulator as an http.Handler, for in-process use: the whole
// pipeline (vendor routes, /health, /__admin, /openapi.yaml) without a socket.
// A dropped connection (drop faults, hermes.accepted_drop) panics with
// http.ErrAbortHandler when the ResponseWriter cannot be hijacked, as
// net/http expects.
func (s *Server) Handler() http.Handler { return s }

// Client returns a typed client of the public operations for this server,
// generated from openapi.yaml (gen.ClientWithResponses). With Options.APIKey
// it sends "Authorization: Bearer <key>" on every call that sets no
// Authorization of its own (as Control carries the admin key). Without a
// listener it calls Handler() in-process, with buffered responses (an SSE
// stream arrives when it ends); a request's context ends it as over a socket:
// a call whose context ends before the answer returns the context's error.
func (s *Server) Client() *gen.ClientWithResponses {
	url, opts := s.url, []gen.ClientOption(nil)
	if key := s.opts.APIKey; key != "" {
		opts = append(opts, gen.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			if r.Header.Get("Authorization") == "" {
				r.Header.Set("Authorization", "Bearer "+key)
			}
			return nil
		}))
	}
	if url == "" {
		url, opts = inprocURL, append(opts, gen.WithHTTPClient(s.inprocClient()))
	}
	c, err := gen.NewClientWithResponses(url, opts...)
	if err != nil {
		panic(fmt.Sprintf("emulator: client for %q: %v", s.url, err))
	}
	return c
}

// Close stops the listener, ends every open SSE stream at once (without a
// closing comment), waits up to Options.ShutdownGrace (10 s) for in-flight
// requests to finish (a request held by a fault delay completes normally),
// then cuts what is left — closes their connections and ends their contexts,
// with a WARN log line that counts them — and waits for them to return
// before it closes the database: no request of the server runs, and nothing
// is logged, after Close returns (unless a call ignores its ended context for
// one more grace: a Handler() caller's ResponseWriter that blocks; Close then
// logs a WARN line and returns). Without a listener, Close does the same
// with the Handler() calls in progress (and the calls of Client and Control):
// it waits up to the grace, then ends their contexts and waits for them.
// Close is idempotent; every call returns the first result.
func (s *Server) Close() error {
	s.once.Do(func() {
		<-s.contractReady // no goroutine of New outlives Close
		grace, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownGrace)
		defer cancel()
		s.gw.Shutdown()
		if s.http != nil {
			if err := s.http.Shutdown(grace); err != nil {
				s.warnCut() // say what the grace cut short (hardening H4)
				s.http.Close()
			}
			<-s.served
		} else {
			s.hub.Close()
			if !s.calls.wait(grace) {
				s.warnCut()
			}
		}
		// The requests cut short see their context end: a fault delay stops
		// waiting, a body read gives up. They return before the gateway and
		// the store they use are closed.
		s.cut()
		// A call that ignores its ended context (a caller's ResponseWriter of
		// Handler() that blocks) gets one more grace, not a Close that hangs.
		last, cancelLast := context.WithTimeout(context.Background(), s.opts.ShutdownGrace)
		defer cancelLast()
		if !s.calls.wait(last) {
			n, cut := s.calls.names()
			s.log.Warn("requests still running after they were cut; closing the store under them", "requests", n, "cut", cut)
		}
		s.closeErr = errors.Join(s.gw.Close(), s.db.Close())
		s.unlock()
	})
	return s.closeErr
}

// warnCut logs the WARN line of a shutdown whose grace elapsed.
func (s *Server) warnCut() {
	n, cut := s.calls.names()
	s.log.Warn("shutdown grace elapsed; closing the requests still in flight",
		"grace", s.opts.ShutdownGrace.String(), "requests", n, "cut", cut, "unfinishedHeads", s.unfinishedHeads())
}

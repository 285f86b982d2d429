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
// Two servers in one process never share state: without DBPath each has a
// private in-memory database.
package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
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
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// Version is the emulator's own version, as `hermes-emulator version` prints it
// and every response's x-mockingbird header carries. Set at build time with
// -ldflags "-X github.com/hermes-emulator/hermes-emulator/emulator.Version=…".
var Version = "0.0.0-dev"

// Options configure a Server. The zero value is a private in-memory emulator
// listening on 127.0.0.1 at a free port, with the spec's defaults.
type Options struct {
	Host string // listen host; default 127.0.0.1
	Port int    // listen port; 0 = any free port
	// NoListener builds the handler without a listener: use Handler() in-process.
	NoListener bool

	DBPath            string        // SQLite file (WAL), durable across restarts; "" = private in-memory
	AdminKey          string        // require x-mockingbird-admin-key on /__admin
	APIKey            string        // upstream bearer auth (runs-api §14.3)
	MaxConcurrentRuns int           // capacity limit; 0 = none
	MaxBodyBytes      int64         // body limit; 0 = 10,000,000
	Seed              string        // fault-rate RNG seed; "" = "0"
	SSEKeepalive      time.Duration // idle time before ": keepalive"; 0 = 30s
	SSESubscribeWait  time.Duration // wait before a missing transport answers 404; 0 = 1s
	JournalSize       int           // entries kept per namespace; 0 = 1000, negative = journal off
	MaxCheckpoints    int           // checkpoints kept per namespace; 0 = 1000

	// ClockStart, when non-zero, sets the controlled clock (epoch ms) at start;
	// FreezeClock freezes it there (or at the wall clock when ClockStart is 0).
	ClockStart  float64
	FreezeClock bool

	// NoResponseValidation turns off run-time validation of responses against
	// openapi.yaml (for load tests). Validation is on by default.
	NoResponseValidation bool

	Logger      *slog.Logger // nil = discard
	LogRequests bool         // one log line per vendor request
}

// Server is a running emulator.
type Server struct {
	opts     Options
	db       *storage.DB
	gw       *gateway.Gateway
	echo     *echo.Echo
	admin    *admin.Admin
	faults   *faults.Store
	journal  *journal.Journal
	metrics  *journal.Metrics
	contract *api.Contract
	log      *slog.Logger

	ln       net.Listener
	http     *http.Server
	url      string
	closeErr error
	once     sync.Once
	served   chan struct{}
}

// New starts an emulator with opts.
func New(opts Options) (*Server, error) {
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 10_000_000
	}
	if opts.Seed == "" {
		opts.Seed = "0"
	}
	if opts.JournalSize == 0 {
		opts.JournalSize = 1000
	} else if opts.JournalSize < 0 {
		opts.JournalSize = 0
	}
	if opts.SSEKeepalive <= 0 {
		opts.SSEKeepalive = 30 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	db, err := storage.Open(opts.DBPath)
	if err != nil {
		return nil, err
	}
	gw, err := gateway.New(db, gateway.Options{APIKey: opts.APIKey, MaxConcurrentRuns: opts.MaxConcurrentRuns,
		MaxCheckpoints: opts.MaxCheckpoints, SubscribeWait: opts.SSESubscribeWait, Seed: opts.Seed})
	if err != nil {
		db.Close()
		return nil, err
	}
	if opts.ClockStart != 0 || opts.FreezeClock {
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
		if _, cerr := gw.SetClockJSON([]byte(body + "}")); cerr != nil {
			db.Close()
			return nil, cerr
		}
	}
	s := &Server{opts: opts, db: db, gw: gw, faults: faults.NewStore(), journal: journal.New(opts.JournalSize),
		metrics: &journal.Metrics{}, log: log, served: make(chan struct{})}
	if !opts.NoResponseValidation {
		if s.contract, err = api.Load(); err != nil {
			db.Close()
			return nil, err
		}
	}
	s.echo = echo.New()
	s.echo.HideBanner, s.echo.HidePort = true, true
	s.echo.HTTPErrorHandler = handlers.ErrorHandler
	gen.RegisterHandlers(s.echo, &handlers.Handlers{GW: gw, Opts: handlers.Options{
		APIKey: opts.APIKey, Durable: opts.DBPath != "", Keepalive: opts.SSEKeepalive}})
	s.admin = admin.New(admin.Deps{GW: gw, Faults: s.faults, Journal: s.journal, Metrics: s.metrics,
		Credentials: credentials.NewStore(), AdminKey: opts.AdminKey, MaxBodyBytes: opts.MaxBodyBytes, Version: Version})
	if opts.NoListener {
		close(s.served)
		return s, nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)))
	if err != nil {
		db.Close()
		return nil, err
	}
	s.ln = ln
	s.url = "http://" + ln.Addr().String()
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	go func() {
		defer close(s.served)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("serve", "error", err)
		}
	}()
	return s, nil
}

// URL is the base URL, e.g. http://127.0.0.1:8827 ("" without a listener).
func (s *Server) URL() string { return s.url }

// Handler is the emulator as an http.Handler, for in-process use.
func (s *Server) Handler() http.Handler { return s }

// Client returns a typed client of the public operations for this server.
func (s *Server) Client() *gen.ClientWithResponses {
	c, err := gen.NewClientWithResponses(s.url)
	if err != nil {
		panic(fmt.Sprintf("emulator: client for %q: %v", s.url, err))
	}
	return c
}

// Close stops the listener, waits for in-flight requests and open streams to
// end (streams are told to end at once), and closes the database.
func (s *Server) Close() error {
	s.once.Do(func() {
		if s.http != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			s.gw.Shutdown()
			if err := s.http.Shutdown(ctx); err != nil {
				s.http.Close()
			}
			cancel()
			<-s.served
		}
		s.closeErr = s.db.Close()
	})
	return s.closeErr
}

func (s *Server) logRequest(e journal.Entry) {
	if !s.opts.LogRequests {
		return
	}
	op := e.OperationID
	if op == "" {
		op = "(unmatched)"
	}
	attrs := []any{"method", e.Method, "path", e.Path, "status", e.Status, "operationId", op,
		"durationMs", e.DurationMs, "namespace", e.Namespace}
	if e.FaultID != "" {
		attrs = append(attrs, "faultId", e.FaultID)
	}
	s.log.Info("request", attrs...)
}

package emulator

import (
	"net"
	"net/http"

	"github.com/hermes-emulator/hermes-emulator/journal"
	"github.com/hermes-emulator/hermes-emulator/prom"
)

// What the server tells about itself: its counters as a Prometheus collector,
// one log line per request (Options.LogRequests) and the census of requests
// and connections in flight for the shutdown log line.

// Metrics returns the server's request counters (controls §9) as a
// prometheus.Collector, to register on your own registry next to your
// application's metrics:
//
//	prometheus.MustRegister(srv.Metrics())
//
// The same counters are served at GET /__admin/metrics?format=prometheus. The
// collector reads the live counters on every scrape; DELETE /__admin/metrics
// resets them.
func (s *Server) Metrics() *prom.Collector { return prom.New(s.metrics) }

// connState follows the listener's connections (http.Server.ConnState).
func (s *Server) connState(c net.Conn, st http.ConnState) {
	if st == http.StateClosed || st == http.StateHijacked {
		s.conns.Delete(c)
	} else {
		s.conns.Store(c, st)
	}
}

// unfinishedHeads counts the connections still sending their first request
// head: net/http holds them in StateNew until the head is read, and Shutdown
// waits for them (up to 5 s) as for a request, but no handler knows of them.
func (s *Server) unfinishedHeads() int {
	n := 0
	s.conns.Range(func(_, st any) bool {
		if st == http.StateNew {
			n++
		}
		return true
	})
	return n
}

// logRequest logs one Info line "request" for a journaled vendor request when
// Options.LogRequests is set.
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

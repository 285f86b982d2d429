package emulator

import "github.com/hermes-emulator/hermes-emulator/prom"

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

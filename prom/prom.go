// Package prom exports the emulator's request metrics (controls.md §9) in the
// Prometheus text format, through github.com/prometheus/client_golang. It adds
// no state: a Collector reads journal.Metrics.Snapshot() on every scrape, so
// DELETE /__admin/metrics resets the exported counters too (Prometheus treats
// a counter that went down as a counter reset).
//
// Metrics (all counters):
//
//	hermes_emulator_requests_total{operation,status}    journaled vendor requests; operation "(unmatched)" when none matched, status "0" for a dropped connection
//	hermes_emulator_unmatched_requests_total{method,path} requests that matched no operation
//	hermes_emulator_faults_total                       requests a fault rule fired on
//	hermes_emulator_request_duration_ms_total          sum of the journaled durationMs
//
// The path label takes any path a client sends: the emulator is a test tool,
// so the label set is as large as the set of wrong paths the tests try.
package prom

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/hermes-emulator/hermes-emulator/journal"
)

// ContentType is the media type of Text's output: the Prometheus text
// exposition format 0.0.4.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

var (
	requestsDesc = prometheus.NewDesc("hermes_emulator_requests_total",
		"Journaled vendor requests by operationId ((unmatched) when none matched) and status (0 = connection dropped).",
		[]string{"operation", "status"}, nil)
	unmatchedDesc = prometheus.NewDesc("hermes_emulator_unmatched_requests_total",
		"Vendor requests that matched no operation, by method and raw path.",
		[]string{"method", "path"}, nil)
	faultsDesc = prometheus.NewDesc("hermes_emulator_faults_total",
		"Vendor requests journaled with a faultId.", nil, nil)
	durationDesc = prometheus.NewDesc("hermes_emulator_request_duration_ms_total",
		"Sum of the journaled request durations in milliseconds (each rounded to 2 decimals).", nil, nil)
	stepsDesc = prometheus.NewDesc("hermes_emulator_scenario_steps_total",
		"Scenario steps fired, by scenario name (docs/scenarios.md).", []string{"scenario"}, nil)
)

// Collector is a prometheus.Collector over a journal.Metrics. Register it on
// any prometheus.Registerer to scrape the emulator's counters with your own
// metrics. It is safe for concurrent use.
type Collector struct{ m *journal.Metrics }

var _ prometheus.Collector = (*Collector)(nil)

// New returns a Collector reading m.
func New(m *journal.Metrics) *Collector { return &Collector{m: m} }

// Describe sends the five metric descriptors.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- requestsDesc
	ch <- unmatchedDesc
	ch <- faultsDesc
	ch <- durationDesc
	ch <- stepsDesc
}

// Collect sends one consistent snapshot of the counters.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.m.Snapshot()
	for _, o := range s.ByOperation {
		op := o.OperationID
		if op == "" {
			op = "(unmatched)"
		}
		ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.CounterValue, float64(o.Count),
			label(op), strconv.Itoa(o.Status))
	}
	for _, u := range s.Unmatched {
		ch <- prometheus.MustNewConstMetric(unmatchedDesc, prometheus.CounterValue, float64(u.Count),
			label(u.Method), label(u.Path))
	}
	ch <- prometheus.MustNewConstMetric(faultsDesc, prometheus.CounterValue, float64(s.Faults))
	ch <- prometheus.MustNewConstMetric(durationDesc, prometheus.CounterValue, s.TotalDurationMs)
	for _, c := range s.ScenarioSteps {
		ch <- prometheus.MustNewConstMetric(stepsDesc, prometheus.CounterValue, float64(c.Count), c.Scenario)
	}
}

// label makes v a valid label value: Prometheus requires UTF-8, and a method
// or raw path of a malformed request may not be.
func label(v string) string { return strings.ToValidUTF8(v, "\uFFFD") }

// Text renders m in the Prometheus text format (ContentType): families sorted
// by name, samples by label values, as the registry gathers them.
func Text(m *journal.Metrics) ([]byte, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(New(m)); err != nil {
		return nil, err
	}
	families, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for _, mf := range families {
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

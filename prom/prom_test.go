package prom_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-emulator/hermes-emulator/journal"
	"github.com/hermes-emulator/hermes-emulator/prom"
)

func TestText(t *testing.T) {
	tests := []struct {
		name    string
		entries []journal.Entry
		want    string
	}{
		{"zero", nil, `# HELP hermes_emulator_faults_total Vendor requests journaled with a faultId.
# TYPE hermes_emulator_faults_total counter
hermes_emulator_faults_total 0
# HELP hermes_emulator_request_duration_ms_total Sum of the journaled request durations in milliseconds (each rounded to 2 decimals).
# TYPE hermes_emulator_request_duration_ms_total counter
hermes_emulator_request_duration_ms_total 0
`},
		{"mixed", []journal.Entry{
			{OperationID: "RunCreate", Method: "POST", Path: "/v1/runs", Status: 202, DurationMs: 1.25},
			{OperationID: "RunCreate", Method: "POST", Path: "/v1/runs", Status: 202, DurationMs: 0.5},
			{OperationID: "RunGet", Method: "GET", Path: "/v1/runs/x", Status: 500, DurationMs: 0.125, FaultID: "f1"},
			{OperationID: "RunCreate", Method: "POST", Path: "/v1/runs", Status: 0, FaultID: "hermes_submit_accepted_drop"},
			{Method: "GET", Path: "/missing", Status: 404},
			{Method: "GET", Path: "/missing", Status: 404},
			{Method: "PUT", Path: "/a\"b\\c", Status: 404},
		}, `# HELP hermes_emulator_faults_total Vendor requests journaled with a faultId.
# TYPE hermes_emulator_faults_total counter
hermes_emulator_faults_total 2
# HELP hermes_emulator_request_duration_ms_total Sum of the journaled request durations in milliseconds (each rounded to 2 decimals).
# TYPE hermes_emulator_request_duration_ms_total counter
hermes_emulator_request_duration_ms_total 1.88
# HELP hermes_emulator_requests_total Journaled vendor requests by operationId ((unmatched) when none matched) and status (0 = connection dropped).
# TYPE hermes_emulator_requests_total counter
hermes_emulator_requests_total{operation="(unmatched)",status="404"} 3
hermes_emulator_requests_total{operation="RunCreate",status="0"} 1
hermes_emulator_requests_total{operation="RunCreate",status="202"} 2
hermes_emulator_requests_total{operation="RunGet",status="500"} 1
# HELP hermes_emulator_unmatched_requests_total Vendor requests that matched no operation, by method and raw path.
# TYPE hermes_emulator_unmatched_requests_total counter
hermes_emulator_unmatched_requests_total{method="GET",path="/missing"} 2
hermes_emulator_unmatched_requests_total{method="PUT",path="/a\"b\\c"} 1
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &journal.Metrics{}
			for _, e := range tt.entries {
				m.Record(e)
			}
			got, err := prom.Text(m)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// Reset zeroes the exported counters: the collector keeps no state of its own.
func TestTextAfterReset(t *testing.T) {
	m := &journal.Metrics{}
	m.Record(journal.Entry{OperationID: "RunGet", Status: 200, DurationMs: 3})
	m.Reset()
	got, err := prom.Text(m)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "hermes_emulator_requests_total{") || !strings.Contains(string(got), "hermes_emulator_request_duration_ms_total 0\n") {
		t.Fatalf("after reset:\n%s", got)
	}
}

// The collector registers next to an application's own metrics and passes the
// pedantic registry's consistency checks.
func TestCollectorRegisters(t *testing.T) {
	m := &journal.Metrics{}
	m.Record(journal.Entry{OperationID: "RunGet", Status: 200})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(prom.New(m), prometheus.NewCounter(prometheus.CounterOpts{Name: "app_total", Help: "app"}))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range families {
		names = append(names, mf.GetName()+":"+strconv.Itoa(len(mf.GetMetric())))
	}
	want := "app_total:1 hermes_emulator_faults_total:1 hermes_emulator_request_duration_ms_total:1 hermes_emulator_requests_total:1"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("gathered %s, want %s", got, want)
	}
}

func TestTextScenarioSteps(t *testing.T) {
	m := &journal.Metrics{}
	m.ScenarioStep("b")
	m.ScenarioStep("a")
	m.ScenarioStep("b")
	got, err := prom.Text(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `# HELP hermes_emulator_scenario_steps_total Scenario steps fired, by scenario name (docs/scenarios.md).
# TYPE hermes_emulator_scenario_steps_total counter
hermes_emulator_scenario_steps_total{scenario="a"} 1
hermes_emulator_scenario_steps_total{scenario="b"} 2
`
	if !strings.Contains(string(got), want) {
		t.Fatalf("got\n%s\nwant it to contain\n%s", got, want)
	}
	if body := string(m.Body()); !strings.HasSuffix(body, `,"scenarioSteps":{"a":1,"b":2}}`) {
		t.Fatalf("json %s", body)
	}
	m.Reset()
	if body := string(m.Body()); strings.Contains(body, "scenarioSteps") {
		t.Fatalf("after reset %s", body)
	}
}

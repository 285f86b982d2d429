package journal

import (
	"cmp"
	"slices"
	"strconv"
	"sync"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Metrics are the global request counters of controls.md §9: every journaled
// vendor request is counted, in every namespace, even when the journal keeps
// nothing. Process state. The zero value is ready to use; all methods are safe
// for concurrent use.
type Metrics struct {
	mu        sync.Mutex
	requests  int64
	byOp      map[opKey]int64
	unmatched map[pathKey]int64
	faults    int64
	totalMs   float64
	steps     map[string]int64 // fired scenario steps by scenario name
}

type opKey struct {
	op     string // "" = unmatched
	status int
}

type pathKey struct{ method, path string }

// OperationCount is one `byOperation` counter: requests of an operation
// answered with a status.
type OperationCount struct {
	OperationID string // "" = no operation matched
	Status      int
	Count       int64
}

// Key is the `byOperation` key: "<operationId or (unmatched)> <status>".
func (c OperationCount) Key() string {
	op := c.OperationID
	if op == "" {
		op = "(unmatched)"
	}
	return op + " " + strconv.Itoa(c.Status)
}

// UnmatchedCount is one `unmatched` counter: requests that matched no
// operation, by method and path.
type UnmatchedCount struct {
	Method, Path string
	Count        int64
}

// MetricsSnapshot is the counters as plain data, ordered as GET
// /__admin/metrics renders them (for other exporters).
type MetricsSnapshot struct {
	Requests        int64
	ByOperation     []OperationCount // sorted by Key, by code point
	Unmatched       []UnmatchedCount // count descending, then "<method> <path>" by code point
	Faults          int64            // requests journaled with a faultId
	TotalDurationMs float64          // sum of the rounded durationMs
	ScenarioSteps   []ScenarioCount  // fired scenario steps, by scenario name (code point order)
}

// ScenarioCount is the number of steps fired by the scenarios of one name
// (scenarios §6), in every namespace.
type ScenarioCount struct {
	Scenario string
	Count    int64
}

// MaxScenarioCounts is how many scenario names the `scenarioSteps` counters
// list at most: sets loaded one after another may bring new names without
// end (hardening H3). Once full, the steps of a new name are not counted;
// DELETE /__admin/metrics empties the list.
const MaxScenarioCounts = 1000

// ScenarioStep counts one fired step of the named scenario (at most
// MaxScenarioCounts names).
func (m *Metrics) ScenarioStep(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.steps == nil {
		m.steps = make(map[string]int64)
	}
	if _, listed := m.steps[name]; listed || len(m.steps) < MaxScenarioCounts {
		m.steps[name]++
	}
}

// MaxUnmatched is how many distinct method and path pairs the `unmatched`
// counters list at most (hardening H3: traffic must not grow memory without
// bound). Once full, requests of a new pair are counted everywhere else
// (requests, byOperation) but not listed; DELETE /__admin/metrics empties it.
const MaxUnmatched = 1000

// Record counts one journaled request: requests, byOperation, unmatched (when
// e.OperationID is ""; the method and path cut to their first runs.EchoLimit
// bytes, at most MaxUnmatched pairs), faults (when e.FaultID is set) and the duration,
// rounded to 2 decimals as Journal.Add rounds it. Callers pass the same raw,
// unrounded e they pass to Add.
func (m *Metrics) Record(e Entry) {
	d := roundMs(e.DurationMs)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byOp == nil {
		m.byOp = make(map[opKey]int64)
		m.unmatched = make(map[pathKey]int64)
	}
	m.requests++
	m.byOp[opKey{e.OperationID, e.Status}]++
	if e.OperationID == "" {
		k := pathKey{runs.Echo(e.Method), runs.Echo(e.Path)}
		if _, ok := m.unmatched[k]; ok {
			m.unmatched[k]++
		} else if len(m.unmatched) < MaxUnmatched {
			m.unmatched[pathKey{keep(k.method), keep(k.path)}] = 1
		}
	}
	if e.FaultID != "" {
		m.faults++
	}
	m.totalMs += d
}

// Reset is DELETE /__admin/metrics (controls.md §9): every counter back to zero.
func (m *Metrics) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests, m.faults, m.totalMs = 0, 0, 0
	m.byOp, m.unmatched, m.steps = nil, nil, nil
}

// Snapshot returns the counters, ordered as the body renders them.
func (m *Metrics) Snapshot() MetricsSnapshot {
	m.mu.Lock()
	s := MetricsSnapshot{Requests: m.requests, Faults: m.faults, TotalDurationMs: m.totalMs}
	s.ByOperation = make([]OperationCount, 0, len(m.byOp))
	for k, n := range m.byOp {
		s.ByOperation = append(s.ByOperation, OperationCount{k.op, k.status, n})
	}
	s.Unmatched = make([]UnmatchedCount, 0, len(m.unmatched))
	for k, n := range m.unmatched {
		s.Unmatched = append(s.Unmatched, UnmatchedCount{k.method, k.path, n})
	}
	for k, n := range m.steps {
		s.ScenarioSteps = append(s.ScenarioSteps, ScenarioCount{k, n})
	}
	m.mu.Unlock()
	slices.SortFunc(s.ScenarioSteps, func(a, b ScenarioCount) int { return cmp.Compare(a.Scenario, b.Scenario) })
	// Go compares strings bytewise, which for UTF-8 is code point order.
	slices.SortFunc(s.ByOperation, func(a, b OperationCount) int { return cmp.Compare(a.Key(), b.Key()) })
	slices.SortFunc(s.Unmatched, func(a, b UnmatchedCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Method+" "+a.Path, b.Method+" "+b.Path)
	})
	return s
}

// Body is the GET /__admin/metrics body (controls.md §9):
// {"requests":n,"byOperation":{"<op> <status>":n,…},"unmatched":[{"method","path","count"},…],"faults":n,"totalDurationMs":x},
// then "scenarioSteps":{"<scenario>":n,…} once a scenario step fired,
// with the orders of MetricsSnapshot and JavaScript number rendering.
func (m *Metrics) Body() []byte {
	s := m.Snapshot()
	b := []byte(`{"requests":`)
	b = strconv.AppendInt(b, s.Requests, 10)
	b = append(b, `,"byOperation":{`...)
	for i, c := range s.ByOperation {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, runs.QuoteString(c.Key())...)
		b = append(b, ':')
		b = strconv.AppendInt(b, c.Count, 10)
	}
	b = append(b, `},"unmatched":[`...)
	for i, u := range s.Unmatched {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"method":`...)
		b = append(b, runs.QuoteString(u.Method)...)
		b = append(b, `,"path":`...)
		b = append(b, runs.QuoteString(u.Path)...)
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, u.Count, 10)
		b = append(b, '}')
	}
	b = append(b, `],"faults":`...)
	b = strconv.AppendInt(b, s.Faults, 10)
	b = append(b, `,"totalDurationMs":`...)
	b = append(b, runs.FormatJSNumber(s.TotalDurationMs)...)
	// Only once a scenario step fired (scenarios §6): the body of an
	// emulator without scenarios stays that of controls §9.
	if len(s.ScenarioSteps) > 0 {
		b = append(b, `,"scenarioSteps":{`...)
		for i, c := range s.ScenarioSteps {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, runs.QuoteString(c.Scenario)...)
			b = append(b, ':')
			b = strconv.AppendInt(b, c.Count, 10)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

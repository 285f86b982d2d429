package main

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestHistIndexMonotoneAndTight(t *testing.T) {
	prev := -1
	for _, v := range []uint64{0, 1, 63, 64, 65, 127, 128, 129, 1000, 1e6, 1e9, 1 << 40} {
		i := histIndex(v)
		if i < prev {
			t.Fatalf("histIndex(%d) = %d < previous %d", v, i, prev)
		}
		prev = i
		lo, hi := histLow(i), histLow(i+1)
		if v < lo || v >= hi {
			t.Fatalf("value %d in bucket %d = [%d, %d)", v, i, lo, hi)
		}
		if v >= histSub && float64(hi-lo)/float64(lo) > 1.0/histSub+1e-12 {
			t.Fatalf("bucket %d = [%d, %d) wider than 1/%d", i, lo, hi, histSub)
		}
	}
}

func TestHistQuantiles(t *testing.T) {
	tests := []struct {
		name     string
		values   []time.Duration // each recorded once
		q        float64
		want     time.Duration
		tolerate time.Duration
	}{
		{"empty", nil, 0.5, 0, 0},
		{"single", []time.Duration{time.Millisecond}, 0.99, time.Millisecond, 0},
		{"exact below 64ns", []time.Duration{10, 20, 30, 40}, 0.5, 20, 0},
		{"median of 1..100 ms", ramp(100, time.Millisecond), 0.5, 50 * time.Millisecond, 400 * time.Microsecond},
		{"p99 of 1..100 ms", ramp(100, time.Millisecond), 0.99, 99 * time.Millisecond, 800 * time.Microsecond},
		{"p100 capped at max", ramp(100, time.Millisecond), 1, 100 * time.Millisecond, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h hist
			for _, v := range tc.values {
				h.record(v)
			}
			got := h.quantile(tc.q)
			if d := got - tc.want; d > tc.tolerate || d < -tc.tolerate {
				t.Fatalf("quantile(%v) = %v, want %v ± %v", tc.q, got, tc.want, tc.tolerate)
			}
		})
	}
}

func ramp(n int, unit time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(i+1) * unit
	}
	return out
}

func TestHistMerge(t *testing.T) {
	var a, b hist
	a.record(time.Millisecond)
	b.record(3 * time.Millisecond)
	b.record(2 * time.Millisecond)
	a.merge(&b)
	if a.n != 3 || a.max != 3*time.Millisecond {
		t.Fatalf("merged n=%d max=%v, want 3 and 3ms", a.n, a.max)
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name, method, path, key, body, want string
	}{
		{"get", "GET", "/v1/runs/run_1", "", "",
			"GET /v1/runs/run_1 HTTP/1.1\r\nHost: h:1\r\nUser-Agent: loadgen\r\n\r\n"},
		{"keyed post", "POST", "/v1/runs", "k-1", `{"input":"x"}`,
			"POST /v1/runs HTTP/1.1\r\nHost: h:1\r\nUser-Agent: loadgen\r\nContent-Type: application/json\r\nContent-Length: 13\r\nIdempotency-Key: k-1\r\n\r\n{\"input\":\"x\"}"},
		{"empty post", "POST", "/v1/runs/r/stop", "", "",
			"POST /v1/runs/r/stop HTTP/1.1\r\nHost: h:1\r\nUser-Agent: loadgen\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(render(nil, tc.method, tc.path, "h:1", tc.key, []byte(tc.body)))
			if got != tc.want {
				t.Fatalf("render = %q, want %q", got, tc.want)
			}
			// The request must be one a real server parses.
			req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(got)))
			if err != nil || req.Method != tc.method || req.URL.Path != tc.path || req.Header.Get("Idempotency-Key") != tc.key {
				t.Fatalf("ReadRequest = %v, %v", req, err)
			}
		})
	}
}

func TestRunID(t *testing.T) {
	tests := map[string]string{
		`{"run_id":"run_4e68","status":"started","replayed":false}`: "run_4e68",
		`{"error":{}}`:      "",
		`{"run_id":"unterm`: "",
	}
	for body, want := range tests {
		if got := runID([]byte(body)); got != want {
			t.Errorf("runID(%s) = %q, want %q", body, got, want)
		}
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}}
	for _, tc := range tests {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// The report pairs rounds, takes medians and applies the targets: the
// throughput ratio to closed-loop rows, the p99 factor to paced ones.
func TestReportTargets(t *testing.T) {
	results := []Result{
		{Label: "keyless", Role: "baseline", Round: 1, Kind: "load", RPS: 10000, P99Ms: 2},
		{Label: "keyless", Role: "emulator", Round: 1, Kind: "load", RPS: 5000, P99Ms: 3, HWMKB: 30 * 1024},
		{Label: "keyless", Role: "baseline", Round: 2, Kind: "load", RPS: 20000, P99Ms: 1},
		{Label: "keyless", Role: "emulator", Round: 2, Kind: "load", RPS: 6000, P99Ms: 3, HWMKB: 50 * 1024},
		{Label: "keyed", Role: "baseline", Round: 1, Kind: "load", Rate: 1000, RPS: 1000, P99Ms: 2},
		{Label: "keyed", Role: "emulator", Round: 1, Kind: "load", Rate: 1000, RPS: 999, P99Ms: 3.5},
		{Label: "keyed", Role: "baseline", Round: 2, Kind: "load", Rate: 1000, RPS: 1000, P99Ms: 1},
		{Label: "keyed", Role: "emulator", Round: 2, Kind: "load", Rate: 1000, RPS: 1000, P99Ms: 2.5},
		{Label: "keyless", Role: "baseline", Round: 1, Kind: "load", Rate: 1000, RPS: 1000, P99Ms: 2},
		{Label: "keyless", Role: "emulator", Round: 1, Kind: "load", Rate: 1000, RPS: 1000, P99Ms: 3},
		{Label: "sse", Role: "emulator", Round: 1, Kind: "sse", N: 1000, P50Ms: 0.2, P99Ms: 0.5},
		{Label: "streams", Role: "emulator", Round: 1, Kind: "streams", N: 1000, RSSKB: 61 * 1024},
		{Label: "coldstart", Role: "emulator", Round: 1, Kind: "coldstart", N: 10, P50Ms: 12},
		{Label: "poll-stored", Role: "emulator", Round: 1, Kind: "load", N: 1000, RPS: 100, P50Ms: 1, P99Ms: 2},
		{Label: "poll-stored", Role: "emulator", Round: 1, Kind: "load", N: 1000000, RPS: 90, P50Ms: 1.2, P99Ms: 4},
	}
	var buf bytes.Buffer
	report(&buf, results)
	out := buf.String()
	for _, want := range []string{
		// closed loop: ratio = median(0.5, 0.3) = 0.4 → PASS; p99× = median(1.5, 3) = 2.25, not a target there
		"submit keyless                        5500    0.000    3.000   40.0 MB |     15000    1.500 |  0.400   2.25 | ratio≥0.40 PASS\n",
		// paced: p99× = median(1.75, 2.5) = 2.125 → MISS; 1.5 → PASS; the rows follow the table order
		"submit keyless 1000/s                 1000    0.000    3.000    0.0 MB |      1000    2.000 |  1.000   1.50 | p99≤2×base PASS\n" +
			"submit keyed (new keys) 1000/s        1000    0.000    3.000    0.0 MB |      1000    1.500 |  1.000   2.12 | p99≤2×base MISS\n",
		"p99≤1ms PASS",
		"RSS<60MB MISS",
		"median≤20ms PASS",
		"p50,p99≤1.5× of 1000 MISS (p50 1.20×, p99 2.00×)",
		"targets: 4 PASS, 3 MISS",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// A paced load's requests are due at start + i/rate, one after another,
// whoever asks.
func TestPaceSchedule(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	p := &pace{start: t0, rate: 3}
	for i, want := range []time.Duration{0, 333333333, 666666666, time.Second} {
		if got := p.next().Sub(t0); got != want {
			t.Fatalf("request %d due at +%v, want +%v", i, got, want)
		}
	}
}

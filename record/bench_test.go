package record

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// p50 is the median of ds in microseconds.
func p50(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[len(ds)/2]) / float64(time.Microsecond)
}

// BenchmarkProxiedPoll polls one run of an emulator directly and through the
// recorder, alternately, and reports both medians and the difference (the
// proxy's added latency; target < 1 ms).
func BenchmarkProxiedPoll(b *testing.B) {
	up := emulatortest.New(b, emulator.Options{NoResponseValidation: true})
	rec, err := New(Options{Upstream: up.URL(), Out: filepath.Join(b.TempDir(), "o.yaml")})
	if err != nil {
		b.Fatal(err)
	}
	px := httptest.NewServer(rec)
	defer px.Close()
	resp, err := http.Post(px.URL+"/v1/runs", "application/json", strings.NewReader(`{"input":"bench"}`))
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	id := strings.Split(string(body), `"`)[3]
	get := func(base string) time.Duration {
		start := time.Now()
		resp, err := http.Get(base + "/v1/runs/" + id)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start)
	}
	direct := make([]time.Duration, 0, b.N)
	proxied := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		direct = append(direct, get(up.URL()))
		proxied = append(proxied, get(px.URL))
	}
	b.StopTimer()
	d, p := p50(direct), p50(proxied)
	b.ReportMetric(d, "direct-p50-µs")
	b.ReportMetric(p, "proxied-p50-µs")
	b.ReportMetric(p-d, "added-p50-µs")
}

// BenchmarkSSEFrameCrossing writes one SSE frame at a time upstream and
// reports the median time until the client has read it through the recorder
// (target < 1 ms), and the same directly.
func BenchmarkSSEFrameCrossing(b *testing.B) {
	tick := make(chan int)
	sent := make(chan time.Time, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for i := range tick {
			if i < 0 {
				return
			}
			start := time.Now()
			io.WriteString(w, `data: {"event": "message.delta", "run_id": "run_x", "timestamp": 1700000000.0, "delta": "`+strconv.Itoa(i)+`"}`+"\n\n")
			w.(http.Flusher).Flush()
			sent <- start
		}
	}))
	defer up.Close()
	rec, err := New(Options{Upstream: up.URL, Out: filepath.Join(b.TempDir(), "o.yaml")})
	if err != nil {
		b.Fatal(err)
	}
	px := httptest.NewServer(rec)
	defer px.Close()
	measure := func(base string, n int) []time.Duration {
		resp, err := http.Get(base + "/v1/runs/run_x/events")
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		rd := bufio.NewReader(resp.Body)
		out := make([]time.Duration, 0, n)
		for i := range n {
			tick <- i
			for {
				line, err := rd.ReadString('\n')
				if err != nil {
					b.Fatal(err)
				}
				if line == "\n" {
					break
				}
			}
			out = append(out, time.Since(<-sent))
		}
		tick <- -1
		return out
	}
	b.ResetTimer()
	proxied := measure(px.URL, b.N)
	direct := measure(up.URL, b.N)
	b.StopTimer()
	b.ReportMetric(p50(direct), "direct-p50-µs")
	b.ReportMetric(p50(proxied), "proxied-p50-µs")
}

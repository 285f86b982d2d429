package emulator_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// Full-stack micro-benchmarks through Handler() in-process: the whole request
// pipeline (runs-api §3), handlers, gateway, storage and response validation
// (on, as by default), without sockets. scripts/bench measures the same
// operations over real connections against a net/http baseline.

// benchServe sends one request through h and returns the recorder.
func benchServe(h http.Handler, method, path string, body []byte) *httptest.ResponseRecorder {
	var req *http.Request
	if body != nil {
		req = httptest.NewRequest(method, "http://emulator"+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(method, "http://emulator"+path, nil)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

var benchSubmitBody = []byte(`{"input":"bench"}`)

// BenchmarkSubmitKeyless is POST /v1/runs without Idempotency-Key (runs-api §6.1):
// every iteration admits a new run.
func BenchmarkSubmitKeyless(b *testing.B) {
	h := emulatortest.New(b, emulator.Options{NoListener: true}).Handler()
	b.ReportAllocs()
	for b.Loop() {
		if rec := benchServe(h, "POST", "/v1/runs", benchSubmitBody); rec.Code != 202 {
			b.Fatalf("POST /v1/runs = %d %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkSubmitReplay is POST /v1/runs with one Idempotency-Key and body
// (runs-api §6.1 step 12): every iteration after the first is a replay.
func BenchmarkSubmitReplay(b *testing.B) {
	h := emulatortest.New(b, emulator.Options{NoListener: true}).Handler()
	submit := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "http://emulator/v1/runs", bytes.NewReader(benchSubmitBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "bench-replay")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	submit()
	b.ReportAllocs()
	for b.Loop() {
		if rec := submit(); rec.Code != 202 || rec.Header().Get("Idempotency-Replayed") != "true" {
			b.Fatalf("POST /v1/runs = %d %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkRetainedPerRun reports the heap each admitted run keeps (the cache
// layer never sweeps unfinished runs, runs-api §11.2): for a keyless run its
// cached record and its SSE transport; for a keyed one also its reservation
// (runs-api §7) and its durable row, with a new key of 22 bytes as
// scripts/bench sends. Run it with a fixed count, e.g. -benchtime 200000x.
func BenchmarkRetainedPerRun(b *testing.B) {
	for _, keyed := range []bool{false, true} {
		name := map[bool]string{false: "keyless", true: "keyed"}[keyed]
		b.Run(name, func(b *testing.B) {
			h := emulatortest.New(b, emulator.Options{NoListener: true}).Handler()
			submit := func(i int) *httptest.ResponseRecorder {
				req := httptest.NewRequest("POST", "http://emulator/v1/runs", bytes.NewReader(benchSubmitBody))
				req.Header.Set("Content-Type", "application/json")
				if keyed {
					req.Header.Set("Idempotency-Key", fmt.Sprintf("kmh3x9q2ab7c1-%d-%d", i%32, i/32))
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				return rec
			}
			submit(-1) // the namespace and its first chunks
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			n := 0
			for b.Loop() {
				if rec := submit(n); rec.Code != 202 {
					b.Fatalf("POST /v1/runs = %d %s", rec.Code, rec.Body)
				}
				n++
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "heapB/run")
		})
	}
}

// BenchmarkPoll is GET /v1/runs/{id} (runs-api §6.2) over 1,000 existing runs in turn.
func BenchmarkPoll(b *testing.B) {
	h := emulatortest.New(b, emulator.Options{NoListener: true}).Handler()
	paths := make([]string, 1000)
	for i := range paths {
		rec := benchServe(h, "POST", "/v1/runs", benchSubmitBody)
		var v struct {
			RunID string `json:"run_id"`
		}
		if rec.Code != 202 || json.Unmarshal(rec.Body.Bytes(), &v) != nil || v.RunID == "" {
			b.Fatalf("POST /v1/runs = %d %s", rec.Code, rec.Body)
		}
		paths[i] = "/v1/runs/" + v.RunID
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if rec := benchServe(h, "GET", paths[i%len(paths)], nil); rec.Code != 200 {
			b.Fatalf("GET %s = %d %s", paths[i%len(paths)], rec.Code, rec.Body)
		}
		i++
	}
}

// BenchmarkNewClose is emulator.New then Close, in-process: what a test pays
// for a private emulator (issue 17: ≤ 2 ms). With a listener, as by default,
// and without one (Handler only).
func BenchmarkNewClose(b *testing.B) {
	for _, noListener := range []bool{false, true} {
		b.Run(map[bool]string{false: "listener", true: "handler"}[noListener], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				srv, err := emulator.New(emulator.Options{NoListener: noListener})
				if err != nil {
					b.Fatal(err)
				}
				if err := srv.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package emulator_test

import (
	"encoding/json"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// BenchmarkScenarioLateness: 1,000 scenario-driven runs in flight on the
// running clock, each completed by one step due 500 ms after its admission.
// It reports how late the steps fired (the completed record's updated_at
// against created_at + 500 ms, in the server's own clock readings): p50, p99
// and max in ms (docs/scenarios.md §2 asks p99 ≤ 10 ms), and the CPU the
// process used per second once every run had finished (idle: one timer, no
// polling).
func BenchmarkScenarioLateness(b *testing.B) {
	const runs = 1000
	set := mustSet(b, `{"scenarios":[{"name":"late","steps":[{"after":"500ms","observe":{"status":"completed"}}]}]}`)
	var late []float64
	var idle float64
	for b.Loop() {
		h := emulatortest.New(b, emulator.Options{NoListener: true, Scenarios: set}).Handler()
		ids := make([]string, 0, runs)
		for range runs {
			rec := benchServe(h, "POST", "/v1/runs", benchSubmitBody)
			var out struct {
				RunID string `json:"run_id"`
			}
			if rec.Code != 202 || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
				b.Fatalf("POST /v1/runs = %d %s", rec.Code, rec.Body)
			}
			ids = append(ids, out.RunID)
		}
		deadline := time.Now().Add(30 * time.Second)
		for _, id := range ids {
			for {
				rec := benchServe(h, "GET", "/v1/runs/"+id, nil)
				var r struct {
					Status               string
					CreatedAt, UpdatedAt float64 `json:",omitempty"`
				}
				var raw map[string]any
				_ = json.Unmarshal(rec.Body.Bytes(), &raw)
				r.Status, _ = raw["status"].(string)
				r.CreatedAt, _ = raw["created_at"].(float64)
				r.UpdatedAt, _ = raw["updated_at"].(float64)
				if r.Status == "completed" {
					late = append(late, (r.UpdatedAt-r.CreatedAt)*1000-500)
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("%s still %s", id, r.Status)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		before := cpuTime()
		time.Sleep(time.Second)
		idle = float64(cpuTime()-before) / float64(time.Millisecond)
	}
	slices.Sort(late)
	q := func(p float64) float64 { return late[min(len(late)-1, int(p*float64(len(late))))] }
	b.ReportMetric(q(0.50), "p50-late-ms")
	b.ReportMetric(q(0.99), "p99-late-ms")
	b.ReportMetric(late[len(late)-1], "max-late-ms")
	b.ReportMetric(idle, "idle-cpu-ms/s")
}

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

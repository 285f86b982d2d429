package emulator_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// benchScenario: four tool events and a completion, 200 ms apart — each run
// is in flight for a second.
const benchScenario = `{"scenarios":[{"name":"late","steps":[
	{"after":"200ms","events":[{"event":"tool.started","tool":"t"}]},
	{"after":"200ms","events":[{"event":"tool.completed","tool":"t"}]},
	{"after":"200ms","events":[{"event":"tool.started","tool":"t"}]},
	{"after":"200ms","events":[{"event":"tool.completed","tool":"t"}]},
	{"after":"200ms","observe":{"status":"completed"}}]}]}`

// BenchmarkScenarioLateness: 1,000 scenario-driven runs admitted at 2 a
// millisecond on the running clock, so that all are in flight at once (5,000
// steps in about 1.5 s). It reports how late the steps fired, in the server's
// own clock readings — each step's event timestamp (the completion: the
// record's updated_at) against the previous step's plus 200 ms — as p50, p99
// and max in ms (docs/scenarios.md asks p99 ≤ 10 ms), and the CPU the process
// used per second once every run had finished (idle: one timer, no polling).
func BenchmarkScenarioLateness(b *testing.B) {
	const runs = 1000
	set := mustSet(b, benchScenario)
	var late []float64
	var idle float64
	for b.Loop() {
		h := emulatortest.New(b, emulator.Options{NoListener: true, Scenarios: set}).Handler()
		ids := make([]string, 0, runs)
		tick := time.NewTicker(time.Millisecond)
		for len(ids) < runs {
			for range 2 {
				rec := benchServe(h, "POST", "/v1/runs", benchSubmitBody)
				var out struct {
					RunID string `json:"run_id"`
				}
				if rec.Code != 202 || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
					b.Fatalf("POST /v1/runs = %d %s", rec.Code, rec.Body)
				}
				ids = append(ids, out.RunID)
			}
			<-tick.C
		}
		tick.Stop()
		// Wait for the last run (reading nothing else meanwhile), then read them all.
		last := ids[len(ids)-1]
		for deadline := time.Now().Add(30 * time.Second); !strings.Contains(benchServe(h, "GET", "/v1/runs/"+last, nil).Body.String(), `"completed"`); {
			if time.Now().After(deadline) {
				b.Fatalf("%s not completed", last)
			}
			time.Sleep(20 * time.Millisecond)
		}
		for _, id := range ids {
			var rec map[string]any
			if err := json.Unmarshal(benchServe(h, "GET", "/v1/runs/"+id, nil).Body.Bytes(), &rec); err != nil || rec["status"] != "completed" {
				b.Fatalf("%s: %v %v", id, rec, err)
			}
			times := []float64{rec["created_at"].(float64)}
			for _, line := range strings.Split(benchServe(h, "GET", "/v1/runs/"+id+"/events", nil).Body.String(), "\n") {
				var ev struct{ Timestamp float64 }
				if rest, ok := strings.CutPrefix(line, "data: "); ok && !bytes.Contains([]byte(rest), []byte("run.completed")) {
					_ = json.Unmarshal([]byte(rest), &ev)
					times = append(times, ev.Timestamp)
				}
			}
			times = append(times, rec["updated_at"].(float64))
			if len(times) != 6 {
				b.Fatalf("%s: %d step times", id, len(times)-1)
			}
			for i := 1; i < len(times); i++ {
				late = append(late, (times[i]-times[i-1])*1000-200)
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

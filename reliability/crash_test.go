//go:build reliability

package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ackedRun is a run whose 202 (replayed:false) reached a client before a kill.
type ackedRun struct {
	ns, key, body, id string
	cycle             int
	// terminal is the terminal status an acknowledged observe gave the run
	// ("" while it was last acknowledged unfinished).
	terminal string
	// final is the status found at its first check after a restart; every later
	// check must find the same (it is terminal by then).
	final string
}

// crashLedger is what the clients of one cycle had acknowledged.
type crashLedger struct {
	mu      sync.Mutex
	keyed   []*ackedRun
	keyless []*ackedRun
}

var crashNamespaces = []string{"default", "crash-b"}

// crashCycles is RELIABILITY_CYCLES, else 100, or 10 with -short.
func crashCycles(t *testing.T) int {
	if v := os.Getenv("RELIABILITY_CYCLES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("RELIABILITY_CYCLES=%q: want a positive count", v)
		}
		return n
	}
	if testing.Short() {
		return 10
	}
	return 100
}

func crashSeed(t *testing.T) uint64 {
	if v := os.Getenv("RELIABILITY_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("RELIABILITY_SEED=%q: want an unsigned integer", v)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

// crashLoad runs one client until ctx ends: keyed and keyless submissions,
// observations of its own runs (running, or a terminal status) and polls.
// Only answers that arrived count as acknowledged.
func crashLoad(ctx context.Context, p *proc, rng *rand.Rand, cycle, worker int, led *crashLedger) {
	c := newClient(2)
	var mine []*ackedRun
	for n := 0; ctx.Err() == nil; n++ {
		ns := crashNamespaces[rng.IntN(len(crashNamespaces))]
		nsHdr := []string{"X-Mockingbird-Namespace", ns}
		switch op := rng.IntN(100); {
		case op < 70:
			keyed := op < 45
			body := fmt.Sprintf(`{"input":"synthetic %d/%d/%d","n":%d}`, cycle, worker, n, rng.IntN(1000))
			hdr := nsHdr
			key := ""
			if keyed {
				key = fmt.Sprintf("c%d-w%d-%d", cycle, worker, n)
				hdr = append(hdr, "Idempotency-Key", key)
			}
			r, err := call(ctx, c, "POST", p.url+"/v1/runs", body, hdr...)
			if err != nil || r.status != 202 {
				continue
			}
			var a admission
			if json.Unmarshal(r.body, &a) != nil || a.Replayed {
				continue // reported by the checker as a missing run if it mattered
			}
			run := &ackedRun{ns: ns, key: key, body: body, id: a.RunID, cycle: cycle}
			led.mu.Lock()
			if keyed {
				led.keyed = append(led.keyed, run)
			} else {
				led.keyless = append(led.keyless, run)
			}
			led.mu.Unlock()
			mine = append(mine, run)
		case op < 90 && len(mine) > 0:
			run := mine[rng.IntN(len(mine))]
			status := []string{"running", "completed", "failed", "cancelled", "running"}[rng.IntN(5)]
			r, err := call(ctx, c, "POST", p.url+"/__admin/hermes/runs/"+run.id+"/observe?namespace="+run.ns, `{"status":"`+status+`"}`)
			if err == nil && r.status == 200 && status != "running" {
				led.mu.Lock()
				run.terminal = status
				led.mu.Unlock()
			}
		case len(mine) > 0:
			run := mine[rng.IntN(len(mine))]
			_, _ = call(ctx, c, "GET", p.url+"/v1/runs/"+run.id, "", "X-Mockingbird-Namespace", run.ns)
		}
	}
}

// crashCheck verifies one acknowledged keyed run on a restarted process: GET
// 200 with an interrupted or terminal status (exactly the acknowledged terminal
// status, or the status found at an earlier check), and its key replays the same
// id with that status. It returns "" or what is wrong.
func crashCheck(p *proc, c *http.Client, run *ackedRun) string {
	nsHdr := []string{"X-Mockingbird-Namespace", run.ns}
	r, err := call(context.Background(), c, "GET", p.url+"/v1/runs/"+run.id, "", nsHdr...)
	if err != nil {
		return "GET: " + err.Error()
	}
	if r.status != 200 {
		return fmt.Sprintf("GET: %d %s", r.status, r.body)
	}
	st := r.field("status")
	switch {
	case run.final != "" && st != run.final:
		return fmt.Sprintf("status %s, was %s at an earlier check", st, run.final)
	case run.terminal != "" && st != run.terminal:
		return fmt.Sprintf("status %s, acknowledged %s", st, run.terminal)
	case !slices.Contains([]string{"interrupted", "completed", "failed", "cancelled"}, st):
		return "status " + st + " after a restart"
	}
	r, err = call(context.Background(), c, "POST", p.url+"/v1/runs", run.body, append(nsHdr, "Idempotency-Key", run.key)...)
	if err != nil {
		return "replay: " + err.Error()
	}
	if want := `{"run_id":"` + run.id + `","status":"` + st + `","replayed":true}`; r.status != 202 || string(r.body) != want {
		return fmt.Sprintf("replay: %d %s, want %s", r.status, r.body, want)
	}
	run.final = st
	return ""
}

// Kill -9 / restart cycles on one --db file (runs-api §10.4): every keyed run a
// client saw acknowledged before the kill is found after the restart
// (interrupted, or the terminal status it reached) and its key replays the same
// id; keyless runs answer 404; run ids are never reused.
func TestKillRestartCycles(t *testing.T) {
	cycles := crashCycles(t)
	seed := crashSeed(t)
	t.Logf("cycles %d, seed %d (RELIABILITY_SEED)", cycles, seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	db := filepath.Join(t.TempDir(), "crash.db")
	checker := newClient(8)
	var (
		older         []*ackedRun // keyed runs acknowledged in earlier cycles, already checked once
		prev          crashLedger
		ids           = map[string]string{} // ns/id → where it was first acknowledged
		checked, lost int
		keylessGone   int
		peakKB        int64
		acked         int
	)
	record := func(run *ackedRun) {
		k := run.ns + "/" + run.id
		if where, dup := ids[k]; dup {
			t.Errorf("run id %s in %s reused: first %s, again in cycle %d (key %q)", run.id, run.ns, where, run.cycle, run.key)
		}
		ids[k] = fmt.Sprintf("cycle %d (key %q)", run.cycle, run.key)
	}
	for cycle := 0; cycle < cycles; cycle++ {
		p := start(t, db)
		// Check what the previous cycle acknowledged, and a sample of older runs.
		sample := slices.Clone(prev.keyed)
		for range min(25, len(older)) {
			sample = append(sample, older[rng.IntN(len(older))])
		}
		for _, run := range sample {
			checked++
			if msg := crashCheck(p, checker, run); msg != "" {
				lost++
				if lost <= 20 {
					t.Errorf("cycle %d: run %s (key %q, ns %s, acknowledged in cycle %d) lost: %s", cycle, run.id, run.key, run.ns, run.cycle, msg)
				}
			}
		}
		for _, run := range prev.keyless {
			r, err := call(context.Background(), checker, "GET", p.url+"/v1/runs/"+run.id, "", "X-Mockingbird-Namespace", run.ns)
			if err != nil || r.status != 404 || string(r.body) != hermesErr("Run not found: "+run.id, "run_not_found") {
				t.Errorf("cycle %d: keyless run %s after restart: %v %d %s", cycle, run.id, err, r.status, r.body)
			} else {
				keylessGone++
			}
		}
		older = append(older, prev.keyed...)
		if !p.alive() {
			t.Fatalf("cycle %d: emulator died during the checks:\n%s", cycle, p.out)
		}

		// Load from concurrent clients, then SIGKILL at a random moment.
		led := &crashLedger{}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		workers := 4 + rng.IntN(5)
		for w := range workers {
			wrng := rand.New(rand.NewPCG(rng.Uint64(), uint64(w)))
			wg.Add(1)
			go func() { defer wg.Done(); crashLoad(ctx, p, wrng, cycle, w, led) }()
		}
		time.Sleep(time.Duration(10+rng.IntN(400)) * time.Millisecond)
		peakKB = max(peakKB, p.peakRSS())
		p.kill()
		cancel()
		wg.Wait()
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("cycle %d: emulator ended by itself (%v) before the kill:\n%s", cycle, p.err, p.out)
		}
		for _, run := range append(slices.Clone(led.keyed), led.keyless...) {
			record(run)
		}
		acked += len(led.keyed) + len(led.keyless)
		prev = crashLedger{keyed: led.keyed, keyless: led.keyless}
	}
	// A last restart checks the final cycle.
	p := start(t, db)
	for _, run := range prev.keyed {
		checked++
		if msg := crashCheck(p, checker, run); msg != "" {
			lost++
			t.Errorf("final: run %s (key %q) lost: %s", run.id, run.key, msg)
		}
	}
	for _, run := range prev.keyless {
		if r, err := call(context.Background(), checker, "GET", p.url+"/v1/runs/"+run.id, "", "X-Mockingbird-Namespace", run.ns); err != nil || r.status != 404 {
			t.Errorf("final: keyless run %s after restart: %v %d %s", run.id, err, r.status, r.body)
		} else {
			keylessGone++
		}
	}
	older = append(older, prev.keyed...)
	t.Logf("kill -9 cycles: %d; acknowledged runs: %d (%d keyed, %d keyless); keyed checks after restart: %d; lost: %d; keyless 404 after restart: %d; peak RSS (VmHWM): %d kB",
		cycles, acked, len(older), acked-len(older), checked, lost, keylessGone, peakKB)
	if lost > 0 {
		t.Fatalf("%d acknowledged keyed run checks failed", lost)
	}
}

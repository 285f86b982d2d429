//go:build reliability

package reliability

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// H3/H9: unauthenticated traffic naming a fresh namespace on every request,
// with a long path (401s on a run route, 404s on unmatched routes), must not
// grow the journal or the metrics without bound: an entry keeps the first
// 1024 bytes of the path, the journal at most 100 × --journal-size entries
// (the namespaces journaled least recently go first), the metrics at most
// 1000 unmatched pairs. Before, every request kept a ring and the full path.
func TestHardenJournalFreshNamespacesRSS(t *testing.T) {
	const (
		requests = 120_000
		pathLen  = 4096
		workers  = 8
	)
	p := start(t, filepath.Join(t.TempDir(), "journal.db"), "--api-key", "k")
	c := newClient(workers)
	p.healthy(c, "start")
	base := p.peakRSS()
	// A namespace that keeps being used keeps its entries.
	busy := func() {
		if r := p.must(c, "GET", "/ns/busy/v1/runs/run_x", "", "Authorization", "Bearer k"); r.status != 404 {
			t.Fatalf("busy: %d %s", r.status, r.body)
		}
	}
	busy()
	pad := strings.Repeat("p", pathLen)
	var next atomic.Int64
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > requests {
					return
				}
				path := fmt.Sprintf("/ns/fresh%d/v1/runs/%s", i, pad) // RunGet → 401
				if i%2 == 0 {
					path = fmt.Sprintf("/ns/fresh%d/nope/%s", i, pad) // unmatched → 404
				}
				r, err := call(context.Background(), c, "GET", p.url+path, "")
				st := r.status
				if err != nil {
					st = -1
				}
				mu.Lock()
				statuses[st]++
				mu.Unlock()
				if i%10_000 == 0 {
					busy()
				}
			}
		}()
	}
	wg.Wait()
	peak := p.peakRSS()
	t.Logf("statuses %v; VmHWM %d kB at start, %d kB after %d unauthenticated requests with %d-byte paths in fresh namespaces",
		statuses, base, peak, requests, pathLen)
	if statuses[401] != requests/2 || statuses[404] != requests/2 {
		t.Errorf("statuses %v, want %d 401s and %d 404s", statuses, requests/2, requests/2)
	}
	count := func(filter string) string {
		r := p.must(c, "POST", "/__admin/requests/count", filter)
		return string(r.body)
	}
	if got := count(`{"namespace":"*"}`); got != `{"count":100000}` {
		t.Errorf("journal entries in all: %s, want the limit 100000", got)
	}
	if got := count(`{"namespace":"busy"}`); got != `{"count":13}` {
		t.Errorf("the busy namespace's entries: %s, want all 13", got)
	}
	if got := count(`{"namespace":"fresh1"}`); got != `{"count":0}` {
		t.Errorf("fresh1, journaled least recently: %s, want dropped", got)
	}
	r := p.must(c, "GET", "/__admin/requests?all=1&limit=1", "")
	if n := len(r.body); r.status != 200 || n > 2000 {
		t.Errorf("newest entry: %d, %d bytes, want the path cut to 1024 bytes: %.200s", r.status, n, r.body)
	}
	if r := p.must(c, "GET", "/__admin/metrics", ""); strings.Count(string(r.body), `"method":"GET"`) > 1000 {
		t.Errorf("metrics list more than 1000 unmatched pairs (%d bytes)", len(r.body))
	}
	// 100,000 entries of about 1.3 KB each, plus the process at start.
	if peak-base > 250_000 {
		t.Errorf("peak RSS grew by %d kB, want under 250 MB", peak-base)
	}
	p.healthy(c, "the fresh namespaces")
}

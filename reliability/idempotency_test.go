//go:build reliability

package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// admission is a decoded RunCreate 202 and its Idempotency-Replayed header.
type admission struct {
	RunID    string `json:"run_id"`
	Status   string `json:"status"`
	Replayed bool   `json:"replayed"`
	Header   string `json:"-"`
}

// submitAll sends n RunCreate requests at once (released together) with the
// header pairs of hdr(i) and returns the decoded 202 answers; any other answer
// or transport error fails the test.
func submitAll(t *testing.T, p *proc, n int, body string, hdr func(i int) []string) []admission {
	t.Helper()
	c := newClient(n)
	out := make([]admission, n)
	errs := make([]error, n)
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			r, err := call(context.Background(), c, "POST", p.url+"/v1/runs", body, hdr(i)...)
			switch {
			case err != nil:
				errs[i] = err
			case r.status != 202:
				errs[i] = fmt.Errorf("status %d: %s", r.status, r.body)
			default:
				errs[i] = json.Unmarshal(r.body, &out[i])
				out[i].Header = r.header.Get("Idempotency-Replayed")
			}
		}()
	}
	close(gate)
	wg.Wait()
	failed := 0
	for i, err := range errs {
		if err != nil {
			if failed < 5 {
				t.Errorf("request %d: %v", i, err)
			}
			failed++
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d submissions failed", failed, n)
	}
	return out
}

// 1,000 concurrent identical keyed submissions admit exactly one run: one
// replayed:false, 999 replays of the same id with Idempotency-Replayed: true
// (runs-api §7; one immediate transaction per admission, D7). The run survives
// a kill -9 and its key still replays the same id.
func TestConcurrentIdenticalKeyedSubmissions(t *testing.T) {
	const n = 1000
	db := filepath.Join(t.TempDir(), "same.db")
	p := start(t, db)
	body := `{"input":"synthetic reliability","instructions":"same"}`
	out := submitAll(t, p, n, body, func(int) []string { return []string{"Idempotency-Key", "same-key"} })
	ids := map[string]int{}
	fresh, replays := 0, 0
	for _, a := range out {
		ids[a.RunID]++
		if a.Replayed {
			replays++
			if a.Header != "true" {
				t.Errorf("replay without Idempotency-Replayed: true")
			}
		} else {
			fresh++
			if a.Status != "started" || a.Header != "" {
				t.Errorf("first admission: %+v", a)
			}
		}
	}
	t.Logf("concurrent identical keyed submissions: %d requests, %d run id(s), %d replayed:false, %d replays", n, len(ids), fresh, replays)
	if len(ids) != 1 || fresh != 1 || replays != n-1 {
		t.Fatalf("got %d ids %v, %d fresh, %d replays; want 1, 1, %d", len(ids), ids, fresh, replays, n-1)
	}
	id := out[0].RunID
	c := newClient(4)
	if r := p.must(c, "GET", "/v1/runs/"+id, ""); r.status != 200 || r.field("status") != "queued" {
		t.Fatalf("GET: %d %s", r.status, r.body)
	}
	p.kill()
	q := start(t, db)
	r := q.must(c, "POST", "/v1/runs", body, "Idempotency-Key", "same-key")
	if want := `{"run_id":"` + id + `","status":"interrupted","replayed":true}`; r.status != 202 || string(r.body) != want {
		t.Fatalf("replay after kill: %d %s, want %s", r.status, r.body, want)
	}
}

// 1,000 concurrent submissions with distinct keys (and 200 keyless ones)
// admit that many runs with pairwise distinct ids.
func TestConcurrentDistinctSubmissions(t *testing.T) {
	const n = 1000
	p := start(t, filepath.Join(t.TempDir(), "distinct.db"))
	out := submitAll(t, p, n, `{"input":"synthetic"}`, func(i int) []string {
		return []string{"Idempotency-Key", fmt.Sprintf("key-%d", i)}
	})
	out = append(out, submitAll(t, p, 200, `{"input":"synthetic"}`, func(int) []string { return nil })...)
	seen := map[string]bool{}
	for _, a := range out {
		if a.Replayed || seen[a.RunID] {
			t.Fatalf("duplicate or replayed admission %+v", a)
		}
		seen[a.RunID] = true
	}
	t.Logf("concurrent distinct submissions: %d runs, %d distinct ids", len(out), len(seen))
}

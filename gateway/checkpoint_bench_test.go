package gateway

import (
	"strconv"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// BenchmarkCheckpoint shows what one checkpoint costs as a namespace grows
// (issue 4; controls.md §8.1–§8.2): a State is built from persistent maps, so a
// checkpoint is an O(1) copy and its cost should not depend on the number of
// runs. For 10, 10^3 and 10^5 runs admitted through the gateway API (every
// other one keyed, so both the run cache and the reservations grow), each
// iteration makes one small mutation — an observe that moves one run between
// running and queued, which itself commits the automatic checkpoint of a
// Hermes control — and then one checkpoint:
//
//	commit — CommitCheckpoint (POST /__admin/checkpoints)
//	finish — Finish of a vendor mutation with no accepted checkpoint to reuse
//	         (runs-api §3 step 12)
//
// ns/op is the whole iteration; checkpoint-ns/op times the checkpoint call
// alone (clock read around it, because toggling the benchmark timer for every
// iteration costs far more than the call).
func BenchmarkCheckpoint(b *testing.B) {
	for _, n := range []int{10, 1_000, 100_000} {
		g, ns, first := benchGateway(b, n)
		mutate := benchMutation(b, g, ns, first)
		for _, c := range []struct {
			name string
			call func() string
		}{
			{"commit", func() string {
				cp, err := g.CommitCheckpoint(ns, "main")
				if err != nil {
					b.Fatal(err)
				}
				return cp.ID
			}},
			{"finish", func() string { return g.Finish(Main(ns), "") }},
		} {
			b.Run("runs="+strconv.Itoa(n)+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				var spent time.Duration
				for i := 0; i < b.N; i++ {
					mutate(i)
					t0 := time.Now()
					id := c.call()
					spent += time.Since(t0)
					if id == "" {
						b.Fatal("no checkpoint")
					}
				}
				b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "checkpoint-ns/op")
			})
		}
	}
}

// benchGateway builds a gateway on an in-memory store and admits n
// runs in namespace "bench"; it returns the first run's id.
func benchGateway(b *testing.B, n int) (*Gateway, string, string) {
	b.Helper()
	db := storage.NewMemory()
	g, err := New(db, Options{})
	if err != nil {
		b.Fatal(err)
	}
	const ns = "bench"
	first := ""
	for i := 0; i < n; i++ {
		key, fp := "", ""
		if i%2 == 1 {
			key, fp = "key-"+strconv.Itoa(i), "fingerprint-"+strconv.Itoa(i)
		}
		a, aerr := g.Create(Main(ns), Creation{Key: key, Fingerprint: fp, Sub: &runs.Submission{}})
		if aerr != nil {
			b.Fatal(aerr)
		}
		if first == "" {
			first = a.RunID
		}
	}
	// One row per cached run, one per owner, one per reservation, and the
	// sweep schedule (controls §8.1).
	cp, cerr := g.CommitCheckpoint(ns, "main")
	if cerr != nil || cp.Records != 2*n+n/2+1 {
		b.Fatalf("checkpoint of %d runs: %+v %v", n, cp, cerr)
	}
	return g, ns, first
}

// benchMutation returns the small mutation of iteration i: observe run id
// running (even i) or queued (odd i).
func benchMutation(b *testing.B, g *Gateway, ns, id string) func(i int) {
	b.Helper()
	var bodies [2]runs.Value
	for i, text := range []string{`{"status":"running"}`, `{"status":"queued"}`} {
		v, err := runs.Parse([]byte(text))
		if err != nil {
			b.Fatal(err)
		}
		bodies[i] = v
	}
	return func(i int) {
		if _, err := g.Observe(ns, id, bodies[i%2], true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeylessWithSnapshots is hardening H7: a keyless submission (intake,
// admission and its accepted checkpoint) with 0 and 1000 snapshots pinning
// old checkpoints of the namespace, at the default --max-checkpoints. The two
// ns/op must stay within 2× of each other.
func BenchmarkKeylessWithSnapshots(b *testing.B) {
	for _, snaps := range []int{0, 1000} {
		b.Run("snapshots="+strconv.Itoa(snaps), func(b *testing.B) {
			g, err := New(storage.NewMemory(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { g.Close() })
			for range snaps {
				if _, _, err := g.Snapshot("bench"); err != nil {
					b.Fatal(err)
				}
			}
			sub := &runs.Submission{}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Create(Main("bench"), Creation{Sub: sub}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

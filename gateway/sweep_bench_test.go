package gateway_test

import (
	"fmt"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/gateway"
	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// benchGateway returns a gateway on an in-memory store with n keyless
// queued runs admitted in namespace "bench", and their ids.
func benchGateway(b *testing.B, n int) (*gateway.Gateway, []string) {
	b.Helper()
	db := storage.NewMemory()
	g, err := gateway.New(db, gateway.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(g.Shutdown)
	ids := make([]string, n)
	for i := range ids {
		a, aerr := g.Create(gateway.Main("bench"), gateway.Creation{Sub: &runs.Submission{}})
		if aerr != nil {
			b.Fatal(aerr)
		}
		ids[i] = a.RunID
	}
	return g, ids
}

// BenchmarkSweep measures one retention sweep (runs-api §11.2, controls §11.7)
// over 10^3 and 10^5 cached runs.
//
//   - idle: every run is queued with its transport, so nothing is due — the cost
//     a sweep tick adds to a request in the steady state (transport scan,
//     sweepable index probe, checkpoint).
//   - expire: every run is completed and more than 3600 s old, so each sweep
//     removes all n; the state is restored from a snapshot, outside the timer,
//     before each sweep.
func BenchmarkSweep(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("idle/runs=%d", n), func(b *testing.B) {
			g, _ := benchGateway(b, n)
			for b.Loop() {
				if removed, err := g.Sweep("bench"); err != nil || removed != 0 {
					b.Fatalf("Sweep = %d, %v; want 0, nil", removed, err)
				}
			}
		})
		b.Run(fmt.Sprintf("expire/runs=%d", n), func(b *testing.B) {
			g, ids := benchGateway(b, n)
			completed, err := runs.Parse([]byte(`{"status":"completed","output":"done"}`))
			if err != nil {
				b.Fatal(err)
			}
			for _, id := range ids {
				if _, oerr := g.Observe("bench", id, completed, true); oerr != nil {
					b.Fatal(oerr)
				}
			}
			if _, cerr := g.SetClockJSON([]byte(`{"advance":"2h"}`)); cerr != nil {
				b.Fatal(cerr)
			}
			snap, _, _ := g.Snapshot("bench")
			for b.Loop() {
				b.StopTimer()
				if rerr := g.RestoreSnapshot("bench", snap); rerr != nil {
					b.Fatal(rerr)
				}
				b.StartTimer()
				if removed, serr := g.Sweep("bench"); serr != nil || removed != n {
					b.Fatalf("Sweep = %d, %v; want %d, nil", removed, serr, n)
				}
			}
		})
	}
}

package gateway_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/gateway"
	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// benchBase is the wall clock (epoch ms) at which benchFile's runs completed.
const benchBase = 1700000000000.0

// benchFile writes a --db file holding n keyed runs of namespace "default",
// completed at benchBase, as a real restart finds them, and returns its path.
func benchFile(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "template.db")
	db, err := storage.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	at := runs.Seconds(benchBase)
	rows := make([]*storage.Reservation, n)
	for i := range rows {
		id := runs.RunID("default", int64(i+1))
		rec := fmt.Sprintf(`{"created_at":%v,"last_event":"run.completed","model":"hermes-agent","object":"hermes.run",`+
			`"output":"done","run_id":"%s","session_id":"%s","status":"completed","updated_at":%v}`, at, id, id, at)
		rows[i] = &storage.Reservation{Scope: "scope", Key: fmt.Sprint("key-", i), Fingerprint: "fp", RunID: id,
			RunN: int64(i + 1), OwnerScope: "scope", Keyed: true, Local: true, Alive: true, Record: []byte(rec), UpdatedAt: at, Terminal: true}
	}
	meta := &storage.Namespace{Name: "default", RunCounter: int64(n) + 1024}
	if err := db.Apply(context.Background(), storage.Batch{Namespace: "default", Meta: meta, Upsert: rows}); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// copyFile copies the file at template to a new file and returns its path.
func copyFile(b *testing.B, template string) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "restart.db")
	in, err := os.Open(template)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	return path
}

// reopen opens a gateway whose clock reads wall on a copy of the file at
// template: a real restart.
func reopen(b *testing.B, template string, wall float64) (*gateway.Gateway, func()) {
	b.Helper()
	path := copyFile(b, template)
	db, err := storage.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	g, err := gateway.New(db, gateway.Options{Wall: func() float64 { return wall }})
	if err != nil {
		b.Fatal(err)
	}
	return g, func() {
		g.Close()
		db.Close()
		os.Remove(path)
	}
}

// BenchmarkFirstAdmissionAfterRestart measures the first keyed admission after
// a real restart on a file of n terminal keyed runs: with every run older than
// 24 h (prune) it prunes them all (runs-api §11.3); with none (fresh) it
// prunes nothing. Only the admission is timed.
func BenchmarkFirstAdmissionAfterRestart(b *testing.B) {
	for _, n := range []int{5_000, 50_000} {
		for _, c := range []struct {
			name string
			wall float64
			left int
		}{{"prune", benchBase + 86401000, 1}, {"fresh", benchBase + 1000, n + 1}} {
			b.Run(fmt.Sprintf("%s/runs=%d", c.name, n), func(b *testing.B) {
				template := benchFile(b, n)
				for b.Loop() {
					b.StopTimer()
					g, done := reopen(b, template, c.wall)
					b.StartTimer()
					a, err := g.Create(gateway.Main("default"), gateway.Creation{Key: "new", Fingerprint: "fp", Sub: &runs.Submission{}})
					b.StopTimer()
					if err != nil || a.Replayed {
						b.Fatalf("admission %+v %v", a, err)
					}
					if r, err := g.Restart("default", false); err != nil || r.Retained != c.left {
						b.Fatalf("restart %+v %v, want %d retained", r, err, c.left)
					}
					done()
					b.StartTimer()
				}
			})
		}
	}
}

// BenchmarkRestartControlAfterRestart measures the restart control (runs-api
// §10.3) on a namespace a real restart found with n keyed runs, none read yet.
func BenchmarkRestartControlAfterRestart(b *testing.B) {
	for _, n := range []int{5_000, 50_000} {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			template := benchFile(b, n)
			for b.Loop() {
				b.StopTimer()
				g, done := reopen(b, template, benchBase+1000)
				b.StartTimer()
				r, err := g.Restart("default", true)
				b.StopTimer()
				if err != nil || r.Retained != n {
					b.Fatalf("restart %+v %v, want %d retained", r, err, n)
				}
				done()
				b.StartTimer()
			}
		})
	}
}

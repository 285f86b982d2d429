package main

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestGCPercent(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		name                        string
		live, stacks, globals, scan uint64
		want                        int
	}{
		{"nothing yet", 0, 0, 0, 0, 100},
		{"small heap: the minimum headroom exceeds GOGC=100", 2 * mb, 0, 0, 1 * mb, 100},
		{"all of it scanned: GOGC=100", 40 * mb, 0, 0, 40 * mb, 100},
		// 4 MiB over 20 MiB: the logs of a keyed load, little to scan.
		{"mostly pointer-free", 20 * mb, 0, 0, 2 * mb, 20},
		{"scan above the minimum", 20 * mb, 0, 0, 10 * mb, 50},
		{"stacks and globals count in the base", 18 * mb, 1 * mb, 1 * mb, 2 * mb, 20},
		{"rounded up", 3 * 4 * mb, 0, 0, 0, 34},
		{"never below 1", 1 << 40, 0, 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := gcPercent(tc.live, tc.stacks, tc.globals, tc.scan); got != tc.want {
				t.Fatalf("gcPercent(%d, %d, %d, %d) = %d, want %d", tc.live, tc.stacks, tc.globals, tc.scan, got, tc.want)
			}
		})
	}
}

// TestTuneGC: with 64 MiB of pointer-free data live, a collection sets GOGC
// to the headroom over the live heap: ~6 when the rest of the test binary
// scans under 4 MiB, and well under 20 unless it scans over 13 MiB — not 100.
// Once the data is gone, later collections raise it again (to 100 unless the
// rest of the binary keeps over 4 MiB): the tuning re-arms itself every cycle.
func TestTuneGC(t *testing.T) {
	t.Setenv("GOGC", "")
	tuneGC()
	keep := make([]byte, 64<<20)
	for i := range keep {
		keep[i] = byte(i)
	}
	awaitGOGC(t, "with 64 MiB of pointer-free data live", func(p uint64) bool { return p >= 1 && p <= 20 })
	runtime.KeepAlive(keep) // garbage from here on
	awaitGOGC(t, "once the 64 MiB are garbage", func(p uint64) bool { return p > 20 })
}

// awaitGOGC collects until GOGC satisfies ok, for up to 5 s.
func awaitGOGC(t *testing.T, when string, ok func(uint64) bool) {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		metrics.Read(s)
		if p := s[0].Value.Uint64(); ok(p) {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("GOGC = %d after collections %s", p, when)
		}
	}
}

package runs

import (
	"encoding/hex"
	"testing"
)

// FuzzRunHash: RunHash never panics, accepts exactly the strings that are
// "run_" + hex_ascii(token of some 32-bit hash), and gives that hash back
// (runs-api §12.1); every real run id round-trips.
func FuzzRunHash(f *testing.F) {
	f.Add("", int64(1), "hermes")
	f.Add(RunID("hermes", 1), int64(2), "hermes:other")
	f.Add("run_4e685a726271445348426a4a70783365", int64(1<<31), "hermes:branch_gej81s")
	f.Add("run_zz", int64(-5), "é😀")
	f.Fuzz(func(t *testing.T, s string, n int64, ns string) {
		if h, ok := RunHash(s); ok {
			var tok [16]byte
			if want := "run_" + hex.EncodeToString(appendToken(tok[:0], h, 16)); want != s {
				t.Fatalf("RunHash(%q) = %d, whose id is %q", s, h, want)
			}
		}
		if n < 1 {
			return
		}
		id := RunID(ns, n)
		if h, ok := RunHash(id); !ok || h != RunHashOf(RunNSHash(ns), n) {
			t.Fatalf("RunHash(RunID(%q, %d) = %s) = %d %v", ns, n, id, h, ok)
		}
	})
}

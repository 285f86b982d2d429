package emulator_test

import (
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// BenchmarkSubmitKeyedDB is a keyed submission with a new key each time on a
// --db file, through Handler(), with parallel clients (group commit).
func BenchmarkSubmitKeyedDB(b *testing.B) {
	srv, err := emulator.New(emulator.Options{NoListener: true, DBPath: filepath.Join(b.TempDir(), "b.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	var n atomic.Int64
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("POST", "/v1/runs", strings.NewReader(`{"input":"bench"}`))
			req.Header.Set("Idempotency-Key", "k"+strconv.FormatInt(n.Add(1), 10))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != 202 {
				b.Fatalf("%d %s", rec.Code, rec.Body)
			}
		}
	})
}

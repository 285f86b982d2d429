package emulator_test

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// New refuses, naming the field, an option no server can take — before it
// opens, creates or listens on anything. Negative counts and durations were
// silently the defaults (serve refuses the same flags), a NaN ClockStart
// answered "invalid JSON at offset 7: invalid value" and one out of range
// "set: out of range …", and DBPath ":memory:" made a durable file of that
// name in the working directory.
func TestNewRefusesInvalidOptions(t *testing.T) {
	t.Chdir(t.TempDir())
	tests := []struct {
		name string
		opts emulator.Options
		want string
	}{
		{"port -1", emulator.Options{Port: -1}, "emulator: Options.Port must be from 0 to 65535, not -1"},
		{"port 65536", emulator.Options{Port: 65536}, "emulator: Options.Port must be from 0 to 65535, not 65536"},
		{"max checkpoints", emulator.Options{MaxCheckpoints: -1}, "emulator: Options.MaxCheckpoints must be 0 or more, not -1"},
		{"max namespaces", emulator.Options{MaxNamespaces: -2}, "emulator: Options.MaxNamespaces must be 0 or more, not -2"},
		{"sse buffer", emulator.Options{SSEBufferBytes: -1}, "emulator: Options.SSEBufferBytes must be 0 or more, not -1"},
		{"keepalive", emulator.Options{SSEKeepalive: -time.Second}, "emulator: Options.SSEKeepalive must be 0 or more, not -1s"},
		{"subscribe wait", emulator.Options{SSESubscribeWait: -time.Millisecond}, "emulator: Options.SSESubscribeWait must be 0 or more, not -1ms"},
		{"clock NaN", emulator.Options{ClockStart: math.NaN()}, "emulator: Options.ClockStart must be a finite number of epoch milliseconds, not NaN"},
		{"clock +Inf", emulator.Options{ClockStart: math.Inf(1), FreezeClock: true}, "emulator: Options.ClockStart must be a finite number of epoch milliseconds, not +Inf"},
		{"clock range", emulator.Options{ClockStart: 1e16}, "emulator: Options.ClockStart 1e+16: set: out of range (the clock stays within ±8.64e15 ms)"},
		{"memory", emulator.Options{DBPath: ":memory:"}, `emulator: Options.DBPath ":memory:" would be a file of that name in the working directory; leave DBPath empty for a private in-memory store`},
		{"admin key", emulator.Options{AdminKey: " k"}, "emulator: Options.AdminKey begins or ends with a space or tab, which HTTP drops from header values; every control request would answer 401"},
		{"api key", emulator.Options{APIKey: "a\nb"}, "emulator: Options.APIKey contains a control character, which no HTTP header can carry; every public request would answer 401"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := emulator.New(tc.opts)
			if err == nil {
				srv.Close()
				t.Fatalf("New accepted %+v", tc.opts)
			}
			if err.Error() != tc.want {
				t.Fatalf("error %q\nwant  %q", err, tc.want)
			}
		})
	}
	if names, _ := filepath.Glob("*"); len(names) != 0 {
		t.Fatalf("New left %q in the working directory", names)
	}
	// Zero, and the negatives that mean something, still start.
	for _, o := range []emulator.Options{{}, {JournalSize: -1, MaxConcurrentRuns: -1, MaxBodyBytes: -1, ReadTimeout: -1, ShutdownGrace: -1}} {
		srv, err := emulator.New(o)
		if err != nil {
			t.Fatalf("New(%+v): %v", o, err)
		}
		srv.Close()
	}
}

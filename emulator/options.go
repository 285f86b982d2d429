package emulator

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

// Options configure a Server; they are the flags of `hermes-emulator serve`
// (runs-api §15). The zero value is a private in-memory emulator listening on
// 127.0.0.1 at a free port, with the spec's defaults. New refuses, naming the
// field, a value no server can take: a Port outside 0–65535, a negative
// MaxCheckpoints, MaxNamespaces, SSEBufferBytes, SSEKeepalive or
// SSESubscribeWait (as serve refuses the flags), a ClockStart that is not
// finite or outside ±8.64e15 ms, and DBPath ":memory:".
type Options struct {
	Host string // listen host; default 127.0.0.1 (an IPv6 address with or without brackets)
	Port int    // listen port; 0 = any free port
	// NoListener builds the handler without a listener: use Handler() (or
	// Control(), which then calls it in-process). URL() is "".
	NoListener bool

	DBPath            string        // SQLite file (WAL), durable across restarts (runs-api §10.4); "" = private in-memory (not ":memory:")
	AdminKey          string        // require x-mockingbird-admin-key on /__admin; "" = open (controls §1)
	APIKey            string        // upstream bearer auth on the vendor routes (runs-api §14.3); "" = none
	MaxConcurrentRuns int           // capacity limit; 0 or less = none
	MaxBodyBytes      int64         // body limit; 0 or less = 10,000,000
	Seed              string        // fault-rate RNG seed; "" = "0"
	SSEKeepalive      time.Duration // idle time before ": keepalive"; 0 = 30s
	SSESubscribeWait  time.Duration // wait before a missing transport answers 404; 0 = 1s
	JournalSize       int           // entries kept per namespace; 0 = 1000, negative = journal off
	MaxCheckpoints    int           // checkpoints kept per namespace; 0 = 1000
	MaxNamespaces     int           // namespaces that may exist (hardening H3); 0 = 10000
	SSEBufferBytes    int           // frames held for one SSE stream (hardening H5); 0 = 8 MiB

	// Bounds on what a client can make the server hold (hardening H4, H5).
	ReadTimeout          time.Duration // request head, and each body, must arrive within it; 0 or less = 10s
	WriteTimeout         time.Duration // an answer other than a stream must be taken within it; 0 or less = 60s
	ShutdownGrace        time.Duration // Close waits this long for in-flight requests, then cuts them; 0 or less = 10s
	MaxInflightBodyBytes int64         // request body bytes held at once (503 server_busy past it); 0 or less = 64 MiB

	// ClockStart, when non-zero, sets the controlled clock (epoch ms) at start;
	// FreezeClock freezes it there (or at the wall clock when ClockStart is 0).
	ClockStart  float64
	FreezeClock bool

	// Scenarios is every namespace's default scenario set (serve --scenarios):
	// matching runs move by themselves on the emulator clock (docs/scenarios.md).
	// Parse it with scenarios.Parse or scenarios.Load; nil = none.
	Scenarios *scenarios.Set

	// NoResponseValidation turns off run-time validation of responses against
	// openapi.yaml (for load tests). Validation is on by default.
	NoResponseValidation bool

	// Logger receives the server's log lines (serve errors, contract
	// violations, and with LogRequests one Info line "request" per vendor
	// request with the attributes method, path, status (0 = dropped),
	// operationId ("(unmatched)" when none), durationMs, namespace and, when a
	// fault rule fired, faultId). Bodies, headers, idempotency keys and
	// credentials are never logged. nil = discard.
	Logger      *slog.Logger
	LogRequests bool // log one line per vendor request (not /health, /__admin, /openapi.yaml)
}

// check refuses, naming the field, a value of o that no server can take or
// that would silently mean something else: a port outside 0–65535, a negative
// value where neither the field nor the flag it mirrors gives one a meaning
// (serve refuses the same, docs/options.md), a ClockStart that is not a
// finite number, and DBPath ":memory:" — a file of that name, durable and
// shared by every run in the working directory, not SQLite's in-memory
// database (leave DBPath empty for a private in-memory store).
func (o Options) check() error {
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("emulator: Options.Port must be from 0 to 65535, not %d", o.Port)
	}
	for _, v := range []struct {
		name string
		n    int64
		text string
	}{
		{"MaxCheckpoints", int64(o.MaxCheckpoints), strconv.Itoa(o.MaxCheckpoints)},
		{"MaxNamespaces", int64(o.MaxNamespaces), strconv.Itoa(o.MaxNamespaces)},
		{"SSEBufferBytes", int64(o.SSEBufferBytes), strconv.Itoa(o.SSEBufferBytes)},
		{"SSEKeepalive", int64(o.SSEKeepalive), o.SSEKeepalive.String()},
		{"SSESubscribeWait", int64(o.SSESubscribeWait), o.SSESubscribeWait.String()},
	} {
		if v.n < 0 {
			return fmt.Errorf("emulator: Options.%s must be 0 or more, not %s", v.name, v.text)
		}
	}
	if math.IsNaN(o.ClockStart) || math.IsInf(o.ClockStart, 0) {
		return fmt.Errorf("emulator: Options.ClockStart must be a finite number of epoch milliseconds, not %v", o.ClockStart)
	}
	if o.DBPath == ":memory:" {
		return errors.New(`emulator: Options.DBPath ":memory:" would be a file of that name in the working directory; leave DBPath empty for a private in-memory store`)
	}
	return nil
}

// withDefaults is o with every zero value replaced by its default (runs-api §15).
func (o Options) withDefaults() Options {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	o.Host = BareHost(o.Host)
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 10_000_000
	}
	if o.Seed == "" {
		o.Seed = "0"
	}
	if o.JournalSize == 0 {
		o.JournalSize = 1000
	} else if o.JournalSize < 0 {
		o.JournalSize = 0
	}
	if o.SSEKeepalive <= 0 {
		o.SSEKeepalive = 30 * time.Second
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 10 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = time.Minute
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = 10 * time.Second
	}
	if o.MaxInflightBodyBytes <= 0 {
		o.MaxInflightBodyBytes = 64 << 20
	}
	return o
}

// BareHost is host without the brackets an IPv6 address has in a URL
// ("[::1]" → "::1"): what net.JoinHostPort takes, which adds its own. Any
// other host is returned as it is.
func BareHost(host string) string {
	if len(host) > 2 && host[0] == '[' && host[len(host)-1] == ']' {
		return host[1 : len(host)-1]
	}
	return host
}

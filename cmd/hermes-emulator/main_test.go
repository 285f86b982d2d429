package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// cliEnv lists every HERMES_EMULATOR_ variable the CLI reads.
var cliEnv = []string{"HOST", "PORT", "DB", "ADMIN_KEY", "API_KEY", "MAX_CONCURRENT_RUNS", "MAX_BODY_BYTES", "SEED",
	"SSE_KEEPALIVE", "SSE_SUBSCRIBE_WAIT", "JOURNAL_SIZE", "MAX_CHECKPOINTS", "LOG", "LOG_REQUESTS",
	"NO_RESPONSE_VALIDATION", "URL", "READ_TIMEOUT", "SHUTDOWN_GRACE", "MAX_INFLIGHT_BODY_BYTES"}

// cliClean empties every CLI variable (empty = unset) so the test sees only
// what it sets, then sets kv (name without the prefix, value, …). The host is
// an address no machine can bind, so a serve that got past its checks fails
// at once with exit 1 instead of listening for ever.
func cliClean(t *testing.T, kv ...string) {
	t.Helper()
	for _, n := range cliEnv {
		t.Setenv("HERMES_EMULATOR_"+n, "")
	}
	t.Setenv("MOCKINGBIRD_ADMIN_KEY", "")
	t.Setenv("HERMES_EMULATOR_HOST", "192.0.2.1") // TEST-NET-1 (RFC 5737): never local
	for i := 0; i+1 < len(kv); i += 2 {
		t.Setenv("HERMES_EMULATOR_"+kv[i], kv[i+1])
	}
}

func cliRun(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestRunCommands(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // prefix
		stderr string // exact
	}{
		{"no arguments prints usage", nil, 0, usage, ""},
		{"--help", []string{"--help"}, 0, usage, ""},
		{"-h", []string{"-h"}, 0, usage, ""},
		{"help", []string{"help"}, 0, usage, ""},
		{"version", []string{"version"}, 0, emulator.Version + "\n", ""},
		{"--version", []string{"--version"}, 0, emulator.Version + "\n", ""},
		{"unknown command", []string{"start"}, 2, "", "hermes-emulator: unknown command \"start\" (try --help)\n"},
		{"serve --help", []string{"serve", "--help"}, 0, "", ""},
		{"serve extra argument", []string{"serve", "now"}, 2, "", "hermes-emulator serve: unexpected argument \"now\"\n"},
		{"serve bad log", []string{"serve", "--log", "xml"}, 2, "", "hermes-emulator serve: --log must be pretty, json or off, not \"xml\"\n"},
		{"serve cannot listen", []string{"serve", "--port", "0"}, 1, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cliClean(t, "LOG", "off")
			code, stdout, stderr := cliRun(tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if !strings.HasPrefix(stdout, tc.stdout) {
				t.Fatalf("stdout %q, want prefix %q", stdout, tc.stdout)
			}
			if tc.name == "serve --help" || tc.name == "serve cannot listen" {
				return // flag usage / listen error text belongs to the libraries
			}
			if stderr != tc.stderr {
				t.Fatalf("stderr %q, want %q", stderr, tc.stderr)
			}
		})
	}
}

func TestServeBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--port", "abc"},
		{"serve", "--nope"},
		{"serve", "--sse-keepalive", "30"},
		{"serve", "--log-requests=maybe"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cliClean(t)
			code, _, stderr := cliRun(args...)
			if code != 2 || stderr == "" {
				t.Fatalf("exit %d stderr %q, want 2 with a message", code, stderr)
			}
		})
	}
}

// An environment value that does not parse is an error (exit 2), never
// silently replaced by the default.
func TestServeBadEnv(t *testing.T) {
	tests := []struct{ name, value string }{
		{"PORT", "abc"},
		{"PORT", "88 27"},
		{"MAX_CONCURRENT_RUNS", "ten"},
		{"MAX_BODY_BYTES", "1e6"},
		{"SSE_KEEPALIVE", "30"}, // a duration needs a unit
		{"SSE_SUBSCRIBE_WAIT", "soon"},
		{"JOURNAL_SIZE", "1.5"},
		{"MAX_CHECKPOINTS", "x"},
		{"LOG_REQUESTS", "yes"},
		{"NO_RESPONSE_VALIDATION", "on"},
	}
	for _, tc := range tests {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			cliClean(t, "LOG", "off", tc.name, tc.value)
			code, stdout, stderr := cliRun("serve")
			want := "hermes-emulator serve: HERMES_EMULATOR_" + tc.name + ": invalid value \"" + tc.value + "\"\n"
			if code != 2 || stderr != want || stdout != "" {
				t.Fatalf("exit %d stderr %q stdout %q, want 2 %q", code, stderr, stdout, want)
			}
		})
	}
	t.Run("first invalid variable is reported", func(t *testing.T) {
		cliClean(t, "PORT", "abc", "LOG_REQUESTS", "yes")
		if code, _, stderr := cliRun("serve"); code != 2 || stderr != "hermes-emulator serve: HERMES_EMULATOR_PORT: invalid value \"abc\"\n" {
			t.Fatalf("exit %d stderr %q", code, stderr)
		}
	})
	t.Run("--help still answers", func(t *testing.T) {
		cliClean(t, "PORT", "abc")
		if code, _, _ := cliRun("serve", "--help"); code != 0 {
			t.Fatalf("exit %d", code)
		}
	})
	t.Run("health", func(t *testing.T) {
		cliClean(t, "PORT", "abc")
		if code, _, stderr := cliRun("health"); code != 2 || stderr != "hermes-emulator health: HERMES_EMULATOR_PORT: invalid value \"abc\"\n" {
			t.Fatalf("exit %d stderr %q", code, stderr)
		}
	})
}

// Valid environment values reach the configuration; both booleans take what
// strconv.ParseBool takes; an empty value counts as unset.
func TestServeEnvValues(t *testing.T) {
	tests := []struct {
		env      []string
		port     int
		body     int64
		wait     time.Duration
		logReq   bool
		noValid  bool
		journal  int
		maxCheck int
	}{
		{env: nil, port: 8827, body: 10_000_000, wait: time.Second, journal: 1000, maxCheck: 1000},
		{env: []string{"PORT", "9000", "MAX_BODY_BYTES", "12345678901", "SSE_SUBSCRIBE_WAIT", "250ms", "JOURNAL_SIZE", "0", "MAX_CHECKPOINTS", "7"},
			port: 9000, body: 12345678901, wait: 250 * time.Millisecond, journal: 0, maxCheck: 7},
		{env: []string{"LOG_REQUESTS", "1", "NO_RESPONSE_VALIDATION", "1"}, port: 8827, body: 10_000_000, wait: time.Second, logReq: true, noValid: true, journal: 1000, maxCheck: 1000},
		{env: []string{"LOG_REQUESTS", "true", "NO_RESPONSE_VALIDATION", "true"}, port: 8827, body: 10_000_000, wait: time.Second, logReq: true, noValid: true, journal: 1000, maxCheck: 1000},
		{env: []string{"LOG_REQUESTS", "TRUE", "NO_RESPONSE_VALIDATION", "T"}, port: 8827, body: 10_000_000, wait: time.Second, logReq: true, noValid: true, journal: 1000, maxCheck: 1000},
		{env: []string{"LOG_REQUESTS", "0", "NO_RESPONSE_VALIDATION", "false"}, port: 8827, body: 10_000_000, wait: time.Second, journal: 1000, maxCheck: 1000},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.env, "="), func(t *testing.T) {
			cliClean(t, tc.env...)
			fs, c, err := serveFlags(io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if err := fs.Parse(nil); err != nil {
				t.Fatal(err)
			}
			o := c.opts
			if o.Port != tc.port || c.bodyBytes != tc.body || o.SSESubscribeWait != tc.wait || o.LogRequests != tc.logReq ||
				c.noValidate != tc.noValid || c.journal != tc.journal || o.MaxCheckpoints != tc.maxCheck {
				t.Fatalf("port %d body %d wait %v logRequests %v noValidate %v journal %d maxCheckpoints %d",
					o.Port, c.bodyBytes, o.SSESubscribeWait, o.LogRequests, c.noValidate, c.journal, o.MaxCheckpoints)
			}
		})
	}
	t.Run("flag wins over environment", func(t *testing.T) {
		cliClean(t, "PORT", "9000", "LOG_REQUESTS", "true")
		fs, c, err := serveFlags(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if err := fs.Parse([]string{"--port", "9001", "--log-requests=false"}); err != nil {
			t.Fatal(err)
		}
		if c.opts.Port != 9001 || c.opts.LogRequests {
			t.Fatalf("port %d logRequests %v", c.opts.Port, c.opts.LogRequests)
		}
	})
}

// A flag given on the command line wins over its environment variable, also
// over one that does not parse.
func TestFlagWinsOverInvalidEnv(t *testing.T) {
	cliClean(t, "PORT", "abc")
	fs, c, _ := serveFlags(io.Discard)
	if err := fs.Parse([]string{"--port", "9000"}); err != nil {
		t.Fatal(err)
	}
	if err := c.env.first(fs); err != nil || c.opts.Port != 9000 {
		t.Fatalf("port %d, error %v", c.opts.Port, err)
	}
	fs, c, _ = serveFlags(io.Discard)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := c.env.first(fs); err == nil || err.Error() != `HERMES_EMULATOR_PORT: invalid value "abc"` {
		t.Fatalf("without the flag: %v", err)
	}
}

// The bounds of hardening H4 and H5: defaults, environment, flags.
func TestServeBoundFlags(t *testing.T) {
	parse := func(args ...string) emulator.Options {
		t.Helper()
		fs, c, err := serveFlags(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return c.opts
	}
	cliClean(t)
	if o := parse(); o.ReadTimeout != 10*time.Second || o.ShutdownGrace != 10*time.Second || o.MaxInflightBodyBytes != 64<<20 {
		t.Fatalf("defaults: %v %v %d", o.ReadTimeout, o.ShutdownGrace, o.MaxInflightBodyBytes)
	}
	cliClean(t, "READ_TIMEOUT", "2s", "SHUTDOWN_GRACE", "500ms", "MAX_INFLIGHT_BODY_BYTES", "1000")
	if o := parse(); o.ReadTimeout != 2*time.Second || o.ShutdownGrace != 500*time.Millisecond || o.MaxInflightBodyBytes != 1000 {
		t.Fatalf("environment: %v %v %d", o.ReadTimeout, o.ShutdownGrace, o.MaxInflightBodyBytes)
	}
	if o := parse("--read-timeout", "3s", "--shutdown-grace", "1s", "--max-inflight-body-bytes", "7"); o.ReadTimeout != 3*time.Second ||
		o.ShutdownGrace != time.Second || o.MaxInflightBodyBytes != 7 {
		t.Fatalf("flags: %v %v %d", o.ReadTimeout, o.ShutdownGrace, o.MaxInflightBodyBytes)
	}
}

// Hardening H10: which hosts count as this machine only.
func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "localhost": true, "::1": true, "[::1]": true, "127.1.2.3": true,
		"0.0.0.0": false, "::": false, "": true, "192.0.2.1": false, "example.com": false} {
		if got := loopback(host); got != want {
			t.Errorf("loopback(%q) = %v, want %v", host, got, want)
		}
	}
}

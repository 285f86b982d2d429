package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// cliEnv lists every HERMES_EMULATOR_ variable the CLI reads.
var cliEnv = []string{"HOST", "PORT", "DB", "ADMIN_KEY", "API_KEY", "MAX_CONCURRENT_RUNS", "MAX_BODY_BYTES", "SEED",
	"SSE_KEEPALIVE", "SSE_SUBSCRIBE_WAIT", "JOURNAL_SIZE", "MAX_CHECKPOINTS", "LOG", "LOG_REQUESTS",
	"NO_RESPONSE_VALIDATION", "URL", "READ_TIMEOUT", "WRITE_TIMEOUT", "SHUTDOWN_GRACE", "MAX_INFLIGHT_BODY_BYTES", "MAX_NAMESPACES",
	"SSE_BUFFER_BYTES", "SCENARIOS"}

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
		{"serve --help", []string{"serve", "--help"}, 0, serveUsage, ""},
		{"serve -h", []string{"serve", "-h"}, 0, serveUsage, ""},
		{"health --help", []string{"health", "--help"}, 0, healthUsage, ""},
		{"health -h", []string{"health", "-h"}, 0, healthUsage, ""},
		{"version --help", []string{"version", "--help"}, 0, versionUsage, ""},
		{"version -h", []string{"version", "-h"}, 0, versionUsage, ""},
		{"version extra argument", []string{"version", "now"}, 2, "", "hermes-emulator version: unexpected argument \"now\"\n"},
		{"health extra argument", []string{"health", "now"}, 2, "", "hermes-emulator health: unexpected argument \"now\"\n"},
		{"health empty url", []string{"health", "--url", ""}, 2, "", "hermes-emulator health: --url must be an http(s) URL, not \"\"\n"},
		{"health url without scheme", []string{"health", "--url", "127.0.0.1:8827"}, 2, "", "hermes-emulator health: --url must be an http(s) URL, not \"127.0.0.1:8827\"\n"},
		{"serve unknown flag", []string{"serve", "--nope"}, 2, "", "flag provided but not defined: -nope\n(hermes-emulator serve --help lists the flags)\n"},
		{"health unknown flag", []string{"health", "--nope"}, 2, "", "flag provided but not defined: -nope\n(hermes-emulator health --help lists the flags)\n"},
		{"serve port too high", []string{"serve", "--port", "70000"}, 2, "", "hermes-emulator serve: --port must be a port number from 0 to 65535, not 70000\n"},
		{"serve port 65536", []string{"serve", "--port", "65536"}, 2, "", "hermes-emulator serve: --port must be a port number from 0 to 65535, not 65536\n"},
		{"serve negative port", []string{"serve", "--port", "-1"}, 2, "", "hermes-emulator serve: --port must be a port number from 0 to 65535, not -1\n"},
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
			if tc.name == "serve cannot listen" {
				return // the listen error's text belongs to the net package
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

// --help lists every flag of serve with its real environment variable, and
// help goes to stdout whole: the usage text, then the flags.
func TestHelpNamesEnvironmentVariables(t *testing.T) {
	cliClean(t)
	code, stdout, stderr := cliRun("serve", "--help")
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, serveUsage) {
		t.Fatalf("exit %d stderr %q stdout %q", code, stderr, stdout)
	}
	fs, _, _ := serveFlags(io.Discard)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		want := "[HERMES_EMULATOR_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if !strings.Contains(f.Usage, want) || !strings.Contains(stdout, f.Usage) {
			t.Errorf("--%s: usage %q does not name %s] or is missing from --help", f.Name, f.Usage, want)
		}
	})
	if n != 22 {
		t.Fatalf("%d flags, want 22", n)
	}
	if !strings.Contains(stdout, "[HERMES_EMULATOR_ADMIN_KEY, MOCKINGBIRD_ADMIN_KEY]") {
		t.Errorf("--admin-key does not name MOCKINGBIRD_ADMIN_KEY")
	}
	for _, short := range []string{"[PORT]", "[HOST]", "[DB]", "[LOG]"} {
		if strings.Contains(stdout, short) {
			t.Errorf("--help still shows %s", short)
		}
	}
	code, top, _ := cliRun("--help")
	if code != 0 || !strings.Contains(top, "[HERMES_EMULATOR_PORT]") {
		t.Fatalf("hermes-emulator --help: exit %d, no [HERMES_EMULATOR_PORT] in %q", code, top)
	}
}

// A value checked after parsing names where it came from: the flag when it
// was given, else its environment variable.
func TestCheckedValuesNameTheirOrigin(t *testing.T) {
	tests := []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"PORT", "70000"}, []string{"serve"}, "hermes-emulator serve: HERMES_EMULATOR_PORT must be a port number from 0 to 65535, not 70000\n"},
		{[]string{"PORT", "-5"}, []string{"serve"}, "hermes-emulator serve: HERMES_EMULATOR_PORT must be a port number from 0 to 65535, not -5\n"},
		{[]string{"PORT", "9000"}, []string{"serve", "--port", "70000"}, "hermes-emulator serve: --port must be a port number from 0 to 65535, not 70000\n"},
		{[]string{"LOG", "xml"}, []string{"serve"}, "hermes-emulator serve: HERMES_EMULATOR_LOG must be pretty, json or off, not \"xml\"\n"},
		{[]string{"LOG", "json"}, []string{"serve", "--log", "xml"}, "hermes-emulator serve: --log must be pretty, json or off, not \"xml\"\n"},
		{[]string{"PORT", "70000"}, []string{"health"}, "hermes-emulator health: HERMES_EMULATOR_PORT must be a port number from 0 to 65535, not 70000\n"},
		{[]string{"URL", "ftp://h"}, []string{"health"}, "hermes-emulator health: HERMES_EMULATOR_URL must be an http(s) URL, not \"ftp://h\"\n"},
		// --db :memory: made a durable file of that name in the working directory.
		{nil, []string{"serve", "--db", ":memory:"}, "hermes-emulator serve: --db \":memory:\" would be a file of that name in the working directory; leave it out for a private in-memory store\n"},
		{[]string{"DB", ":memory:"}, []string{"serve"}, "hermes-emulator serve: HERMES_EMULATOR_DB \":memory:\" would be a file of that name in the working directory; leave it out for a private in-memory store\n"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(append(tc.env, tc.args...), " "), func(t *testing.T) {
			cliClean(t, tc.env...)
			code, stdout, stderr := cliRun(tc.args...)
			if code != 2 || stdout != "" || stderr != tc.want {
				t.Fatalf("exit %d stdout %q stderr %q, want 2 %q", code, stdout, stderr, tc.want)
			}
		})
	}
	t.Run("health --url makes the port moot", func(t *testing.T) {
		cliClean(t, "PORT", "70000")
		code, _, stderr := cliRun("health", "--url", "http://192.0.2.1:1")
		if code != 1 || !strings.HasPrefix(stderr, "unhealthy: ") {
			t.Fatalf("exit %d stderr %q, want 1 unhealthy", code, stderr)
		}
	})
}

// The banner: three text lines, or with --log json one JSON log line.
func TestBanner(t *testing.T) {
	var b bytes.Buffer
	banner(&b, "pretty", "http://127.0.0.1:8827", false)
	want := "hermes-emulator listening on http://127.0.0.1:8827\n" +
		"hermes-emulator health: GET http://127.0.0.1:8827/health\n" +
		"hermes-emulator admin: http://127.0.0.1:8827/__admin (open — pass --admin-key to lock)\n"
	if b.String() != want {
		t.Fatalf("pretty banner %q, want %q", b.String(), want)
	}
	b.Reset()
	banner(&b, "off", "http://h:1", true)
	if want := "hermes-emulator listening on http://h:1\nhermes-emulator health: GET http://h:1/health\n" +
		"hermes-emulator admin: http://h:1/__admin (x-mockingbird-admin-key required)\n"; b.String() != want {
		t.Fatalf("off banner %q, want %q", b.String(), want)
	}
	for _, locked := range []bool{false, true} {
		b.Reset()
		banner(&b, "json", "http://h:1", locked)
		var line map[string]any
		if err := json.Unmarshal(b.Bytes(), &line); err != nil || strings.Count(b.String(), "\n") != 1 {
			t.Fatalf("json banner %q: %v", b.String(), err)
		}
		access := map[bool]string{false: "open", true: "x-mockingbird-admin-key required"}[locked]
		if line["level"] != "INFO" || line["msg"] != "hermes-emulator listening on http://h:1" || line["url"] != "http://h:1" ||
			line["health"] != "http://h:1/health" || line["admin"] != "http://h:1/__admin" || line["adminAccess"] != access || line["time"] == nil {
			t.Fatalf("json banner %q", b.String())
		}
	}
}

// The built binary: `version` prints what -ldflags stamps, and serve --log json
// starts with its JSON banner line on stdout and stops on SIGTERM with exit 0.
func TestBinaryVersionAndJSONBanner(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t, "-ldflags", "-X github.com/hermes-emulator/hermes-emulator/emulator.Version=v1.2.3")
	cliClean(t)
	out, err := exec.Command(bin, "version").Output()
	if err != nil || string(out) != "v1.2.3\n" {
		t.Fatalf("version: %q %v, want \"v1.2.3\\n\"", out, err)
	}
	cmd := exec.Command(bin, "serve", "--host", "127.0.0.1", "--port", "0", "--log", "json")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("no banner line: %v", err)
	}
	var line struct{ Msg, URL string }
	if err := json.Unmarshal([]byte(first), &line); err != nil || line.URL == "" || line.Msg != "hermes-emulator listening on "+line.URL {
		cmd.Process.Kill()
		t.Fatalf("banner %q: %v", first, err)
	}
	resp, err := http.Get(line.URL + "/health")
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("X-Mockingbird") != "hermes@v1.2.3; ns=default" {
		cmd.Process.Kill()
		t.Fatalf("health: %v %v", resp, err)
	}
	resp.Body.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v, want exit 0", err)
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
	cliClean(t, "READ_TIMEOUT", "2s", "WRITE_TIMEOUT", "4s", "SHUTDOWN_GRACE", "500ms", "MAX_INFLIGHT_BODY_BYTES", "1000")
	if o := parse(); o.ReadTimeout != 2*time.Second || o.WriteTimeout != 4*time.Second || o.ShutdownGrace != 500*time.Millisecond || o.MaxInflightBodyBytes != 1000 {
		t.Fatalf("environment: %v %v %v %d", o.ReadTimeout, o.WriteTimeout, o.ShutdownGrace, o.MaxInflightBodyBytes)
	}
	if o := parse("--read-timeout", "3s", "--write-timeout", "5s", "--shutdown-grace", "1s", "--max-inflight-body-bytes", "7"); o.ReadTimeout != 3*time.Second ||
		o.WriteTimeout != 5*time.Second || o.ShutdownGrace != time.Second || o.MaxInflightBodyBytes != 7 {
		t.Fatalf("flags: %v %v %v %d", o.ReadTimeout, o.WriteTimeout, o.ShutdownGrace, o.MaxInflightBodyBytes)
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

// An empty variable counts as unset (docs/options.md) for the string flags
// too: HERMES_EMULATOR_LOG="" is the default pretty, not an error naming
// --log; HERMES_EMULATOR_ADMIN_KEY="" falls back to MOCKINGBIRD_ADMIN_KEY
// instead of opening the control plane; HERMES_EMULATOR_URL="" lets health
// check 127.0.0.1:<HERMES_EMULATOR_PORT>.
func TestEmptyStringEnvCountsAsUnset(t *testing.T) {
	cliClean(t, "HOST", "", "LOG", "", "SEED", "", "ADMIN_KEY", "")
	t.Setenv("MOCKINGBIRD_ADMIN_KEY", "sekrit")
	fs, c, err := serveFlags(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if c.opts.AdminKey != "sekrit" || c.logFormat != "pretty" || c.opts.Host != "127.0.0.1" || c.seed != "0" {
		t.Fatalf("admin key %q, log %q, host %q, seed %q; want sekrit, pretty, 127.0.0.1, 0", c.opts.AdminKey, c.logFormat, c.opts.Host, c.seed)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	cliClean(t, "URL", "", "PORT", srv.URL[strings.LastIndex(srv.URL, ":")+1:])
	if code, stdout, stderr := cliRun("health"); code != 0 || stdout != "ok\n" {
		t.Fatalf("health with HERMES_EMULATOR_URL=\"\": exit %d stdout %q stderr %q, want 0 ok", code, stdout, stderr)
	}
}

// A key no request can carry is a usage error naming where it came from,
// not a server that answers 401 to everything.
func TestServeRefusesUnsendableKeys(t *testing.T) {
	const ws = " begins or ends with a space or tab, which HTTP drops from header values\n"
	const bearer = " begins or ends with whitespace, which the bearer check strips (a UTF-8 character ending in byte 0x85 or 0xA0 counts)\n"
	tests := []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--admin-key", " adm"}, "--admin-key" + ws},
		{[]string{"ADMIN_KEY", "adm "}, nil, "HERMES_EMULATOR_ADMIN_KEY" + ws},
		{nil, []string{"--api-key", "k "}, "--api-key" + bearer},
		{[]string{"API_KEY", "voilà"}, nil, "HERMES_EMULATOR_API_KEY" + bearer},
		{nil, []string{"--api-key", "a\nb"}, "--api-key contains a control character, which no HTTP header can carry\n"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(append(tc.env, tc.args...), " "), func(t *testing.T) {
			cliClean(t, append([]string{"LOG", "off"}, tc.env...)...)
			code, stdout, stderr := cliRun(append([]string{"serve"}, tc.args...)...)
			if code != 2 || stdout != "" || stderr != "hermes-emulator serve: "+tc.want {
				t.Fatalf("exit %d stdout %q stderr %q, want 2 %q", code, stdout, stderr, tc.want)
			}
		})
	}
	t.Run("MOCKINGBIRD_ADMIN_KEY", func(t *testing.T) {
		cliClean(t, "LOG", "off")
		t.Setenv("MOCKINGBIRD_ADMIN_KEY", "\tadm")
		if code, _, stderr := cliRun("serve"); code != 2 || stderr != "hermes-emulator serve: MOCKINGBIRD_ADMIN_KEY"+ws {
			t.Fatalf("exit %d stderr %q", code, stderr)
		}
	})
}

// A negative value of a flag that gives it no meaning is a usage error, not
// silently the default (--max-checkpoints -1 kept 1000) or "off"
// (--journal-size -5 kept no journal).
func TestServeRefusesNegativeValues(t *testing.T) {
	tests := []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--journal-size", "-5"}, "--journal-size must be 0 or more, not -5"},
		{nil, []string{"--max-checkpoints", "-1"}, "--max-checkpoints must be 0 or more, not -1"},
		{nil, []string{"--max-namespaces", "-1"}, "--max-namespaces must be 0 or more, not -1"},
		{nil, []string{"--sse-buffer-bytes", "-1"}, "--sse-buffer-bytes must be 0 or more, not -1"},
		{nil, []string{"--sse-keepalive", "-1s"}, "--sse-keepalive must be 0 or more, not -1s"},
		{nil, []string{"--sse-subscribe-wait", "-500ms"}, "--sse-subscribe-wait must be 0 or more, not -500ms"},
		{[]string{"JOURNAL_SIZE", "-1"}, nil, "HERMES_EMULATOR_JOURNAL_SIZE must be 0 or more, not -1"},
		{[]string{"SSE_KEEPALIVE", "-2s"}, nil, "HERMES_EMULATOR_SSE_KEEPALIVE must be 0 or more, not -2s"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(append(tc.env, tc.args...), " "), func(t *testing.T) {
			cliClean(t, append([]string{"LOG", "off"}, tc.env...)...)
			code, stdout, stderr := cliRun(append([]string{"serve"}, tc.args...)...)
			if code != 2 || stdout != "" || stderr != "hermes-emulator serve: "+tc.want+"\n" {
				t.Fatalf("exit %d stdout %q stderr %q, want 2 %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

// Hardening H10: --log off silences the logs, not the warning that the
// control plane is open to the network.
func TestOpenNetworkWarningWithLogOff(t *testing.T) {
	cliClean(t)
	var stdout, stderr lockedBuffer
	done := make(chan int)
	go func() { done <- serve([]string{"--host", "0.0.0.0", "--port", "0", "--log", "off"}, &stdout, &stderr) }()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(stdout.String(), "listening on") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(stdout.String(), "listening on") {
		t.Fatalf("no banner: %q", stderr.String()) // no SIGTERM to a process that would not catch it
	}
	// serve catches SIGTERM from before its banner.
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "the control plane is open to the network") {
		t.Fatalf("no warning; stdout %q stderr %q", stdout.String(), stderr.String())
	}
}

// A second SIGINT or SIGTERM during the shutdown ends the process at once,
// killed by that signal, as a user who presses Ctrl-C twice expects: the
// server no longer waits out --shutdown-grace for a request held by a fault
// delay (it ignored every signal after the first).
func TestBinarySecondSignalEndsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	cliClean(t)
	var stderr lockedBuffer
	cmd := exec.Command(bin, "serve", "--host", "127.0.0.1", "--port", "0", "--log", "json", "--shutdown-grace", "1m")
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
	}()
	first, err := bufio.NewReader(stdout).ReadString('\n')
	var line struct{ URL string }
	if err != nil || json.Unmarshal([]byte(first), &line) != nil || line.URL == "" {
		t.Fatalf("banner %q: %v", first, err)
	}
	fault, err := http.Post(line.URL+"/__admin/faults", "application/json", strings.NewReader(`{"operationId":"RunGet","delayMs":60000}`))
	if err != nil || fault.StatusCode != 201 {
		t.Fatalf("fault: %v %v", fault, err)
	}
	fault.Body.Close()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	go func() {
		if resp, err := hc.Get(line.URL + "/v1/runs/x"); err == nil {
			resp.Body.Close()
		}
	}()
	time.Sleep(200 * time.Millisecond) // the poll waits in its delay
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(stderr.String(), "shutting down") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-exited:
		exited <- err
		t.Fatalf("exited on the first SIGTERM (%v), before the grace: %s", err, stderr.String())
	default:
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
			t.Fatalf("after the second signal: %v, want killed by SIGINT", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("still running 5 s after a second signal: %s", stderr.String())
	}
}

// buildBinary builds this command with go build's extra flags into a
// temporary directory and returns the binary's path.
func buildBinary(t *testing.T, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hermes-emulator")
	args := append(append([]string{"build", "-o", bin}, flags...), ".")
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// Command hermes-emulator serves the Hermes peer-run API emulator.
//
//	hermes-emulator serve [--host 127.0.0.1] [--port 8827] [--db PATH] [--admin-key KEY] …
//	hermes-emulator version
//	hermes-emulator health [--url http://127.0.0.1:8827]
//
// Every flag has an environment variable (HERMES_EMULATOR_<FLAG>, e.g.
// HERMES_EMULATOR_PORT; the admin key also MOCKINGBIRD_ADMIN_KEY); a flag given on
// the command line wins. An empty variable counts as unset; a numeric, duration
// or boolean variable that does not parse is an error (exit 2) — booleans take
// what strconv.ParseBool takes (1/0, true/false, t/f). The process runs until SIGINT or SIGTERM, then shuts
// down gracefully: in-flight requests finish, streams end, the database closes.
// A second SIGINT or SIGTERM ends it at once.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/scenarios"
)

const usage = `hermes-emulator — an emulator of the Hermes Agent peer-run HTTP API (pinned v2026.8.31)

Usage:
  hermes-emulator serve [flags]   start the emulator
  hermes-emulator version         print the version
  hermes-emulator health [--url]  exit 0 when GET /health answers 200 (container health check)
  hermes-emulator record --upstream URL --out FILE   record a gateway's runs as scenarios (record --help)
  hermes-emulator --help          this text (also: <command> --help)

Flags of serve (environment variable in brackets):
`

const serveUsage = `Usage: hermes-emulator serve [flags]

Starts the emulator and serves until SIGINT or SIGTERM, then shuts down
gracefully (requests in flight finish, streams end, the database closes);
a second SIGINT or SIGTERM ends it at once.
Every flag can also be set by the environment variable in brackets; an empty
variable counts as unset, and a flag given on the command line wins.

Flags:
`

const healthUsage = `Usage: hermes-emulator health [--url URL]

Prints "ok" and exits 0 when GET <url>/health answers 200; otherwise prints
the reason on stderr and exits 1 (a container health check). Without --url
and HERMES_EMULATOR_URL it checks http://127.0.0.1:<HERMES_EMULATOR_PORT or 8827>.

Flags:
`

// versionUsage names both versions: the emulator's own (emulator.Version) and
// the upstream release whose API it reproduces.
const versionUsage = `Usage: hermes-emulator version

Prints the emulator's own version, the one every response's x-mockingbird
header carries ("0.0.0-dev" unless the build stamps it with
-ldflags "-X github.com/hermes-emulator/hermes-emulator/emulator.Version=v1.2.3").
The Hermes Agent release whose API it reproduces is pinned at v2026.8.31.
`

func main() {
	// The binary serves no profiles: without the heap profiler's sampling the
	// runtime never builds its ~1.4 MB stack-bucket table.
	runtime.MemProfileRate = 0
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		fs, _, _ := serveFlags(io.Discard)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stdout, stderr)
	case "version", "--version":
		return version(args[1:], stdout, stderr)
	case "health":
		return health(args[1:], stdout, stderr)
	case "record":
		return recordCmd(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "hermes-emulator: unknown command %q (try --help)\n", args[0])
	return 2
}

type config struct {
	env        *envs // invalid environment variables, checked after the flags
	opts       emulator.Options
	journal    int
	logFormat  string
	seed       string
	bodyBytes  int64
	noValidate bool
	scenarios  string // --scenarios file
}

// serveFlags defines the flags of serve with their environment defaults. The
// error is the first environment variable that does not parse (its flag then
// shows the built-in default).
func serveFlags(out io.Writer) (*flag.FlagSet, *config, error) {
	c := &config{}
	var e envs
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {} // parse errors print one line; --help is answered by serve
	o := &c.opts
	adminKey := env("ADMIN_KEY", os.Getenv("MOCKINGBIRD_ADMIN_KEY"))
	fs.StringVar(&o.Host, "host", env("HOST", "127.0.0.1"), "listen address [HERMES_EMULATOR_HOST]")
	fs.IntVar(&o.Port, "port", e.getInt("PORT", 8827), "listen port, 0 = any free port [HERMES_EMULATOR_PORT]")
	fs.StringVar(&o.DBPath, "db", env("DB", ""), "SQLite file (WAL), durable across restarts; default private in-memory [HERMES_EMULATOR_DB]")
	fs.StringVar(&o.AdminKey, "admin-key", adminKey, "require x-mockingbird-admin-key on /__admin [HERMES_EMULATOR_ADMIN_KEY, MOCKINGBIRD_ADMIN_KEY]")
	fs.StringVar(&o.APIKey, "api-key", env("API_KEY", ""), "upstream bearer auth on the public API [HERMES_EMULATOR_API_KEY]")
	fs.IntVar(&o.MaxConcurrentRuns, "max-concurrent-runs", e.getInt("MAX_CONCURRENT_RUNS", 0), "live runs per namespace before 429, 0 = no limit [HERMES_EMULATOR_MAX_CONCURRENT_RUNS]")
	fs.Int64Var(&c.bodyBytes, "max-body-bytes", e.getInt64("MAX_BODY_BYTES", 10_000_000), "request body limit in bytes [HERMES_EMULATOR_MAX_BODY_BYTES]")
	fs.StringVar(&c.seed, "seed", env("SEED", "0"), "fault-rate RNG seed: decimal integer or any string [HERMES_EMULATOR_SEED]")
	fs.DurationVar(&o.SSEKeepalive, "sse-keepalive", e.getDur("SSE_KEEPALIVE", 30*time.Second), "idle time before ': keepalive' [HERMES_EMULATOR_SSE_KEEPALIVE]")
	fs.DurationVar(&o.SSESubscribeWait, "sse-subscribe-wait", e.getDur("SSE_SUBSCRIBE_WAIT", time.Second), "wait before a missing stream answers 404 [HERMES_EMULATOR_SSE_SUBSCRIBE_WAIT]")
	fs.IntVar(&c.journal, "journal-size", e.getInt("JOURNAL_SIZE", 1000), "journal entries kept per namespace, 0 disables [HERMES_EMULATOR_JOURNAL_SIZE]")
	fs.IntVar(&o.MaxCheckpoints, "max-checkpoints", e.getInt("MAX_CHECKPOINTS", 1000), "checkpoints kept per namespace timeline [HERMES_EMULATOR_MAX_CHECKPOINTS]")
	fs.StringVar(&c.logFormat, "log", env("LOG", "pretty"), "log format: pretty, json or off [HERMES_EMULATOR_LOG]")
	fs.BoolVar(&o.LogRequests, "log-requests", e.getBool("LOG_REQUESTS"), "log one line per vendor request [HERMES_EMULATOR_LOG_REQUESTS]")
	// Bounds on what a client can make the server hold (hardening H4, H5).
	fs.DurationVar(&o.ReadTimeout, "read-timeout", e.getDur("READ_TIMEOUT", 10*time.Second), "request head and each body must arrive within it [HERMES_EMULATOR_READ_TIMEOUT]")
	fs.DurationVar(&o.WriteTimeout, "write-timeout", e.getDur("WRITE_TIMEOUT", time.Minute), "an answer (not a stream) must be taken within it, else the connection closes [HERMES_EMULATOR_WRITE_TIMEOUT]")
	fs.DurationVar(&o.ShutdownGrace, "shutdown-grace", e.getDur("SHUTDOWN_GRACE", 10*time.Second), "on SIGTERM, wait this long for in-flight requests [HERMES_EMULATOR_SHUTDOWN_GRACE]")
	fs.Int64Var(&o.MaxInflightBodyBytes, "max-inflight-body-bytes", e.getInt64("MAX_INFLIGHT_BODY_BYTES", 64<<20), "request body bytes held at once before 503 server_busy [HERMES_EMULATOR_MAX_INFLIGHT_BODY_BYTES]")
	fs.IntVar(&o.MaxNamespaces, "max-namespaces", e.getInt("MAX_NAMESPACES", 10000), "namespaces that may exist; one more answers 429 [HERMES_EMULATOR_MAX_NAMESPACES]")
	fs.IntVar(&o.SSEBufferBytes, "sse-buffer-bytes", e.getInt("SSE_BUFFER_BYTES", 8<<20), "frames held for an SSE subscriber that does not read; past it the stream closes [HERMES_EMULATOR_SSE_BUFFER_BYTES]")
	fs.BoolVar(&c.noValidate, "no-response-validation", e.getBool("NO_RESPONSE_VALIDATION"), "do not validate responses against openapi.yaml (load tests) [HERMES_EMULATOR_NO_RESPONSE_VALIDATION]")
	fs.StringVar(&c.scenarios, "scenarios", env("SCENARIOS", ""), "scenario file (YAML or JSON): matching runs move by themselves (docs/scenarios.md) [HERMES_EMULATOR_SCENARIOS]")
	c.env = &e
	var first error
	if len(e.bad) > 0 {
		first = e.bad[0].err
	}
	return fs, c, first
}

// parseArgs parses args with fs (whose Usage prints nothing). It returns -1 to
// go on, or the exit code: 0 after printing help (head, then the flags) on
// stdout for -h/--help, 2 after a usage error (flag has printed its message).
func parseArgs(fs *flag.FlagSet, args []string, head string, stdout, stderr io.Writer) int {
	err := fs.Parse(args)
	if err == flag.ErrHelp {
		fmt.Fprint(stdout, head)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "(hermes-emulator %s --help lists the flags)\n", fs.Name())
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hermes-emulator %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2
	}
	return -1
}

// checkPort refuses a port outside 0–65535 as a usage error, naming its origin.
func checkPort(fs *flag.FlagSet, port int) error {
	if port < 0 || port > 65535 {
		return fmt.Errorf("%s must be a port number from 0 to 65535, not %d", origin(fs, "port", "PORT"), port)
	}
	return nil
}

// checkNotNegative refuses, as a usage error naming its origin, a negative
// value of a flag whose docs give no meaning to one (docs/options.md): the
// emulator would silently turn it into the default (or, for --journal-size,
// into "keep none"). --max-concurrent-runs (negative counts as 0, runs-api
// §14.1) and the flags documented as "0 or less: the default" are not checked.
func checkNotNegative(fs *flag.FlagSet, c *config) error {
	o := c.opts
	for _, v := range []struct {
		flag, env string
		n         int64
		text      string
	}{
		{"journal-size", "JOURNAL_SIZE", int64(c.journal), strconv.Itoa(c.journal)},
		{"max-checkpoints", "MAX_CHECKPOINTS", int64(o.MaxCheckpoints), strconv.Itoa(o.MaxCheckpoints)},
		{"max-namespaces", "MAX_NAMESPACES", int64(o.MaxNamespaces), strconv.Itoa(o.MaxNamespaces)},
		{"sse-buffer-bytes", "SSE_BUFFER_BYTES", int64(o.SSEBufferBytes), strconv.Itoa(o.SSEBufferBytes)},
		{"sse-keepalive", "SSE_KEEPALIVE", int64(o.SSEKeepalive), o.SSEKeepalive.String()},
		{"sse-subscribe-wait", "SSE_SUBSCRIBE_WAIT", int64(o.SSESubscribeWait), o.SSESubscribeWait.String()},
	} {
		if v.n < 0 {
			return fmt.Errorf("%s must be 0 or more, not %s", origin(fs, v.flag, v.env), v.text)
		}
	}
	return nil
}

// checkKeys refuses, as a usage error naming its origin, an admin or API key
// that no request can carry (runs.KeyProblem): it would answer 401 to all.
func checkKeys(fs *flag.FlagSet, o emulator.Options) error {
	if p := runs.KeyProblem(o.AdminKey, false); p != "" {
		from := origin(fs, "admin-key", "ADMIN_KEY")
		if from == "--admin-key" && !flagSet(fs, "admin-key") {
			from = "MOCKINGBIRD_ADMIN_KEY"
		}
		return fmt.Errorf("%s %s", from, p)
	}
	if p := runs.KeyProblem(o.APIKey, true); p != "" {
		return fmt.Errorf("%s %s", origin(fs, "api-key", "API_KEY"), p)
	}
	return nil
}

func serve(args []string, stdout, stderr io.Writer) int {
	fs, c, _ := serveFlags(stderr)
	if code := parseArgs(fs, args, serveUsage, stdout, stderr); code >= 0 {
		return code
	}
	if envErr := c.env.first(fs); envErr != nil {
		fmt.Fprintf(stderr, "hermes-emulator serve: %v\n", envErr)
		return 2
	}
	if err := checkPort(fs, c.opts.Port); err != nil {
		fmt.Fprintf(stderr, "hermes-emulator serve: %v\n", err)
		return 2
	}
	if err := checkNotNegative(fs, c); err != nil {
		fmt.Fprintf(stderr, "hermes-emulator serve: %v\n", err)
		return 2
	}
	if err := checkKeys(fs, c.opts); err != nil {
		fmt.Fprintf(stderr, "hermes-emulator serve: %v\n", err)
		return 2
	}
	if c.opts.DBPath == ":memory:" { // emulator.Options.check refuses it too
		fmt.Fprintf(stderr, "hermes-emulator serve: %s \":memory:\" would be a file of that name in the working directory; leave it out for a private in-memory store\n", origin(fs, "db", "DB"))
		return 2
	}
	var set *scenarios.Set
	if c.scenarios != "" {
		var err error
		if set, err = scenarios.Load(c.scenarios); err != nil {
			fmt.Fprintf(stderr, "hermes-emulator serve: %v\n", err)
			return 2
		}
	}
	var handler slog.Handler
	switch c.logFormat {
	case "pretty":
		handler = slog.NewTextHandler(stderr, nil)
	case "json":
		handler = slog.NewJSONHandler(stderr, nil)
	case "off":
		handler = slog.NewTextHandler(io.Discard, nil)
	default:
		fmt.Fprintf(stderr, "hermes-emulator serve: %s must be pretty, json or off, not %q\n", origin(fs, "log", "LOG"), c.logFormat)
		return 2
	}
	o := c.opts
	o.Logger = slog.New(handler)
	o.Scenarios = set
	o.Seed = c.seed
	o.MaxBodyBytes = c.bodyBytes
	o.NoResponseValidation = c.noValidate
	o.JournalSize = c.journal
	if c.journal == 0 {
		o.JournalSize = -1
	}
	// Signals are caught before the banner: a supervisor that stops the
	// server as soon as it has read the banner gets a graceful shutdown.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := emulator.New(o)
	if err != nil {
		fmt.Fprintf(stderr, "hermes-emulator serve: %v\n", err)
		return 1
	}
	url := srv.URL()
	if o.AdminKey == "" && !loopback(o.Host) {
		// hardening H10: an open control plane on the network is said loudly,
		// on stderr even with --log off.
		msg := "the control plane is open to the network: anyone who reaches " + url +
			" can change or erase the emulator's state; pass --admin-key (HERMES_EMULATOR_ADMIN_KEY) or listen on 127.0.0.1"
		if c.logFormat == "off" {
			fmt.Fprintln(stderr, "hermes-emulator serve: WARN "+msg)
		} else {
			o.Logger.Warn(msg)
		}
	}
	banner(stdout, c.logFormat, url, o.AdminKey != "")
	<-ctx.Done()
	// A second SIGINT or SIGTERM has its default effect: the process ends at
	// once instead of waiting out --shutdown-grace (Ctrl-C twice).
	stop()
	o.Logger.Info("shutting down")
	if err := srv.Close(); err != nil {
		fmt.Fprintf(stderr, "hermes-emulator: close: %v\n", err)
		return 1
	}
	return 0
}

// banner tells on stdout where the server listens: three text lines, or with
// --log json one JSON log line whose msg keeps the "listening on <url>" text
// that scripts look for.
func banner(stdout io.Writer, format, url string, locked bool) {
	if format == "json" {
		admin := "open"
		if locked {
			admin = "x-mockingbird-admin-key required"
		}
		slog.New(slog.NewJSONHandler(stdout, nil)).Info("hermes-emulator listening on "+url,
			"url", url, "health", url+"/health", "admin", url+"/__admin", "adminAccess", admin)
		return
	}
	fmt.Fprintf(stdout, "hermes-emulator listening on %s\n", url)
	fmt.Fprintf(stdout, "hermes-emulator health: GET %s/health\n", url)
	if !locked {
		fmt.Fprintf(stdout, "hermes-emulator admin: %s/__admin (open — pass --admin-key to lock)\n", url)
	} else {
		fmt.Fprintf(stdout, "hermes-emulator admin: %s/__admin (x-mockingbird-admin-key required)\n", url)
	}
}

// version prints emulator.Version (see versionUsage).
func version(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	if code := parseArgs(fs, args, versionUsage, stdout, stderr); code >= 0 {
		return code
	}
	fmt.Fprintln(stdout, emulator.Version)
	return 0
}

// loopback reports whether host names only this machine: localhost or a
// loopback address.
func loopback(host string) bool {
	if host == "" || host == "localhost" { // "" listens on 127.0.0.1 (emulator.Options)
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func health(args []string, stdout, stderr io.Writer) int {
	var e envs
	port := e.getInt("PORT", 8827)
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	url := fs.String("url", env("URL", "http://127.0.0.1:"+strconv.Itoa(port)), "base URL of the emulator [HERMES_EMULATOR_URL]")
	if code := parseArgs(fs, args, healthUsage, stdout, stderr); code >= 0 {
		return code
	}
	if !flagSet(fs, "url") && env("URL", "") == "" {
		err := e.first(fs)
		if err == nil && (port < 0 || port > 65535) {
			err = fmt.Errorf("HERMES_EMULATOR_PORT must be a port number from 0 to 65535, not %d", port)
		}
		if err != nil {
			fmt.Fprintf(stderr, "hermes-emulator health: %v\n", err)
			return 2
		}
	}
	if u, err := neturl.Parse(*url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "hermes-emulator health: %s must be an http(s) URL, not %q\n", origin(fs, "url", "URL"), *url)
		return 2
	}
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(strings.TrimSuffix(*url, "/") + "/health")
	if err != nil {
		fmt.Fprintf(stderr, "unhealthy: %v\n", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		fmt.Fprintf(stderr, "unhealthy: status %d\n", resp.StatusCode)
		return 1
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}

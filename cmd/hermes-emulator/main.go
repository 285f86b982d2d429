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
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

const usage = `hermes-emulator — an emulator of the Hermes Agent peer-run HTTP API (pinned v2026.8.31)

Usage:
  hermes-emulator serve [flags]   start the emulator
  hermes-emulator version         print the version
  hermes-emulator health [--url]  exit 0 when GET /health answers 200 (container health check)
  hermes-emulator record --upstream URL --out FILE   record a gateway's runs as scenarios (record --help)
  hermes-emulator --help          this text

Flags of serve (environment variable in brackets):
`

func main() {
	// The binary serves no profiles: without the heap profiler's sampling the
	// runtime never builds its ~1.4 MB stack-bucket table.
	runtime.MemProfileRate = 0
	tuneGC()
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
		fmt.Fprintln(stdout, emulator.Version)
		return 0
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
}

func env(name, def string) string {
	if v, ok := os.LookupEnv("HERMES_EMULATOR_" + name); ok {
		return v
	}
	return def
}

// envs reads typed environment variables, keeping the invalid ones in order.
type envs struct{ bad []badEnv }

// badEnv is an environment variable that did not parse, with the flag it
// stands for: when that flag is given on the command line, the flag wins and
// the variable is not an error.
type badEnv struct {
	flag string
	err  error
}

// first returns the first invalid variable whose flag fs did not set.
func (e *envs) first(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, b := range e.bad {
		if !set[b.flag] {
			return b.err
		}
	}
	return nil
}

// envParse returns the value of HERMES_EMULATOR_<name> converted by conv, or def
// when the variable is unset or empty. A value conv rejects is recorded as
// `HERMES_EMULATOR_<name>: invalid value "<v>"` and def is returned.
func envParse[T any](e *envs, name string, def T, conv func(string) (T, error)) T {
	v := env(name, "")
	if v == "" {
		return def
	}
	x, err := conv(v)
	if err != nil {
		e.bad = append(e.bad, badEnv{strings.ToLower(strings.ReplaceAll(name, "_", "-")),
			fmt.Errorf("HERMES_EMULATOR_%s: invalid value %q", name, v)})
		return def
	}
	return x
}

func (e *envs) getInt(name string, def int) int { return envParse(e, name, def, strconv.Atoi) }

func (e *envs) getInt64(name string, def int64) int64 {
	return envParse(e, name, def, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) })
}

func (e *envs) getDur(name string, def time.Duration) time.Duration {
	return envParse(e, name, def, time.ParseDuration)
}

func (e *envs) getBool(name string) bool { return envParse(e, name, false, strconv.ParseBool) }

// serveFlags defines the flags of serve with their environment defaults. The
// error is the first environment variable that does not parse (its flag then
// shows the built-in default).
func serveFlags(out io.Writer) (*flag.FlagSet, *config, error) {
	c := &config{}
	var e envs
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(out)
	o := &c.opts
	adminKey := env("ADMIN_KEY", os.Getenv("MOCKINGBIRD_ADMIN_KEY"))
	fs.StringVar(&o.Host, "host", env("HOST", "127.0.0.1"), "listen address [HOST]")
	fs.IntVar(&o.Port, "port", e.getInt("PORT", 8827), "listen port, 0 = any free port [PORT]")
	fs.StringVar(&o.DBPath, "db", env("DB", ""), "SQLite file (WAL), durable across restarts; default private in-memory [DB]")
	fs.StringVar(&o.AdminKey, "admin-key", adminKey, "require x-mockingbird-admin-key on /__admin [ADMIN_KEY, MOCKINGBIRD_ADMIN_KEY]")
	fs.StringVar(&o.APIKey, "api-key", env("API_KEY", ""), "upstream bearer auth on the public API [API_KEY]")
	fs.IntVar(&o.MaxConcurrentRuns, "max-concurrent-runs", e.getInt("MAX_CONCURRENT_RUNS", 0), "live runs per namespace before 429, 0 = no limit [MAX_CONCURRENT_RUNS]")
	fs.Int64Var(&c.bodyBytes, "max-body-bytes", e.getInt64("MAX_BODY_BYTES", 10_000_000), "request body limit in bytes [MAX_BODY_BYTES]")
	fs.StringVar(&c.seed, "seed", env("SEED", "0"), "fault-rate RNG seed: decimal integer or any string [SEED]")
	fs.DurationVar(&o.SSEKeepalive, "sse-keepalive", e.getDur("SSE_KEEPALIVE", 30*time.Second), "idle time before ': keepalive' [SSE_KEEPALIVE]")
	fs.DurationVar(&o.SSESubscribeWait, "sse-subscribe-wait", e.getDur("SSE_SUBSCRIBE_WAIT", time.Second), "wait before a missing stream answers 404 [SSE_SUBSCRIBE_WAIT]")
	fs.IntVar(&c.journal, "journal-size", e.getInt("JOURNAL_SIZE", 1000), "journal entries kept per namespace, 0 disables [JOURNAL_SIZE]")
	fs.IntVar(&o.MaxCheckpoints, "max-checkpoints", e.getInt("MAX_CHECKPOINTS", 1000), "checkpoints kept per namespace timeline [MAX_CHECKPOINTS]")
	fs.StringVar(&c.logFormat, "log", env("LOG", "pretty"), "log format: pretty, json or off [LOG]")
	fs.BoolVar(&o.LogRequests, "log-requests", e.getBool("LOG_REQUESTS"), "log one line per vendor request [LOG_REQUESTS]")
	fs.BoolVar(&c.noValidate, "no-response-validation", e.getBool("NO_RESPONSE_VALIDATION"), "do not validate responses against openapi.yaml (load tests) [NO_RESPONSE_VALIDATION]")
	c.env = &e
	var first error
	if len(e.bad) > 0 {
		first = e.bad[0].err
	}
	return fs, c, first
}

func serve(args []string, stdout, stderr io.Writer) int {
	fs, c, _ := serveFlags(stderr)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if envErr := c.env.first(fs); envErr != nil {
		fmt.Fprintf(stderr, "hermes-emulator serve: %v\n", envErr)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hermes-emulator serve: unexpected argument %q\n", fs.Arg(0))
		return 2
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
		fmt.Fprintf(stderr, "hermes-emulator serve: --log must be pretty, json or off, not %q\n", c.logFormat)
		return 2
	}
	o := c.opts
	o.Logger = slog.New(handler)
	o.Seed = c.seed
	o.MaxBodyBytes = c.bodyBytes
	o.NoResponseValidation = c.noValidate
	o.JournalSize = c.journal
	if c.journal == 0 {
		o.JournalSize = -1
	}
	srv, err := emulator.New(o)
	if err != nil {
		fmt.Fprintf(stderr, "hermes-emulator serve: %v\n", err)
		return 1
	}
	url := srv.URL()
	fmt.Fprintf(stdout, "hermes-emulator listening on %s\n", url)
	fmt.Fprintf(stdout, "hermes-emulator health: GET %s/health\n", url)
	if o.AdminKey == "" {
		fmt.Fprintf(stdout, "hermes-emulator admin: %s/__admin (open — pass --admin-key to lock)\n", url)
	} else {
		fmt.Fprintf(stdout, "hermes-emulator admin: %s/__admin (x-mockingbird-admin-key required)\n", url)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	o.Logger.Info("shutting down")
	if err := srv.Close(); err != nil {
		fmt.Fprintf(stderr, "hermes-emulator: close: %v\n", err)
		return 1
	}
	return 0
}

// urlSet reports whether --url was given (it makes HERMES_EMULATOR_PORT moot).
func urlSet(fs *flag.FlagSet) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "url" })
	return set
}

func health(args []string, stdout, stderr io.Writer) int {
	var e envs
	port := e.getInt("PORT", 8827)
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", env("URL", "http://127.0.0.1:"+strconv.Itoa(port)), "base URL of the emulator")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := e.first(fs); err != nil && !urlSet(fs) {
		fmt.Fprintf(stderr, "hermes-emulator health: %v\n", err)
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

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/record"
)

const recordUsage = `Usage: hermes-emulator record --upstream URL --out FILE [flags]

Proxies the Hermes peer-run API of URL unchanged and writes one scenario per run
that crossed it into FILE on SIGINT/SIGTERM or POST /__admin/record/flush
(docs/record.md). Flags:
`

// recordCmd runs `hermes-emulator record` until SIGINT or SIGTERM.
func recordCmd(args []string, stdout, stderr io.Writer) int {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(stop)
	return recordUntil(args, stdout, stderr, stop)
}

// recordUntil is recordCmd ending when stop receives.
func recordUntil(args []string, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	fs := flag.NewFlagSet("record", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	var o record.Options
	var match string
	host := fs.String("host", "127.0.0.1", "listen address")
	port := fs.Int("port", 8828, "listen port, 0 = any free port")
	fs.StringVar(&o.Upstream, "upstream", "", "base URL of the gateway to record (required)")
	fs.StringVar(&o.Out, "out", "", "scenario file to write (required; replaced whole)")
	fs.BoolVar(&o.Redact, "redact", false, "replace free text by placeholders of the same length")
	fs.BoolVar(&o.APIKeyPassthrough, "api-key-passthrough", false, "reuse a client's Authorization once to read /v1/capabilities (never stored)")
	fs.Float64Var(&o.Speed, "speed", 1, "divide every recorded delay by this factor")
	fs.StringVar(&match, "match", "input", "how a scenario selects its run: input or order")
	if code := parseArgs(fs, args, recordUsage, stdout, stderr); code >= 0 {
		return code
	}
	if err := checkPort(fs, *port); err != nil {
		fmt.Fprintf(stderr, "hermes-emulator record: %v\n", err)
		return 2
	}
	if err := record.CheckSpeed(o.Speed); err != nil { // before New, which reads 0 as 1
		fmt.Fprintf(stderr, "hermes-emulator %v\n", err)
		return 2
	}
	o.Match = record.MatchMode(match)
	o.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	rec, err := record.New(o)
	if err != nil {
		fmt.Fprintf(stderr, "hermes-emulator %v\n", err)
		return 2
	}
	// An IPv6 host may come in brackets, as in a URL (emulator.Options.Host too).
	ln, err := net.Listen("tcp", net.JoinHostPort(emulator.BareHost(*host), strconv.Itoa(*port)))
	if err != nil {
		fmt.Fprintf(stderr, "hermes-emulator record: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if err := rec.FetchCapabilities(ctx, ""); err != nil {
		o.Logger.Warn("record: upstream version unknown until a client reads /v1/capabilities", "err", err)
	}
	cancel()
	srv := &http.Server{Handler: rec, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "hermes-emulator record: proxying %s -> %s\n", url, o.Upstream)
	fmt.Fprintf(stdout, "hermes-emulator record: writing %s on exit or POST %s%s\n", o.Out, url, record.FlushPath)
	<-stop
	// Streams stay open until their runs end: give requests a moment, then cut.
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
	if srv.Shutdown(ctx) != nil {
		srv.Close()
	}
	cancel()
	n, err := rec.Flush()
	if err != nil {
		fmt.Fprintf(stderr, "hermes-emulator %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "hermes-emulator record: wrote %d scenario(s) to %s\n", n, o.Out)
	return 0
}

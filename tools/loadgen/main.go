// Command loadgen is the load generator of the benchmark harness (scripts/bench).
// It drives an HTTP server on this machine with N keep-alive connections for a
// fixed duration after a warm-up, records every latency in a log-linear
// histogram and prints one JSON result line per measurement; `loadgen report`
// turns the collected lines into the harness's table, with the targets and
// PASS/MISS beside each figure. With -rate, load offers a fixed number of
// requests a second (an open loop) instead of sending as fast as answers come.
//
//	loadgen load      -url U -conns 32 -duration 10s -warmup 2s -method POST -path /v1/runs -body '{"input":"bench"}' [-key new|fixed] [-ids FILE] [-pid PID] [-rate R]
//	loadgen seed      -url U -n 1000000 -conns 32 -ids FILE -sample 10000
//	loadgen sse       -url U -events 1000 -warmup-events 100 [-pid PID]
//	loadgen streams   -url U -n 1000 -pid PID
//	loadgen coldstart -n 10 -- BIN serve --port 0 --log off
//	loadgen report    -in results.jsonl
//
// Every measuring command takes -label, -role (emulator or baseline) and -round,
// copied into its JSON line. The client is a minimal HTTP/1.1 writer over
// net.Conn (requests pre-rendered, responses read with http.ReadResponse) so that
// the generator, which shares the machine's cores with the server, spends as
// little CPU per request as possible. Only loopback targets are meant: the
// harness always starts the server itself on 127.0.0.1.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Result is one measurement, printed as one JSON line.
type Result struct {
	Label string  `json:"label"`           // workload name, e.g. "keyless"
	Role  string  `json:"role"`            // "emulator" or "baseline"
	Round int     `json:"round"`           // 1-based round of the harness
	Kind  string  `json:"kind"`            // load, seed, sse, streams, coldstart
	N     int     `json:"n,omitempty"`     // stored runs (scaled poll), streams, events or starts
	Conns int     `json:"conns,omitempty"` // connections used
	Rate  float64 `json:"rate,omitempty"`  // offered load of an open-loop run, req/s (0: closed loop)

	Requests   int64   `json:"requests"`              // completed in the measured window
	Errors     int64   `json:"errors"`                // unexpected status or transport error
	FirstError string  `json:"first_error,omitempty"` // the first one, for the report
	Seconds    float64 `json:"seconds"`               // measured window
	RPS        float64 `json:"rps"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	MaxMs      float64 `json:"max_ms"`
	HWMKB      int64   `json:"vmhwm_kb,omitempty"` // peak RSS of -pid (VmHWM)
	RSSKB      int64   `json:"vmrss_kb,omitempty"` // RSS of -pid at the end (VmRSS)
}

// common are the flags every measuring command shares.
type common struct {
	label, role string
	round, pid  int
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.label, "label", "", "workload label copied into the result")
	fs.StringVar(&c.role, "role", "emulator", "emulator or baseline")
	fs.IntVar(&c.round, "round", 1, "round number copied into the result")
	fs.IntVar(&c.pid, "pid", 0, "server process id whose VmHWM/VmRSS to report (0 = none)")
}

func (c *common) result(kind string) Result {
	return Result{Label: c.label, Role: c.role, Round: c.round, Kind: kind}
}

// finish adds the server's memory figures and prints r.
func (c *common) finish(r Result) {
	if c.pid > 0 {
		r.HWMKB, r.RSSKB = procMem(c.pid)
	}
	emit(r)
}

func emit(r Result) {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
}

// procMem reads VmHWM and VmRSS (kB) of pid from /proc; zeros when unreadable.
func procMem(pid int) (hwm, rss int64) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		switch name {
		case "VmHWM":
			hwm = n
		case "VmRSS":
			rss = n
		}
	}
	return hwm, rss
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "loadgen: "+format+"\n", a...)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: loadgen load|seed|sse|streams|coldstart|report [flags] (see the package doc)")
		os.Exit(2)
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "load":
		cmdLoad(args)
	case "seed":
		cmdSeed(args)
	case "sse":
		cmdSSE(args)
	case "streams":
		cmdStreams(args)
	case "coldstart":
		cmdColdstart(args)
	case "report":
		cmdReport(args)
	default:
		fatalf("unknown command %q", os.Args[1])
	}
}

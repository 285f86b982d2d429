package main

import (
	"bufio"
	"flag"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// cmdColdstart starts the command after "--" -n times and measures, each time,
// the time from exec to the first 200 of GET /health. The command must print
// "… listening on http://HOST:PORT" on its first stdout lines (the emulator and
// benchbase do), which is how the port chosen with --port 0 is learnt. Each
// process is stopped with SIGTERM before the next starts. The result's p50 is
// the median, max the slowest.
func cmdColdstart(args []string) {
	fs := flag.NewFlagSet("coldstart", flag.ExitOnError)
	var c common
	c.register(fs)
	n := fs.Int("n", 10, "starts")
	fs.Parse(args)
	argv := fs.Args()
	if len(argv) == 0 {
		fatalf("coldstart: give the command after --")
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var times []time.Duration
	var h hist
	for i := 0; i < *n; i++ {
		d := coldstart(client, argv)
		times = append(times, d)
		h.record(d)
	}
	slices.Sort(times)
	r := c.result("coldstart")
	r.N, r.Requests = *n, int64(*n)
	r.P50Ms = ms(times[len(times)/2])
	if len(times)%2 == 0 {
		r.P50Ms = ms((times[len(times)/2-1] + times[len(times)/2]) / 2)
	}
	r.P99Ms, r.MaxMs = ms(h.quantile(0.99)), ms(times[len(times)-1])
	c.finish(r)
}

func coldstart(client *http.Client, argv []string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatalf("coldstart: %v", err)
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		fatalf("coldstart: %v", err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	sc := bufio.NewScanner(out)
	base := ""
	for base == "" && sc.Scan() {
		if _, u, ok := strings.Cut(sc.Text(), "listening on "); ok {
			base = strings.TrimSpace(u)
		}
	}
	if base == "" {
		fatalf("coldstart: %s printed no \"listening on URL\" line", argv[0])
	}
	go func() {
		for sc.Scan() { // keep draining so the child never blocks on stdout
		}
	}()
	deadline := t0.Add(10 * time.Second)
	for {
		resp, err := client.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return time.Since(t0)
			}
		}
		if time.Now().After(deadline) {
			fatalf("coldstart: no 200 from %s/health within 10s (last: %v)", base, err)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

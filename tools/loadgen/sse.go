package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// subscribe opens GET /v1/runs/<id>/events on a connection of its own and
// returns the connection and a reader positioned at the first frame byte. The
// caller owns the connection.
func subscribe(host, id string) (net.Conn, *bufio.Reader, error) {
	c, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		return nil, nil, err
	}
	req := render(nil, "GET", "/v1/runs/"+id+"/events", host, "", nil)
	if _, err := c.Write(req); err != nil {
		c.Close()
		return nil, nil, err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	if resp.StatusCode != 200 {
		c.Close()
		return nil, nil, fmt.Errorf("events of %s: status %d", id, resp.StatusCode)
	}
	// resp.Body undoes the chunked encoding; frames arrive as they are flushed.
	return c, bufio.NewReader(resp.Body), nil
}

// submit creates one keyless run and returns its id.
func submit(k *client, host string) string {
	status, body, err := k.do(render(nil, "POST", "/v1/runs", host, "", []byte(`{"input":"bench"}`)), true)
	if err != nil || status != 202 {
		fatalf("submit: status %d %v", status, err)
	}
	return runID(body)
}

// cmdSSE measures the time from the start of the events control call
// (POST /__admin/hermes/runs/<id>/events, one message.delta) to the arrival of
// its data frame at a connected subscriber, one event at a time.
func cmdSSE(args []string) {
	fs := flag.NewFlagSet("sse", flag.ExitOnError)
	var c common
	c.register(fs)
	rawURL := fs.String("url", "", "server base URL")
	events := fs.Int("events", 1000, "measured events")
	warm := fs.Int("warmup-events", 100, "unmeasured events first")
	fs.Parse(args)
	host := target(*rawURL)
	k := &client{addr: host}
	defer k.close()
	id := submit(k, host)
	conn, br, err := subscribe(host, id)
	if err != nil {
		fatalf("sse: %v", err)
	}
	defer conn.Close()
	frames := make(chan time.Time, 16)
	go func() {
		defer close(frames)
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if bytes.HasPrefix(line, []byte("data: ")) {
				frames <- time.Now()
			}
		}
	}()
	req := render(nil, "POST", "/__admin/hermes/runs/"+id+"/events", host, "",
		[]byte(`{"events":[{"event":"message.delta","delta":"bench"}]}`))
	var h hist
	var errs int64
	first := ""
	for i := 0; i < *warm+*events; i++ {
		t0 := time.Now()
		status, _, err := k.do(req, false)
		if err != nil || status != 200 {
			fatalf("sse: events control: status %d %v", status, err)
		}
		select {
		case t1, ok := <-frames:
			if !ok {
				fatalf("sse: the stream ended")
			}
			if i >= *warm {
				h.record(t1.Sub(t0))
			}
		case <-time.After(5 * time.Second):
			errs++
			if first == "" {
				first = fmt.Sprintf("event %d: no frame within 5s", i)
			}
		}
	}
	r := c.result("sse")
	r.N, r.Requests, r.Errors, r.FirstError = *events, int64(*events)-errs, errs, first
	r.P50Ms, r.P99Ms, r.MaxMs = ms(h.quantile(0.5)), ms(h.quantile(0.99)), ms(h.max)
	c.finish(r)
}

// cmdStreams creates -n runs, connects one subscriber to each, and with all of
// them connected reports the server's VmRSS and VmHWM; then it disconnects.
func cmdStreams(args []string) {
	fs := flag.NewFlagSet("streams", flag.ExitOnError)
	var c common
	c.register(fs)
	rawURL := fs.String("url", "", "server base URL")
	n := fs.Int("n", 1000, "open streams")
	hold := fs.Duration("hold", time.Second, "time to wait with all streams open before reading the memory")
	fs.Parse(args)
	host := target(*rawURL)
	ids, _ := seed(host, *n, 8, *n, `{"input":"bench"}`, "")
	start := time.Now()
	conns := make([]net.Conn, len(ids))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	sem := make(chan struct{}, 64) // connect 64 at a time
	for i, id := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			conn, _, err := subscribe(host, id)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && failed == nil {
				failed = err
			}
			conns[i] = conn
		}()
	}
	wg.Wait()
	defer func() {
		for _, conn := range conns {
			if conn != nil {
				conn.Close()
			}
		}
	}()
	if failed != nil {
		fatalf("streams: %v", failed)
	}
	connected := time.Since(start)
	time.Sleep(*hold)
	r := c.result("streams")
	r.N, r.Conns, r.Requests, r.Seconds = len(ids), len(ids), int64(len(ids)), connected.Seconds()
	c.finish(r)
}

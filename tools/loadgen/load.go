package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// client is one keep-alive HTTP/1.1 connection. Requests are written as
// pre-rendered bytes; a broken or server-closed connection is redialled.
type client struct {
	addr string
	c    net.Conn
	br   *bufio.Reader
}

func (k *client) dial() error {
	c, err := net.DialTimeout("tcp", k.addr, 5*time.Second)
	if err != nil {
		return err
	}
	k.c, k.br = c, bufio.NewReaderSize(c, 16<<10)
	return nil
}

func (k *client) close() {
	if k.c != nil {
		k.c.Close()
		k.c = nil
	}
}

// do sends req and returns the status and, when keep is set, the body.
func (k *client) do(req []byte, keep bool) (int, []byte, error) {
	for attempt := 0; ; attempt++ {
		if k.c == nil {
			if err := k.dial(); err != nil {
				return 0, nil, err
			}
		}
		_, err := k.c.Write(req)
		var resp *http.Response
		if err == nil {
			resp, err = http.ReadResponse(k.br, nil)
		}
		if err != nil {
			k.close()
			if attempt == 0 { // an idle connection the server closed: retry once on a new one
				continue
			}
			return 0, nil, err
		}
		var body []byte
		if keep {
			body, err = io.ReadAll(resp.Body)
		} else {
			_, err = io.Copy(io.Discard, resp.Body)
		}
		resp.Body.Close()
		if err != nil || resp.Close {
			k.close()
		}
		return resp.StatusCode, body, err
	}
}

// target is the parsed -url: host:port for dialling and the Host header.
func target(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		fatalf("-url %q: want http://host:port", raw)
	}
	return u.Host
}

// render builds one request. key, when non-empty, is sent as Idempotency-Key.
func render(buf []byte, method, path, host, key string, body []byte) []byte {
	buf = append(buf, method...)
	buf = append(buf, ' ')
	buf = append(buf, path...)
	buf = append(buf, " HTTP/1.1\r\nHost: "...)
	buf = append(buf, host...)
	buf = append(buf, "\r\nUser-Agent: loadgen\r\n"...)
	if method != "GET" {
		buf = append(buf, "Content-Type: application/json\r\nContent-Length: "...)
		buf = strconv.AppendInt(buf, int64(len(body)), 10)
		buf = append(buf, "\r\n"...)
	}
	if key != "" {
		buf = append(buf, "Idempotency-Key: "...)
		buf = append(buf, key...)
		buf = append(buf, "\r\n"...)
	}
	buf = append(buf, "\r\n"...)
	return append(buf, body...)
}

func wantSet(s string) map[int]bool {
	m := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fatalf("-want %q: want comma-separated statuses", s)
		}
		m[n] = true
	}
	return m
}

func readIDs(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		fatalf("%v", err)
	}
	ids := strings.Fields(string(b))
	if len(ids) == 0 {
		fatalf("%s: no run ids", path)
	}
	return ids
}

// cmdLoad runs one fixed-duration workload and prints its Result.
func cmdLoad(args []string) {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	var c common
	c.register(fs)
	rawURL := fs.String("url", "", "server base URL (http://127.0.0.1:PORT)")
	conns := fs.Int("conns", 32, "keep-alive connections")
	duration := fs.Duration("duration", 10*time.Second, "measured window")
	warmup := fs.Duration("warmup", 2*time.Second, "unmeasured warm-up before the window")
	method := fs.String("method", "GET", "request method")
	path := fs.String("path", "/v1/runs", "request path; {id} is replaced by ids from -ids in turn")
	body := fs.String("body", "", "request body")
	key := fs.String("key", "", "Idempotency-Key: '' none, 'new' a fresh key per request, anything else sent as is")
	idsFile := fs.String("ids", "", "file of run ids (whitespace-separated) for {id}")
	want := fs.String("want", "200,202", "statuses that count as success")
	n := fs.Int("n", 0, "stored runs, copied into the result (scaled poll)")
	rate := fs.Float64("rate", 0, "offered load, requests/s over all connections (0: closed loop, each connection sends as soon as it has its answer)")
	fs.Parse(args)
	if *rate < 0 {
		fatalf("-rate %v: want 0 or more", *rate)
	}
	host := target(*rawURL)
	ok := wantSet(*want)
	var ids []string
	if strings.Contains(*path, "{id}") {
		if *idsFile == "" {
			fatalf("-path has {id}: -ids is required")
		}
		ids = readIDs(*idsFile)
	}
	keyPrefix := "k" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"

	start := time.Now()
	warmEnd := start.Add(*warmup)
	end := warmEnd.Add(*duration)
	// With -rate the load is open: request i is due at start + i/rate, whoever
	// sends it, and its latency counts from when it was due, so a server that
	// falls behind is charged for the wait (no coordinated omission).
	sched := &pace{start: start, rate: *rate}
	due := func() (time.Time, bool) {
		if *rate == 0 {
			return time.Now(), true
		}
		at := sched.next()
		if !at.Before(end) {
			return at, false
		}
		time.Sleep(time.Until(at))
		return at, true
	}
	var (
		mu       sync.Mutex
		total    hist
		requests int64
		errors   int64
		firstErr string
		fatal    atomic.Value
	)
	var wg sync.WaitGroup
	for w := 0; w < *conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			k := &client{addr: host}
			defer k.close()
			var h hist
			var reqs, errs int64
			var ferr string
			buf := make([]byte, 0, 512)
			fixed := []byte(nil)
			if ids == nil && *key != "new" {
				fixed = render(nil, *method, *path, host, *key, []byte(*body))
			}
			for i := 0; ; i++ {
				t0, more := due()
				if !more || !t0.Before(end) {
					break
				}
				req := fixed
				if req == nil {
					p := *path
					if ids != nil {
						p = strings.Replace(p, "{id}", ids[(w+i*(*conns))%len(ids)], 1)
					}
					kk := *key
					if kk == "new" {
						kk = keyPrefix + strconv.Itoa(w) + "-" + strconv.Itoa(i)
					}
					buf = render(buf[:0], *method, p, host, kk, []byte(*body))
					req = buf
				}
				status, _, err := k.do(req, false)
				t1 := time.Now()
				// Paced, every request due in the window counts, however late
				// its answer: a stall at the end is not left out.
				if t0.Before(warmEnd) || *rate == 0 && t1.After(end) {
					if err != nil && !isRefused(err) {
						time.Sleep(time.Millisecond)
					}
					continue
				}
				if err != nil || !ok[status] {
					errs++
					if ferr == "" {
						ferr = fmt.Sprintf("status %d %v", status, err)
					}
					if err != nil {
						if isRefused(err) {
							fatal.Store(err.Error())
							break
						}
						time.Sleep(time.Millisecond)
					}
					continue
				}
				reqs++
				h.record(t1.Sub(t0))
			}
			mu.Lock()
			total.merge(&h)
			requests += reqs
			errors += errs
			if firstErr == "" {
				firstErr = ferr
			}
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	if f := fatal.Load(); f != nil {
		fatalf("%s", f)
	}
	r := c.result("load")
	r.N, r.Conns, r.Rate = *n, *conns, *rate
	r.Requests, r.Errors, r.FirstError = requests, errors, firstErr
	r.Seconds = duration.Seconds()
	r.RPS = float64(requests) / r.Seconds
	r.P50Ms, r.P99Ms, r.MaxMs = ms(total.quantile(0.50)), ms(total.quantile(0.99)), ms(total.max)
	c.finish(r)
}

// pace is the schedule of a paced load: the i-th request asked for is due at
// start + i/rate seconds.
type pace struct {
	start  time.Time
	rate   float64 // requests per second, > 0
	issued atomic.Int64
}

// next returns when the next request is due.
func (p *pace) next() time.Time {
	i := p.issued.Add(1) - 1
	return p.start.Add(time.Duration(float64(i) / p.rate * float64(time.Second)))
}

func isRefused(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection refused")
}

// runID extracts "run_id" from a submission response body.
func runID(body []byte) string {
	i := bytes.Index(body, []byte(`"run_id":"`))
	if i < 0 {
		return ""
	}
	rest := body[i+len(`"run_id":"`):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// cmdSeed submits -n keyless runs over -conns connections as fast as the server
// takes them and writes up to -sample of their ids, spread evenly over the
// submission order, to -ids.
func cmdSeed(args []string) {
	fs := flag.NewFlagSet("seed", flag.ExitOnError)
	var c common
	c.register(fs)
	rawURL := fs.String("url", "", "server base URL")
	n := fs.Int("n", 1000, "runs to create")
	conns := fs.Int("conns", 32, "connections")
	idsFile := fs.String("ids", "", "file to write sampled run ids to (required)")
	sample := fs.Int("sample", 10000, "run ids to keep")
	body := fs.String("body", `{"input":"seed"}`, "submission body")
	keyed := fs.String("keyed", "", "when set, every submission carries the Idempotency-Key <keyed>-<i>")
	fs.Parse(args)
	if *idsFile == "" {
		fatalf("seed: -ids is required")
	}
	ids, secs := seed(target(*rawURL), *n, *conns, *sample, *body, *keyed)
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(id)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(*idsFile, []byte(b.String()), 0o644); err != nil {
		fatalf("%v", err)
	}
	r := c.result("seed")
	r.N, r.Conns, r.Requests, r.Seconds, r.RPS = *n, *conns, int64(*n), secs, float64(*n)/secs
	c.finish(r)
}

// seed creates n runs — keyless, or keyed with keys prefix-i when prefix is set
// — and returns a sample of their ids and the time taken.
func seed(host string, n, conns, sample int, body, prefix string) ([]string, float64) {
	if sample > n {
		sample = n
	}
	step := max(1, n/max(1, sample))
	req := render(nil, "POST", "/v1/runs", host, "", []byte(body))
	var next atomic.Int64
	var mu sync.Mutex
	var ids []string
	var failed atomic.Value
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := &client{addr: host}
			defer k.close()
			var buf []byte
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				keep := i%int64(step) == 0
				r := req
				if prefix != "" {
					buf = render(buf[:0], "POST", "/v1/runs", host, prefix+"-"+strconv.FormatInt(i, 10), []byte(body))
					r = buf
				}
				status, b, err := k.do(r, keep)
				if err != nil || status != 202 {
					failed.Store(fmt.Sprintf("seed: submission %d: status %d %v", i, status, err))
					return
				}
				if keep {
					mu.Lock()
					if len(ids) < sample {
						ids = append(ids, runID(b))
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f != nil {
		fatalf("%s", f)
	}
	return ids, time.Since(start).Seconds()
}

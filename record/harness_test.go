package record

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-emulator/hermes-emulator/emulator"
	"github.com/hermes-emulator/hermes-emulator/emulator/control"
	"github.com/hermes-emulator/hermes-emulator/emulator/emulatortest"
)

// token is the bearer token the test client sends; it must never be stored.
const token = "Bearer sk-never-stored-4242"

// t0 is the upstream emulator's frozen clock at start (epoch ms).
const t0 = 1700000000000

// rig is an upstream emulator (frozen clock), its control plane, and a
// recorder in front of it.
type rig struct {
	t   *testing.T
	up  *emulator.Server
	ctl *control.Client
	rec *Recorder
	px  *httptest.Server
	out string
	// base is where the client sends its requests: the proxy, or (replay)
	// the emulator itself.
	base string
	// replay: no control calls move runs (a scenario does); advance still
	// moves the clock.
	replay bool
	// said is the client's transcript: every answer and every SSE item.
	said []string
}

func newRig(t *testing.T, o Options) *rig {
	t.Helper()
	up := emulatortest.New(t, emulator.Options{ClockStart: t0, FreezeClock: true})
	o.Upstream = up.URL()
	if o.Out == "" {
		o.Out = filepath.Join(t.TempDir(), "recorded.yaml")
	}
	if o.Now == nil {
		o.Now = func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }
	}
	rec, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(rec)
	t.Cleanup(px.Close)
	return &rig{t: t, up: up, ctl: control.New(up.URL()), rec: rec, px: px, out: o.Out, base: px.URL}
}

// answer is one response as the client saw it.
type reply struct {
	status int
	header http.Header
	body   string
}

// do sends method path (through the proxy) with body and the client's headers.
func (r *rig) do(method, path, body string) reply {
	r.t.Helper()
	a := send(r.t, r.base, method, path, body)
	r.said = append(r.said, method+" "+path+" "+body+" -> "+strconv.Itoa(a.status)+" "+a.body)
	return a
}

func send(t *testing.T, base, method, path, body string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, string(b)}
}

// create admits a run through the proxy and returns its id.
func (r *rig) create(body string) string {
	r.t.Helper()
	a := r.do("POST", "/v1/runs", body)
	var v struct {
		RunID string `json:"run_id"`
	}
	if a.status != 202 || json.Unmarshal([]byte(a.body), &v) != nil {
		r.t.Fatalf("create: %d %s", a.status, a.body)
	}
	return v.RunID
}

// poll reads the run through the proxy and returns its status.
func (r *rig) poll(id string) string {
	r.t.Helper()
	a := r.do("GET", "/v1/runs/"+id, "")
	var v struct {
		Status string `json:"status"`
	}
	if a.status != 200 || json.Unmarshal([]byte(a.body), &v) != nil {
		r.t.Fatalf("poll: %d %s", a.status, a.body)
	}
	return v.Status
}

// advance moves the upstream's frozen clock.
func (r *rig) advance(d time.Duration) {
	r.t.Helper()
	if _, err := r.ctl.Clock().Advance(context.Background(), d); err != nil {
		r.t.Fatal(err)
	}
}

// observe posts a raw observe body (not on replay).
func (r *rig) observe(id, body string) {
	r.t.Helper()
	if r.replay {
		return
	}
	if _, err := r.ctl.Observe(context.Background(), id, json.RawMessage(body)); err != nil {
		r.t.Fatal(err)
	}
}

// events posts raw events (not on replay).
func (r *rig) events(id string, events ...string) {
	r.t.Helper()
	if r.replay {
		return
	}
	var es []any
	for _, e := range events {
		es = append(es, json.RawMessage(e))
	}
	if _, err := r.ctl.Events(context.Background(), id, es...); err != nil {
		r.t.Fatal(err)
	}
}

// stream is a client's SSE subscription through the proxy, read frame by frame.
type stream struct {
	r    *rig
	t    *testing.T
	resp *http.Response
	rd   *bufio.Reader
	all  strings.Builder
}

func (r *rig) subscribe(id string) *stream {
	r.t.Helper()
	req, _ := http.NewRequest("GET", r.base+"/v1/runs/"+id+"/events", nil)
	req.Header.Set("Authorization", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		r.t.Fatalf("subscribe: %v %v", err, resp)
	}
	s := &stream{r: r, t: r.t, resp: resp, rd: bufio.NewReader(resp.Body)}
	r.t.Cleanup(func() { resp.Body.Close() })
	return s
}

// next reads one SSE item (through its blank line) and returns it.
func (s *stream) next() string {
	s.t.Helper()
	var b strings.Builder
	for {
		line, err := s.rd.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			s.t.Fatalf("stream: %v after %q", err, b.String())
		}
		if line == "\n" {
			s.all.WriteString(b.String())
			s.r.said = append(s.r.said, "SSE "+b.String())
			return b.String()
		}
	}
}

// end reads the closing comment and the end of the body.
func (s *stream) end() {
	s.t.Helper()
	if c := s.next(); c != ": stream closed\n\n" {
		s.t.Fatalf("stream end: %q", c)
	}
	if rest, _ := io.ReadAll(s.rd); len(rest) != 0 {
		s.t.Fatalf("after end: %q", rest)
	}
}

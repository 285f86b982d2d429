package emulator_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hermes-emulator/hermes-emulator/emulator"
)

// SSE acceptance (acceptance.md H, items 99–119; runs-api §6.4; wire.md §7).
// Streams are read from a real socket: the de-chunked body is split into items
// (a frame or a comment, each ending in "\n\n") by a reader goroutine, and
// every wait has a deadline, so a broken emulator fails a test instead of
// hanging it.

// sseClosed is the end-of-stream comment (wire.md §7).
const sseClosed = ": stream closed\n\n"

// sseKeepalive is the idle comment (runs-api §6.4.2 step 7).
const sseKeepalive = ": keepalive\n\n"

// sseWait bounds every wait for an item the test expects to arrive.
const sseWait = 5 * time.Second

// sseFrame is the frame of one event whose CPython JSON text is js.
func sseFrame(js string) string { return "data: " + js + "\n\n" }

// sseEnv is the CPython text of an event envelope at the frozen base; rest
// (", …" fields) follows it.
func sseEnv(event, id, rest string) string {
	return `{"event": "` + event + `", "run_id": "` + id + `", "timestamp": 1700000000.0` + rest + `}`
}

// sseItem is one item of a stream, or its end (err != nil; io.EOF when the
// chunked body ended cleanly, b then holds any unterminated tail).
type sseItem struct {
	b   string
	err error
}

// sseStream is one open RunEvents response.
type sseStream struct {
	t      *testing.T
	resp   *http.Response
	cancel context.CancelFunc
	items  chan sseItem
	stop   chan struct{}
	done   chan struct{}
	ended  bool
}

// sseClient is the client of the SSE tests: its own transport, so idle
// connections can be closed before goroutines are counted.
var sseClient = &http.Client{Transport: &http.Transport{}}

// sseOpen sends GET /v1/runs/<id>/events over the socket with header pairs.
// On 200 it returns the open stream (closed at test end); otherwise the whole
// response. took is the time until the response headers arrived.
func (x *h) sseOpen(id string, hdr ...string) (s *sseStream, r res, took time.Duration) {
	x.t.Helper()
	if x.srv.URL() == "" || x.inproc {
		x.t.Fatal("sseOpen needs the listener")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	req, err := http.NewRequestWithContext(ctx, "GET", x.srv.URL()+"/v1/runs/"+id+"/events", nil)
	if err != nil {
		cancel()
		x.t.Fatal(err)
	}
	if x.ns != "" {
		req.Header.Set("X-Mockingbird-Namespace", x.ns)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	start := time.Now()
	resp, err := sseClient.Do(req)
	took = time.Since(start)
	if err != nil {
		cancel()
		x.t.Fatalf("GET events %s: %v", id, err)
	}
	if resp.StatusCode != 200 {
		defer cancel()
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			x.t.Fatalf("GET events %s: read: %v", id, err)
		}
		return nil, res{resp.StatusCode, resp.Header, b}, took
	}
	s = &sseStream{t: x.t, resp: resp, cancel: cancel, items: make(chan sseItem, 64),
		stop: make(chan struct{}), done: make(chan struct{})}
	go s.read()
	x.t.Cleanup(s.close)
	return s, res{Status: 200, Header: resp.Header}, took
}

// read splits the body into items until it ends or the stream is closed.
func (s *sseStream) read() {
	defer close(s.done)
	br := bufio.NewReader(s.resp.Body)
	var cur []byte
	send := func(it sseItem) bool {
		select {
		case s.items <- it:
			return true
		case <-s.stop:
			return false
		}
	}
	for {
		line, err := br.ReadBytes('\n')
		cur = append(cur, line...)
		if err != nil {
			send(sseItem{string(cur), err})
			return
		}
		if len(line) == 1 { // the blank line that ends an item
			if !send(sseItem{b: string(cur)}) {
				return
			}
			cur = nil
		}
	}
}

// close disconnects the client and waits for the reader to stop.
func (s *sseStream) close() {
	select {
	case <-s.stop:
		return
	default:
	}
	close(s.stop)
	s.cancel()
	<-s.done
	s.resp.Body.Close()
}

// try returns the next item if one arrives within d.
func (s *sseStream) try(d time.Duration) (sseItem, bool) {
	if s.ended {
		return sseItem{err: io.EOF}, true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case it := <-s.items:
		if it.err != nil {
			s.ended = true
		}
		return it, true
	case <-t.C:
		return sseItem{}, false
	}
}

// next is the next item; the test fails when none arrives in time or the
// stream ended instead.
func (s *sseStream) next() string {
	s.t.Helper()
	it, ok := s.try(sseWait)
	if !ok {
		s.t.Fatalf("no SSE item within %v", sseWait)
	}
	if it.err != nil {
		s.t.Fatalf("stream ended (%v) instead of an item; tail %q", it.err, it.b)
	}
	return it.b
}

// want reads items and compares each one's bytes exactly.
func (s *sseStream) want(items ...string) {
	s.t.Helper()
	for i, w := range items {
		if got := s.next(); got != w {
			s.t.Fatalf("item %d:\ngot  %q\nwant %q", i, got, w)
		}
	}
}

// end checks that the response ends cleanly (chunked terminator) next.
func (s *sseStream) end() {
	s.t.Helper()
	it, ok := s.try(sseWait)
	if !ok {
		s.t.Fatalf("stream did not end within %v", sseWait)
	}
	if it.err == nil || !errors.Is(it.err, io.EOF) || it.b != "" {
		s.t.Fatalf("want a clean end, got item %q err %v", it.b, it.err)
	}
}

// quiet checks that no data frame arrives and the stream does not end within
// d; it returns the comments that arrived.
func (s *sseStream) quiet(d time.Duration) []string {
	s.t.Helper()
	var got []string
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return got
		}
		it, ok := s.try(left)
		if !ok {
			return got
		}
		if it.err != nil || strings.HasPrefix(it.b, "data:") {
			s.t.Fatalf("want no data within %v, got %q (err %v)", d, it.b, it.err)
		}
		got = append(got, it.b)
	}
}

// sseEvents posts to the events control of run id.
func (x *h) sseEvents(id, body string) res {
	return x.post("/__admin/hermes/runs/"+id+"/events", body)
}

// sseEnded waits until the journal holds n finished RunEvents streams (status
// 200) of the namespace: the entry is written when the stream ends, after the
// subscription was closed (runs-api §6.4.2), so this orders a disconnect
// before what the test does next.
func (x *h) sseEnded(n int) {
	x.t.Helper()
	deadline := time.Now().Add(sseWait)
	for {
		r := x.get("/__admin/requests?operationId=RunEvents&status=200")
		var j struct{ Requests []json.RawMessage }
		if err := json.Unmarshal(r.Body, &j); err != nil {
			x.t.Fatalf("requests: %d %s", r.Status, r.Body)
		}
		if len(j.Requests) >= n {
			return
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("%d streams ended after %v, want %d", len(j.Requests), sseWait, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sseNotFound checks a 404 run_not_found answer to a subscription.
func (x *h) sseNotFound(id string) time.Duration {
	x.t.Helper()
	s, r, took := x.sseOpen(id)
	if s != nil {
		x.t.Fatalf("events %s: 200, want 404", id)
	}
	x.want(r, 404, hermesErr("Run not found: "+id, "run_not_found"))
	return took
}

// acceptance 99 (and wire.md §7's example frames)
func TestSSELiveFramesThenClosed(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start()
	s, _, _ := x.sseOpen(id)
	x.want(x.sseEvents(id, `{"events":[{"event":"tool.started","tool":"terminal","preview":"ls -la"},{"event":"message.delta","delta":"Your project has"}]}`), 200, "")
	x.want(x.observe(id, `{"status":"completed","output":"Your project has 3 files.","usage":{"input_tokens":812,"output_tokens":21,"total_tokens":833}}`), 200, "")
	s.want(
		sseFrame(sseEnv("tool.started", id, `, "tool": "terminal", "preview": "ls -la"`)),
		sseFrame(sseEnv("message.delta", id, `, "delta": "Your project has"`)),
		sseFrame(sseEnv("run.completed", id, `, "output": "Your project has 3 files.", "usage": {"input_tokens": 812, "output_tokens": 21, "total_tokens": 833}`)),
		sseClosed)
	s.end()
}

// acceptance 100, 101
func TestSSEBufferedThenGone(t *testing.T) {
	const wait = 100 * time.Millisecond
	x := newH(t, emulator.Options{SSESubscribeWait: wait})
	x.freeze()
	id := x.start()
	x.want(x.sseEvents(id, `{"events":[{"event":"tool.started","tool":"t"},{"event":"tool.completed","tool":"t","duration":0.764}]}`), 200, "")
	x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"d"}]}`), 200, "")
	x.want(x.observe(id, `{"status":"failed","error":"boom"}`), 200, "")
	s, _, _ := x.sseOpen(id)
	s.want(
		sseFrame(sseEnv("tool.started", id, `, "tool": "t", "preview": null`)),
		sseFrame(sseEnv("tool.completed", id, `, "tool": "t", "duration": 0.764, "error": false`)),
		sseFrame(sseEnv("message.delta", id, `, "delta": "d"`)),
		sseFrame(sseEnv("run.failed", id, `, "error": "boom"`)),
		sseClosed)
	s.end()
	// acceptance 101: the transport went with the stream.
	if took := x.sseNotFound(id); took < wait {
		t.Fatalf("404 after %v, want at least the subscribe wait %v", took, wait)
	}
}

// acceptance 101: the default subscribe wait is one second.
func TestSSEDefaultSubscribeWait(t *testing.T) {
	x := newH(t, emulator.Options{})
	id := x.start()
	x.want(x.observe(id, `{"status":"cancelled"}`), 200, "")
	s, _, _ := x.sseOpen(id)
	s.want(sseFrame(strings.Replace(sseEnv("run.cancelled", id, ""), "1700000000.0", sseTimestamp(t, x, id), 1)), sseClosed)
	s.end()
	if took := x.sseNotFound(id); took < time.Second {
		t.Fatalf("404 after %v, want at least 1s", took)
	}
}

// sseTimestamp is the Python rendering of the run's updated_at (the clock is
// not frozen in tests that do not need it).
func sseTimestamp(t *testing.T, x *h, id string) string {
	t.Helper()
	r := x.get("/v1/runs/" + id)
	i := strings.Index(string(r.Body), `"updated_at":`)
	if i < 0 {
		t.Fatalf("no updated_at: %s", r.Body)
	}
	rest := string(r.Body[i+len(`"updated_at":`):])
	return rest[:strings.IndexByte(rest, ',')]
}

// acceptance 102, 118: 404 without the wait when the run is not visible.
func TestSSENotVisibleImmediately(t *testing.T) {
	x := newH(t, emulator.Options{SSESubscribeWait: 2 * time.Second})
	if took := x.sseNotFound("missing"); took >= time.Second {
		t.Fatalf("missing: 404 after %v, want no wait", took)
	}
	// acceptance 118
	id := x.start()
	x.want(x.post("/__admin/hermes/scope", `{"profile":"p","identity":"i"}`), 200, "")
	if took := x.sseNotFound(id); took >= time.Second {
		t.Fatalf("other scope: 404 after %v, want no wait", took)
	}
	x.want(x.post("/__admin/hermes/scope", `{"profile":"default","identity":"unauthenticated-test-listener"}`), 200, "")
	s, _, _ := x.sseOpen(id)
	x.want(x.observe(id, `{"status":"interrupted"}`), 200, "")
	s.want(sseClosed)
	s.end()
}

// acceptance 103
func TestSSEFrameBytes(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start()
	if id != run1 {
		t.Fatalf("first run %s", id)
	}
	s, _, _ := x.sseOpen(id)
	x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"café 😀"}]}`), 200, "")
	s.want("data: {\"event\": \"message.delta\", \"run_id\": \"run_4e685a726271445348426a4a70783364\", \"timestamp\": 1700000000.0, \"delta\": \"caf\\u00e9 \\ud83d\\ude00\"}\n\n")
	// Escapes of wire.md §7: two-character ones, \u00xx, U+007F, "/" kept.
	x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"\"\\\n\r\t\b\f\u0001\u007f/~ "}]}`), 200, "")
	s.want(sseFrame(sseEnv("message.delta", id, `, "delta": "\"\\\n\r\t\b\f\u0001\u007f/~ "`)))
}

// acceptance 104
func TestSSEHeaders(t *testing.T) {
	x := newH(t, emulator.Options{})
	id := x.start()
	s, r, _ := x.sseOpen(id)
	for k, v := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"} {
		if got := r.Header.Values(k); len(got) != 1 || got[0] != v {
			t.Fatalf("%s = %q, want %q", k, got, v)
		}
	}
	if _, ok := r.Header["Content-Length"]; ok || s.resp.ContentLength != -1 {
		t.Fatalf("Content-Length present: %v", r.Header)
	}
	if te := s.resp.TransferEncoding; len(te) != 1 || te[0] != "chunked" {
		t.Fatalf("Transfer-Encoding %q, want chunked", te)
	}
	for _, k := range []string{"Content-Security-Policy", "Permissions-Policy", "Strict-Transport-Security",
		"X-Content-Type-Options", "X-Frame-Options", "X-Xss-Protection", "Referrer-Policy"} {
		if _, ok := r.Header[k]; ok {
			t.Fatalf("security header %s on the stream", k)
		}
	}
	if !strings.HasPrefix(r.Header.Get("X-Mockingbird"), "hermes@") {
		t.Fatalf("x-mockingbird: %v", r.Header)
	}
	// No initial comment or retry: line: the first item is the first frame.
	x.want(x.observe(id, `{"status":"interrupted"}`), 200, "")
	s.want(sseClosed)
	s.end()
}

// acceptance 105
func TestSSEKeepalive(t *testing.T) {
	x := newH(t, emulator.Options{SSEKeepalive: 100 * time.Millisecond})
	id := x.start()
	s, _, _ := x.sseOpen(id)
	got := s.quiet(250 * time.Millisecond)
	if len(got) < 2 {
		t.Fatalf("%d keepalives in 250ms, want at least 2: %q", len(got), got)
	}
	for _, c := range got {
		if c != sseKeepalive {
			t.Fatalf("item %q, want %q", c, sseKeepalive)
		}
	}
	// The journal entry is written at the end, with the stream's whole duration.
	s.close()
	x.sseEnded(1)
	var jr struct {
		Requests []struct{ DurationMs float64 }
	}
	if err := json.Unmarshal(x.get("/__admin/requests?operationId=RunEvents").Body, &jr); err != nil ||
		len(jr.Requests) != 1 || jr.Requests[0].DurationMs < 250 {
		t.Fatalf("journal of the stream: %+v %v", jr, err)
	}
}

// acceptance 106, 107
func TestSSERecordEffects(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start()
	x.want(x.observe(id, `{"status":"running"}`), 200, "")
	base := `{"object":"hermes.run","run_id":"` + id + `","status":"running","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"` + id + `","model":"hermes-agent"}`
	x.want(x.get("/v1/runs/"+id), 200, base)
	x.advance("1500")
	x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"x"}]}`), 200, "")
	x.want(x.get("/v1/runs/"+id), 200, base)
	x.want(x.sseEvents(id, `{"events":[{"event":"tool.started","tool":"terminal"}]}`), 200, "")
	x.want(x.get("/v1/runs/"+id), 200, `{"object":"hermes.run","run_id":"`+id+`","status":"running","updated_at":1700000001.5,"created_at":1700000000.0,"session_id":"`+id+`","model":"hermes-agent","last_event":"tool.started"}`)

	// acceptance 107
	w := x.observe(id, `{"status":"waiting_for_approval","approval":{"command":"c"}}`)
	x.want(w, 200, "")
	x.advance("500")
	x.want(x.sseEvents(id, `{"events":[{"event":"tool.completed","tool":"terminal"}]}`), 200, "")
	want := strings.Replace(strings.Replace(string(w.Body), `"last_event":"approval.request"`, `"last_event":"tool.completed"`, 1),
		`"updated_at":1700000001.5`, `"updated_at":1700000002.0`, 1)
	x.want(x.get("/v1/runs/"+id), 200, want)
	if !strings.Contains(want, `"status":"waiting_for_approval"`) || !strings.Contains(want, `"approval":{"command":"c"`) {
		t.Fatalf("waiting record: %s", want)
	}
}

// acceptance 108, 109, 110
func TestSSEEventFields(t *testing.T) {
	long := strings.Repeat("ab😀", 200) // 600 code points
	cut := strings.Repeat(`ab\ud83d\ude00`, 166) + "ab"
	cases := []struct{ name, event, frame string }{
		{"duration float", `{"event":"tool.completed","tool":"t","duration":0.7639}`, `, "tool": "t", "duration": 0.764, "error": false`},
		{"duration int", `{"event":"tool.completed","tool":"t","duration":1}`, `, "tool": "t", "duration": 1, "error": false`},
		{"duration 1.0", `{"event":"tool.completed","tool":"t","duration":1.0,"error":true}`, `, "tool": "t", "duration": 1.0, "error": true`},
		{"duration absent", `{"event":"tool.completed","tool":"t"}`, `, "tool": "t", "duration": 0, "error": false`},
		{"reasoning 600", `{"event":"reasoning.available","text":"` + long + `"}`, `, "text": "` + cut + `"`},
		{"reasoning default", `{"event":"reasoning.available"}`, `, "text": ""`},
		{"subagent nulls", `{"event":"subagent.start","preview":null,"goal":"g","depth":2,"model":null}`, `, "goal": "g", "depth": 2`},
		{"subagent order", `{"event":"subagent.complete","output_tail":"o","status":"ok","preview":"p","goal":{"b":1,"a":[1.5,null]}}`, `, "preview": "p", "goal": {"b": 1, "a": [1.5, null]}, "status": "ok", "output_tail": "o"`},
	}
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start()
	s, _, _ := x.sseOpen(id)
	for _, c := range cases {
		x.want(x.sseEvents(id, `{"events":[`+c.event+`]}`), 200, `{"run_id":"`+id+`","emitted":1,"buffered":1,"simulated":true}`)
		name := c.event[len(`{"event":"`):]
		name = name[:strings.IndexByte(name, '"')]
		if got, want := s.next(), sseFrame(sseEnv(name, id, c.frame)); got != want {
			t.Fatalf("%s:\ngot  %q\nwant %q", c.name, got, want)
		}
	}
}

// acceptance 111
func TestSSEEventsControlRejects(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start()
	s, _, _ := x.sseOpen(id)
	cases := [][2]string{
		{`{"events":[]}`, `events: expected {"events":[...]} with at least one event`},
		{``, `events: expected {"events":[...]} with at least one event`},
		{`{"events":[{"event":"message.delta","delta":"x"}],"x":1}`, `events: expected {"events":[...]} with at least one event`},
		{`{"events":[{"event":"run.completed"}]}`, `events[0]: unsupported event`},
		{`{"events":[{"event":"message.delta","delta":1}]}`, `events[0]: delta must be a string`},
		{`{"events":[{"event":"tool.started","tool":"t","x":1}]}`, `events[0]: unsupported field`},
		// All elements are checked before anything is emitted.
		{`{"events":[{"event":"message.delta","delta":"ok"},{"event":"tool.started"}]}`, `events[1]: tool must be a string`},
		{`{"events":[{"event":"tool.started","tool":"t","preview":1}]}`, `events[0]: preview must be a string or null`},
		{`{"events":[{"event":"tool.completed","tool":"t","duration":"1"}]}`, `events[0]: duration must be a number`},
		{`{"events":[{"event":"tool.completed","tool":"t","error":0}]}`, `events[0]: error must be a boolean`},
		{`{"events":[{"event":"reasoning.available","text":null}]}`, `events[0]: text must be a string`},
	}
	for _, c := range cases {
		x.want(x.sseEvents(id, c[0]), 400, hermesErr(c[1], ""))
	}
	x.want(x.get("/v1/runs/"+id), 200, `{"object":"hermes.run","run_id":"`+id+`","status":"queued","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"`+id+`","model":"hermes-agent"}`)
	// Nothing was emitted: the next frame is the next valid event.
	x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"first"}]}`), 200, "")
	s.want(sseFrame(sseEnv("message.delta", id, `, "delta": "first"`)))
}

// acceptance 112
func TestSSEEventsControlConflicts(t *testing.T) {
	x := newH(t, emulator.Options{})
	done := x.start()
	x.want(x.observe(done, `{"status":"completed"}`), 200, "")
	x.want(x.sseEvents(done, `{"events":[{"event":"message.delta","delta":"x"}]}`), 409,
		hermesErr("events: terminal runs cannot be changed", "mock_terminal_run"))
	// A 400 wins over the 409.
	x.want(x.sseEvents(done, `{"events":[]}`), 400, hermesErr(`events: expected {"events":[...]} with at least one event`, ""))
	id := x.start("Idempotency-Key", "k")
	x.want(x.observe(id, `{"status":"running"}`), 200, "")
	x.want(x.restart("alive"), 200, "")
	x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"x"}]}`), 409,
		hermesErr("Run is not active in this gateway process: "+id, "run_not_active"))
	x.want(x.sseEvents("missing", `{"events":[{"event":"message.delta","delta":"x"}]}`), 404,
		hermesErr("Run not found: missing", "run_not_found"))
}

// acceptance 113
func TestSSEEventsBuffered(t *testing.T) {
	x := newH(t, emulator.Options{SSESubscribeWait: 100 * time.Millisecond})
	id := x.start()
	x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"a"},{"event":"tool.started","tool":"t"}]}`), 200,
		`{"run_id":"`+id+`","emitted":2,"buffered":2,"simulated":true}`)
	s, _, _ := x.sseOpen(id)
	s.next()
	s.next()
	s.close()
	x.sseEnded(1)
	x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"b"}]}`), 200,
		`{"run_id":"`+id+`","emitted":1,"buffered":0,"simulated":true}`)
	x.sseNotFound(id)
}

// acceptance 114
func TestSSETransportExpiry(t *testing.T) {
	const wait = 100 * time.Millisecond
	for _, c := range []struct {
		advance string
		streams bool
	}{{"300000", true}, {"300001", false}} {
		x := newH(t, emulator.Options{SSESubscribeWait: wait})
		x.freeze()
		id := x.start()
		x.advance(c.advance)
		x.want(x.post("/__admin/hermes/sweep", `{}`), 200, "")
		if !c.streams {
			if took := x.sseNotFound(id); took < wait {
				t.Fatalf("advance %s: 404 after %v, want ≥ %v", c.advance, took, wait)
			}
			x.want(x.get("/v1/runs/"+id), 200, "")
			continue
		}
		s, _, _ := x.sseOpen(id)
		x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"still"}]}`), 200, `{"run_id":"`+id+`","emitted":1,"buffered":1,"simulated":true}`)
		s.want(sseFrame(`{"event": "message.delta", "run_id": "` + id + `", "timestamp": 1700000300.0, "delta": "still"}`))
	}
}

// acceptance 115
func TestSSENoFrameForNonTerminalStatus(t *testing.T) {
	x := newH(t, emulator.Options{})
	id := x.start()
	s, _, _ := x.sseOpen(id)
	x.want(x.observe(id, `{"status":"running"}`), 200, "")
	x.want(x.post("/v1/runs/"+id+"/stop", ""), 200, "")
	for _, st := range []string{"running", "queued", "stopping"} {
		x.want(x.observe(id, `{"status":"`+st+`"}`), 200, "")
	}
	x.want(x.observe(id, `{"status":"interrupted","error":"e"}`), 200, "")
	s.want(sseClosed) // nothing was written before it
	s.end()
}

// acceptance 116
func TestSSEAbortedWithoutClosingComment(t *testing.T) {
	cases := []struct {
		name string
		act  func(x *h, cp string) res
	}{
		{"restart stale", func(x *h, _ string) res { return x.restart("stale") }},
		{"restart alive", func(x *h, _ string) res { return x.restart("alive") }},
		{"reset", func(x *h, _ string) res { return x.post("/__admin/reset", "") }},
		{"checkout", func(x *h, cp string) res {
			return x.post("/__admin/branches/main/checkout", `{"checkpoint":"`+cp+`"}`)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := newH(t, emulator.Options{SSESubscribeWait: 100 * time.Millisecond})
			r := x.post("/v1/runs", `{"input":"synthetic"}`, "Idempotency-Key", "k")
			x.want(r, 202, "")
			id, cp := r.field(t, "run_id"), r.Header.Get("X-Mockingbird-Checkpoint")
			s, _, _ := x.sseOpen(id)
			x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"a"}]}`), 200, "")
			s.next()
			x.want(c.act(x, cp), 200, "")
			s.end()
			x.sseNotFound(id)
		})
	}
}

// acceptance 117
func TestSSETwoSubscribers(t *testing.T) {
	x := newH(t, emulator.Options{SSEKeepalive: 50 * time.Millisecond})
	x.freeze()
	id := x.start()
	a, _, _ := x.sseOpen(id)
	b, _, _ := x.sseOpen(id)
	x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"1"},{"event":"message.delta","delta":"2"},{"event":"message.delta","delta":"3"}]}`), 200,
		`{"run_id":"`+id+`","emitted":3,"buffered":3,"simulated":true}`)
	seen := map[string]int{}
	var order []string
	deadline := time.Now().Add(sseWait)
	for len(order) < 3 && time.Now().Before(deadline) {
		for _, s := range []*sseStream{a, b} {
			it, ok := s.try(10 * time.Millisecond)
			if !ok || it.b == sseKeepalive {
				continue
			}
			if it.err != nil {
				t.Fatalf("a stream ended: %v", it.err)
			}
			seen[it.b]++
			order = append(order, it.b)
		}
	}
	for _, d := range []string{"1", "2", "3"} {
		if f := sseFrame(sseEnv("message.delta", id, `, "delta": "`+d+`"`)); seen[f] != 1 {
			t.Fatalf("frame %s received %d times; all: %q", d, seen[f], order)
		}
	}
	a.close()
	x.sseEnded(1)
	x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"4"}]}`), 200,
		`{"run_id":"`+id+`","emitted":1,"buffered":0,"simulated":true}`)
	x.want(x.observe(id, `{"status":"completed"}`), 200, "")
	if got := b.quiet(200 * time.Millisecond); len(got) == 0 {
		t.Fatal("the remaining subscriber got no keepalive")
	}
}

// acceptance 119, 141: run.completed lists pending_steer after output and usage.
func TestSSECompletedPendingSteer(t *testing.T) {
	x := newH(t, emulator.Options{})
	x.freeze()
	id := x.start()
	x.want(x.observe(id, `{"status":"running"}`), 200, "")
	s, _, _ := x.sseOpen(id)
	for _, in := range []string{"a", "b"} {
		x.want(x.steerPost(id, `{"input":"`+in+`"}`), 200, "")
	}
	x.want(x.observe(id, `{"status":"completed","usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}`), 200,
		`{"object":"hermes.run","run_id":"`+id+`","status":"completed","updated_at":1700000000.0,"created_at":1700000000.0,"session_id":"`+id+`","model":"hermes-agent","last_event":"run.completed","output":"","usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3},"pending_steer":"a\nb"}`)
	steered := sseFrame(sseEnv("run.steered", id, `, "accepted": true`))
	s.want(steered, steered,
		sseFrame(sseEnv("run.completed", id, `, "output": "", "usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}, "pending_steer": "a\nb"`)),
		sseClosed)
	s.end()
}

// Issue 5 (a): a dashboard client subscribes at once and follows a whole run.
func TestSSEDashboardClient(t *testing.T) {
	x := newH(t, emulator.Options{SSESubscribeWait: 100 * time.Millisecond})
	x.freeze()
	r := x.post("/v1/runs", `{"input":"list my project"}`)
	x.want(r, 202, `{"run_id":"`+run1+`","status":"started","replayed":false}`)
	id := run1
	s, _, _ := x.sseOpen(id)
	x.want(x.observe(id, `{"status":"running"}`), 200, "")
	x.want(x.sseEvents(id, `{"events":[{"event":"tool.started","tool":"terminal","preview":"ls -la"}]}`), 200, "")
	x.advance("250")
	x.want(x.sseEvents(id, `{"events":[{"event":"tool.completed","tool":"terminal","duration":0.7639},{"event":"message.delta","delta":"Your project "}]}`), 200, "")
	x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"has "},{"event":"message.delta","delta":"3 files."}]}`), 200, "")
	x.advance("250")
	x.want(x.observe(id, `{"status":"completed","output":"Your project has 3 files.","usage":{"input_tokens":812,"output_tokens":21,"total_tokens":833}}`), 200, "")
	ts := func(s string) string { return `{"event": "` + s }
	s.want(
		sseFrame(ts(`tool.started", "run_id": "`+id+`", "timestamp": 1700000000.0, "tool": "terminal", "preview": "ls -la"}`)),
		sseFrame(ts(`tool.completed", "run_id": "`+id+`", "timestamp": 1700000000.25, "tool": "terminal", "duration": 0.764, "error": false}`)),
		sseFrame(ts(`message.delta", "run_id": "`+id+`", "timestamp": 1700000000.25, "delta": "Your project "}`)),
		sseFrame(ts(`message.delta", "run_id": "`+id+`", "timestamp": 1700000000.25, "delta": "has "}`)),
		sseFrame(ts(`message.delta", "run_id": "`+id+`", "timestamp": 1700000000.25, "delta": "3 files."}`)),
		sseFrame(ts(`run.completed", "run_id": "`+id+`", "timestamp": 1700000000.5, "output": "Your project has 3 files.", "usage": {"input_tokens": 812, "output_tokens": 21, "total_tokens": 833}}`)),
		sseClosed)
	s.end()
	x.sseNotFound(id)
	x.want(x.get("/v1/runs/"+id), 200, `{"object":"hermes.run","run_id":"`+id+`","status":"completed","updated_at":1700000000.5,"created_at":1700000000.0,"session_id":"`+id+`","model":"hermes-agent","last_event":"run.completed","output":"Your project has 3 files.","usage":{"input_tokens":812,"output_tokens":21,"total_tokens":833}}`)
	// The stream's journal entry: one 200 for the whole stream.
	j := x.get("/__admin/requests?operationId=RunEvents")
	var jr struct {
		Requests []struct {
			Status int
			Path   string
		}
	}
	if err := json.Unmarshal(j.Body, &jr); err != nil || len(jr.Requests) != 2 ||
		jr.Requests[0].Status != 200 || jr.Requests[1].Status != 404 || jr.Requests[0].Path != "/v1/runs/"+id+"/events" {
		t.Fatalf("journal: %s", j.Body)
	}
}

// Issue 5 (b): 1,000 subscribe/disconnect cycles leave no goroutine behind —
// neither the server's stream handlers nor waiting subscriptions. Each cycle
// needs a fresh run: the transport goes with its subscriber.
func TestSSENoGoroutineLeak(t *testing.T) {
	const cycles = 1000
	x := newH(t, emulator.Options{SSESubscribeWait: 10 * time.Millisecond, JournalSize: 3 * cycles})
	before := goleak.IgnoreCurrent()
	for i := range cycles {
		id := x.start()
		if i%2 == 1 { // half of the clients disconnect after a frame
			x.want(x.sseEvents(id, `{"events":[{"event":"message.delta","delta":"x"}]}`), 200, "")
		}
		s, _, _ := x.sseOpen(id)
		if i%2 == 1 {
			s.next()
		}
		s.close()
	}
	x.sseEnded(cycles)
	sseClient.CloseIdleConnections()
	http.DefaultClient.CloseIdleConnections()
	goleak.VerifyNone(t, before)
	// The first run's transport went with its subscriber.
	x.sseNotFound(run1)
}

// Issue 5 (c): the contract and SUPPORT.md list the three live operations as
// supported, with the statuses these tests see.
func TestSSESupportListed(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join("..", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	support, err := os.ReadFile(filepath.Join("..", "SUPPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{
		{"RunEvents", "| `RunEvents` | `GET` | `/v1/runs/{run_id}/events` | supported | 200, 401, 404, 500 |"},
		{"RunApproval", "| `RunApproval` | `POST` | `/v1/runs/{run_id}/approval` | supported | 200, 400, 401, 404, 409, 413, 500, 501 |"},
		{"RunSteer", "| `RunSteer` | `POST` | `/v1/runs/{run_id}/steer` | supported | 200, 400, 401, 404, 409, 413, 500, 501 |"},
	} {
		s := string(spec)
		i := strings.Index(s, "operationId: "+c[0]+"\n")
		if i < 0 {
			t.Fatalf("%s not in openapi.yaml", c[0])
		}
		rest := s[i:]
		if j := strings.Index(rest, "x-support:"); j < 0 || !strings.HasPrefix(rest[j:], "x-support: supported\n") {
			t.Fatalf("%s: x-support is not supported", c[0])
		}
		if !strings.Contains(string(support), c[1]) {
			t.Fatalf("SUPPORT.md lacks %s", c[1])
		}
	}
}

package record

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// The SSE splitter finds each event's data however the bytes are cut, joins
// multi-line data, accepts CRLF and lone CRs, skips comments, and skips an event whose data
// is longer than MaxBodyBytes whole — one line or many, never cutting its
// later lines off as an event of their own — while one of exactly
// MaxBodyBytes is kept.
func TestFrames(t *testing.T) {
	big := strings.Repeat("y", MaxBodyBytes+1)
	half := strings.Repeat("h", MaxBodyBytes/2)
	exact := strings.Repeat("e", MaxBodyBytes/2) + "\n" + strings.Repeat("e", MaxBodyBytes/2-1)
	stream := ": keepalive\n\ndata: {\"a\": 1}\n\ndata: one\r\ndata: two\r\n\r\n" +
		"data: " + big + "\n\n: stream closed\n\n" +
		"data: " + half + "\ndata: " + half + "\ndata: x\ndata: {\"tail\": 1}\n\n" +
		"data: " + half + "\r\ndata:" + half + "\r\n: note\r\ndata: {\"tail\": 2}\r\n\r\n" +
		"data: " + strings.ReplaceAll(exact, "\n", "\r\ndata: ") + "\r\n\r\n" +
		"event: x\ndata: last\n\n" +
		"data: " + half + "\rdata: " + half + "\rdata: {\"tail\": 3}\r\r" +
		"data: " + big + "\r\r" +
		"data: " + strings.ReplaceAll(exact, "\n", "\rdata: ") + "\r\r"
	for _, cut := range []int{1, 3, 7, 4096, 32 << 10, len(stream)} {
		var got []string
		over := 0
		f := &frames{now: func() float64 { return 0 }, onData: func(d []byte, _ float64) { got = append(got, string(d)) }, onOver: func(float64) { over++ }}
		for s := stream; s != ""; {
			n := min(cut, len(s))
			f.feed([]byte(s[:n]), 0)
			s = s[n:]
		}
		if want := `{"a": 1}|one` + "\n" + `two|` + exact + `|last|` + exact; strings.Join(got, "|") != want || over != 5 {
			t.Errorf("cut %d: %d events over the bound, want 5; got %.200q", cut, over, got)
		}
	}
}

// A tee reports the whole body only when it saw EOF within the bound.
func TestTee(t *testing.T) {
	for _, c := range []struct {
		body  string
		read  bool
		whole bool
	}{
		{"abc", true, true},
		{"abc", false, false},
		{strings.Repeat("z", MaxBodyBytes+1), true, false},
	} {
		var got []byte
		var whole bool
		calls := 0
		tee := newTee(io.NopCloser(strings.NewReader(c.body)), func(b []byte, w bool) { got, whole, calls = b, w, calls+1 }, true)
		if c.read {
			io.Copy(io.Discard, tee)
		}
		tee.Close()
		tee.Close()
		if calls != 1 || whole != c.whole || (whole && string(got) != c.body) {
			t.Errorf("%.10q read %v: calls %d whole %v", c.body, c.read, calls, whole)
		}
	}
}

// A request body's tee may be closed by net/http's Transport from another
// goroutine while it is read (go test -race finds the race without the tee's
// lock); what it passes on is what was read before the close.
func TestTeeReadWhileClosed(t *testing.T) {
	for range 50 {
		var got []byte
		tr := newTee(io.NopCloser(strings.NewReader(strings.Repeat("x", 1<<16))), func(body []byte, _ bool) { got = body }, true)
		done := make(chan struct{})
		go func() {
			defer close(done)
			p := make([]byte, 512)
			for {
				if _, err := tr.Read(p); err != nil {
					return
				}
			}
		}()
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
		<-done
		if len(got) > 1<<16 || strings.Trim(string(got), "x") != "" {
			t.Fatalf("passed on %d bytes that are not the body's", len(got))
		}
	}
}

// feedFrames feeds stream to a new splitter in the given reads (each a length;
// the rest of the stream is one last read), the i-th read at time i+1, and
// returns each event's data and the time it was reported at.
func feedFrames(stream string, reads ...int) (got []string, at []float64) {
	f := &frames{onData: func(d []byte, t float64) { got, at = append(got, string(d)), append(at, t) }}
	for i := 0; stream != ""; i++ {
		n := len(stream)
		if i < len(reads) {
			n = min(reads[i], n)
		}
		f.feed([]byte(stream[:n]), float64(i+1))
		stream = stream[n:]
	}
	return got, at
}

// A line ends at CRLF, LF or a lone CR (WHATWG HTML, "event stream
// interpretation"), in any mix; a CR ending one read and an LF starting the
// next are one line ending, not two (which would be a blank line and end the
// event early). Each stream is fed whole, byte by byte, and in two reads cut
// at every position.
func TestFramesLineEndings(t *testing.T) {
	for _, c := range []struct {
		name, stream string
		want         []string
	}{
		{"LF", "data: a\ndata: b\n\ndata: c\n\n", []string{"a\nb", "c"}},
		{"CRLF", "data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n", []string{"a\nb", "c"}},
		{"CR", "data: a\rdata: b\r\rdata: c\r\r", []string{"a\nb", "c"}},
		{"mixed", "data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\n\rdata: e\n\r", []string{"a\nb\nc", "d", "e"}},
		{"LF CR is two endings", "data: a\n\rdata: b\n\n", []string{"a", "b"}},
		{"CRLF then LF", "data: a\r\n\ndata: b\r\r\n", []string{"a", "b"}},
		{"CR comments and fields", ": keepalive\r\revent: x\rid: 1\rdata:a\r\r: stream closed\r\r", []string{"a"}},
		{"empty data", "data:\r\rdata: \r\r", []string{"", ""}},
		{"CR at end of stream", "data: a\r\r", []string{"a"}},
		{"unfinished event at end of stream", "data: a\r\rdata: b\r", []string{"a"}},
		{"CR CR LF", "data: a\r\r\ndata: b\r\r\n", []string{"a", "b"}},
	} {
		checkEvents(t, c.name, c.stream, c.want)
	}
}

// checkEvents feeds stream whole, byte by byte, and in two reads cut at every
// position, and checks the events' data each time.
func checkEvents(t *testing.T, name, stream string, want []string) {
	t.Helper()
	check := func(how string, reads ...int) {
		t.Helper()
		if got, _ := feedFrames(stream, reads...); strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("%s, %s: got %q, want %q", name, how, got, want)
		}
	}
	check("one read")
	ones := make([]int, len(stream))
	for i := range ones {
		ones[i] = 1
	}
	check("byte by byte", ones...)
	for i := 1; i < len(stream); i++ {
		check(fmt.Sprintf("cut at %d", i), i)
	}
}

// An event is reported at the read that brought its last line ending: a lone
// CR ends it at once, without waiting for a byte that tells it from a CRLF;
// the LF of a CRLF cut after its CR ends nothing more.
func TestFramesLineEndingTime(t *testing.T) {
	for _, c := range []struct {
		stream string
		reads  []int
		want   []float64
	}{
		{"data: a\r\r", []int{8}, []float64{2}},
		{"data: a\r\r", []int{9}, []float64{1}},
		{"data: a\r\r\ndata: b\r\n\r\n", []int{9, 1}, []float64{1, 3}},
		{"data: a\r\ndata: b\r\n\r\n", []int{8, 10}, []float64{3}},
	} {
		if _, at := feedFrames(c.stream, c.reads...); fmt.Sprint(at) != fmt.Sprint(c.want) {
			t.Errorf("%q in reads %v: events at %v, want %v", c.stream, c.reads, at, c.want)
		}
	}
}

// Field rules of WHATWG HTML's "event stream interpretation": a line without a
// colon is a field with an empty value ("data" alone adds an empty data line),
// only a field named exactly "data" is data, one space after the colon is
// dropped, and a byte order mark is skipped at the start of the stream only.
func TestFramesFields(t *testing.T) {
	for _, c := range []struct {
		name, stream string
		want         []string
	}{
		{"data without a colon", "data\n\ndata\ndata: a\ndata\n\n", []string{"", "\na\n"}},
		{"one space dropped", "data:  a\ndata:b\n\n", []string{" a\nb"}},
		{"other names", "data : a\ndatax: b\nDATA: c\n id: 1\nevent: data\n\n", nil},
		{"byte order mark at the start", "\ufeffdata: a\n\n", []string{"a"}},
		{"byte order mark on a blank first line", "\ufeff\ndata: a\n\n", []string{"a"}},
		{"byte order mark later", "data: a\n\n\ufeffdata: b\n\ndata: c\n\ufeffdata: d\n\n", []string{"a", "c"}},
		{"two byte order marks", "\ufeff\ufeffdata: a\n\n", nil},
	} {
		checkEvents(t, c.name, c.stream, c.want)
	}
}

// Through the proxy, an upstream whose SSE lines end in CRLF or in a lone CR
// is recorded as one whose lines end in LF: the same scenario, every event in
// it, and the stream crosses unchanged.
func TestRecordedLineEndings(t *testing.T) {
	frames := []string{
		`data: {"event": "message.delta", "run_id": "run_1", "timestamp": 1700000000.5, "delta": "a"}`,
		`data: {"event": "tool.started", "run_id": "run_1", "timestamp": 1700000001.0, "tool": "terminal", "preview": "ls"}`,
		`data: {"event": "run.completed", "run_id": "run_1", "timestamp": 1700000002.0, "output": "done", "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}`,
		`: stream closed`,
	}
	record := func(eol string) string {
		stream := strings.Join(frames, eol+eol) + eol + eol
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			io.Copy(io.Discard, req.Body)
			switch req.URL.Path {
			case "/v1/runs":
				w.WriteHeader(202)
				io.WriteString(w, `{"run_id":"run_1","status":"queued","replayed":false}`)
			case "/v1/runs/run_1/events":
				w.Header().Set("Content-Type", "text/event-stream")
				for _, b := range []byte(stream) { // a read may end between a CR and its LF
					w.Write([]byte{b})
					w.(http.Flusher).Flush()
				}
			default:
				w.WriteHeader(404)
			}
		}))
		defer up.Close()
		r, err := New(Options{Upstream: up.URL, Out: filepath.Join(t.TempDir(), "r.yaml")})
		if err != nil {
			t.Fatal(err)
		}
		px := httptest.NewServer(r)
		defer px.Close()
		send(t, px.URL, "POST", "/v1/runs", `{"input":"go"}`)
		if a := send(t, px.URL, "GET", "/v1/runs/run_1/events", ""); a.body != stream {
			t.Fatalf("%q: the stream did not cross unchanged: %q", eol, a.body)
		}
		data, _ := r.Scenarios()
		// From the scenario on: its comment holds the admission's arrival time.
		_, body, _ := strings.Cut(string(data), "  - name:")
		return body
	}
	lf := record("\n")
	if !strings.Contains(lf, `{"event": "tool.started", "tool": "terminal", "preview": "ls"}`) || !strings.Contains(lf, `observe: {"status": "completed"`) {
		t.Fatalf("LF stream: the scenario misses events:\n%s", lf)
	}
	for _, eol := range []string{"\r\n", "\r"} {
		if got := record(eol); got != lf {
			t.Errorf("%q: scenario\n%s\nwant, as with LF:\n%s", eol, got, lf)
		}
	}
}

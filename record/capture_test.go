package record

import (
	"io"
	"strings"
	"testing"
)

// The SSE splitter finds each event's data however the bytes are cut, joins
// multi-line data, accepts CRLF, skips comments, and skips an event whose data
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
		"event: x\ndata: last\n\n"
	for _, cut := range []int{1, 3, 7, 4096, 32 << 10, len(stream)} {
		var got []string
		over := 0
		f := &frames{now: func() float64 { return 0 }, onData: func(d []byte, _ float64) { got = append(got, string(d)) }, onOver: func(float64) { over++ }}
		for s := stream; s != ""; {
			n := min(cut, len(s))
			f.feed([]byte(s[:n]), 0)
			s = s[n:]
		}
		if want := `{"a": 1}|one` + "\n" + `two|` + exact + `|last`; strings.Join(got, "|") != want || over != 3 {
			t.Errorf("cut %d: %d events over the bound, want 3; got %.200q", cut, over, got)
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

package handlers

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestBodiesRead(t *testing.T) {
	b := NewBodies(10, 0, time.Second)
	tests := []struct {
		name    string
		body    string
		length  int64 // -1 = undeclared (chunked)
		want    string
		err     error
		maxRead int // most bytes the reader may consume
	}{
		{"declared", `{"a":1}`, 7, `{"a":1}`, nil, 7},
		{"undeclared", `{"a":1}`, -1, `{"a":1}`, nil, 7},
		{"at the limit", "0123456789", 10, "0123456789", nil, 10},
		{"undeclared at the limit", "0123456789", -1, "0123456789", nil, 10},
		{"declared over the limit: nothing read", "0123456789x", 11, "", ErrBodyTooLarge, 0},
		{"undeclared over the limit", strings.Repeat("x", 200_000), -1, "", ErrBodyTooLarge, 200_000},
		{"truncated", "01234", 10, "", ErrBodyIncomplete, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &countingReader{r: strings.NewReader(tt.body)}
			r := httptest.NewRequest("POST", "/", src)
			r.ContentLength = tt.length
			w := httptest.NewRecorder()
			got, release, err := b.Read(w, r)
			defer release()
			if !errors.Is(err, tt.err) || string(got) != tt.want {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
			if src.n > tt.maxRead {
				t.Fatalf("read %d bytes, want at most %d", src.n, tt.maxRead)
			}
			if close := w.Header().Get("Connection"); (tt.err != nil) != (close == "close") {
				t.Fatalf("Connection %q with error %v", close, tt.err)
			}
		})
	}
}

// The in-flight bound (hardening H5): while one body holds most of it, another
// waits the read timeout and gets ErrBodyBusy; once the first is released the
// next one is read.
func TestBodiesInflight(t *testing.T) {
	b := NewBodies(1000, 1000, 100*time.Millisecond)
	pr, pw := io.Pipe()
	held := make(chan error, 1)
	go func() {
		r := httptest.NewRequest("POST", "/", pr)
		r.ContentLength = 800
		// A recorder has no read deadline: this read stalls until pw closes.
		_, release, err := b.Read(httptest.NewRecorder(), r)
		release()
		held <- err
	}()
	for b.sem.TryAcquire(201) { // wait until the stalled body holds its 800 bytes
		b.sem.Release(201)
		time.Sleep(time.Millisecond)
	}
	second := func() (*httptest.ResponseRecorder, error) {
		r := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", 500)))
		w := httptest.NewRecorder()
		_, release, err := b.Read(w, r)
		release()
		return w, err
	}
	began := time.Now()
	w, err := second()
	if !errors.Is(err, ErrBodyBusy) || w.Header().Get("Connection") != "close" {
		t.Fatalf("second body while the first holds 800 of 1000: %v (Connection %q), want ErrBodyBusy", err, w.Header().Get("Connection"))
	}
	if d := time.Since(began); d < 90*time.Millisecond {
		t.Fatalf("gave up after %v, want the read timeout (100ms)", d)
	}
	pw.Close()
	if err := <-held; !errors.Is(err, ErrBodyIncomplete) {
		t.Fatalf("stalled body: %v, want ErrBodyIncomplete", err)
	}
	if _, err := second(); err != nil {
		t.Fatalf("after the release: %v", err)
	}
	if !b.sem.TryAcquire(1000) {
		t.Fatal("bytes still held after every release")
	}
}

package handlers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"golang.org/x/sync/semaphore"
)

// Errors of Bodies.Read. Each caller answers them in its own envelope: the
// vendor pipeline with the Hermes errors (runs-api §3 step 8), the control
// plane with its admin ones (controls §1).
var (
	// ErrBodyTooLarge: the body is longer than the limit (declared or read).
	ErrBodyTooLarge = errors.New("request body too large")
	// ErrBodyBusy: the in-flight bound stayed full for the whole read timeout
	// (hardening H5); nothing of the body was kept.
	ErrBodyBusy = errors.New("request body backlog full")
	// ErrBodyIncomplete: the body did not arrive in full (timeout, reset,
	// truncated). The answer closes the connection: the rest is unknown.
	ErrBodyIncomplete = errors.New("request body incomplete")
)

// chunk is the step in which a body of undeclared length is admitted to the
// in-flight bound as it arrives.
const chunk = 64 << 10

// Bodies reads request bodies for both planes (one reader, hardening H2 step
// 8b): each body at most max bytes, each read within timeout (H4), and at most
// inflight bytes of bodies held by all requests at once (H5) — a body waits its
// turn up to timeout, then ErrBodyBusy. A declared Content-Length is admitted
// whole before the read; an undeclared length (chunked) is admitted 64 KiB at
// a time as it arrives. Safe for concurrent use.
type Bodies struct {
	max, inflight int64
	timeout       time.Duration
	sem           *semaphore.Weighted
}

// NewBodies returns a reader of bodies of at most max bytes, read within
// timeout, with at most inflight bytes held at once (inflight <= 0: no bound).
func NewBodies(max, inflight int64, timeout time.Duration) *Bodies {
	b := &Bodies{max: max, inflight: inflight, timeout: timeout}
	if inflight > 0 {
		b.sem = semaphore.NewWeighted(inflight)
	}
	return b
}

// Max is the body limit in bytes.
func (b *Bodies) Max() int64 { return b.max }

// Timeout is the read timeout.
func (b *Bodies) Timeout() time.Duration { return b.timeout }

// Declared reports whether r declares a Content-Length over the limit: such a
// request is answered 413 without reading anything (H2 step 8a).
func (b *Bodies) Declared(r *http.Request) bool { return r.ContentLength > b.max }

// Read reads r's body in full under the bounds. The caller must call release
// once it no longer holds the bytes (release is never nil). Errors:
// ErrBodyTooLarge, ErrBodyBusy, ErrBodyIncomplete. Every error sets
// Connection: close, as the rest of the body is unread (a declared length over
// the limit reads nothing). A writer without read deadlines (a recorder) reads
// without one.
func (b *Bodies) Read(w http.ResponseWriter, r *http.Request) (body []byte, release func(), err error) {
	rd := &bodyRead{b: b, r: r, deadline: time.Now().Add(b.timeout)}
	if b.Declared(r) {
		b.Unread(w, r)
		return nil, rd.release, ErrBodyTooLarge
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, rd.release, nil
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(rd.deadline)
	if r.ContentLength >= 0 {
		body, err = rd.declared()
	} else {
		body, err = rd.chunked()
	}
	if err != nil {
		rd.release()
		endReads(w)
		return nil, rd.release, err
	}
	_ = rc.SetReadDeadline(time.Time{})
	return body, rd.release, nil
}

// bodyRead is one body being read: the bytes it holds of the in-flight bound.
type bodyRead struct {
	b        *Bodies
	r        *http.Request
	deadline time.Time
	held     int64
}

func (rd *bodyRead) release() {
	if rd.held > 0 {
		rd.b.sem.Release(rd.held)
		rd.held = 0
	}
}

// admit takes n more bytes of the in-flight bound, waiting up to the deadline.
func (rd *bodyRead) admit(n int64) error {
	if n = min(n, rd.b.inflight-rd.held); rd.b.sem == nil || n <= 0 {
		return nil // one body alone may always be read up to the limit
	}
	if rd.b.sem.TryAcquire(n) { // the common case: no wait, no timer
		rd.held += n
		return nil
	}
	ctx, cancel := context.WithDeadline(rd.r.Context(), rd.deadline)
	defer cancel()
	if rd.b.sem.Acquire(ctx, n) != nil {
		if rd.r.Context().Err() != nil {
			return ErrBodyIncomplete
		}
		return ErrBodyBusy
	}
	rd.held += n
	return nil
}

// declared reads a body of a declared length, admitted whole first.
func (rd *bodyRead) declared() ([]byte, error) {
	if err := rd.admit(rd.r.ContentLength); err != nil {
		return nil, err
	}
	buf := make([]byte, rd.r.ContentLength)
	if _, err := io.ReadFull(rd.r.Body, buf); err != nil {
		return nil, ErrBodyIncomplete
	}
	return buf, nil
}

// chunked reads a body of undeclared length, admitted chunk by chunk.
func (rd *bodyRead) chunked() ([]byte, error) {
	var buf []byte
	for {
		if err := rd.admit(chunk); err != nil {
			return nil, err
		}
		n, err := io.ReadFull(rd.r.Body, grow(&buf, chunk))
		buf = buf[:len(buf)-chunk+n]
		switch {
		case int64(len(buf)) > rd.b.max:
			return nil, ErrBodyTooLarge
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return buf, nil
		case err != nil:
			return nil, ErrBodyIncomplete
		}
	}
}

// grow extends *buf by n bytes and returns the new tail.
func grow(buf *[]byte, n int) []byte {
	l := len(*buf)
	if cap(*buf)-l < n {
		nb := make([]byte, l, 2*cap(*buf)+n)
		copy(nb, *buf)
		*buf = nb
	}
	*buf = (*buf)[:l+n]
	return (*buf)[l:]
}

// Unread answers a request whose body the pipeline does not read (an early
// answer: 401, 404, 413, a fault, an admin error) through endReads, so that
// net/http neither waits for the body to discard it — it may never arrive
// (hardening H4) — nor reads a byte of it (H2: an unauthenticated request
// reads no body). A request without a body keeps its connection.
func (b *Bodies) Unread(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	endReads(w)
}

// endReads answers with Connection: close and makes every further read of the
// connection fail at once. After the handler, net/http drains an unread body
// (up to 256 KiB, without a deadline of its own) before it closes the
// connection: a body that never arrives would hold the connection, its
// goroutine and buffers for ever after the answer (hardening H4). The answer
// is still written in full; then the connection closes.
func endReads(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Unix(1, 0))
}

// Discard reads and drops the body of a request whose operation takes none
// (GET, HEAD: runs-api §3 step 8), within the read timeout, then clears the
// deadline so that a stream answering the request keeps none. A body that
// does not arrive, or is longer than the body limit (chunked: its length is
// only known by reading), ends the connection after the answer (endReads).
func (b *Bodies) Discard(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(b.timeout))
	n, err := io.Copy(io.Discard, io.LimitReader(r.Body, b.max+1))
	if err != nil || n > b.max {
		endReads(w)
		return
	}
	_ = rc.SetReadDeadline(time.Time{})
}

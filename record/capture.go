package record

import (
	"bytes"
	"io"
	"sync"
)

// tee passes a body through unchanged while keeping a copy of its first
// MaxBodyBytes bytes; done runs once, with the copy, at Close — or already at
// EOF unless atClose (whole reports whether the copy is the complete body). A
// response tee learns at Close, after the proxy has written and flushed the
// last bytes, so learning adds nothing to what the client waits for.
type tee struct {
	rc      io.ReadCloser
	once    sync.Once
	done    func(body []byte, whole bool)
	atClose bool

	// mu guards buf, over and eof: net/http's Transport may close a request
	// body from another goroutine than the one reading it.
	mu   sync.Mutex
	buf  bytes.Buffer
	over bool
	eof  bool
}

func newTee(rc io.ReadCloser, done func(body []byte, whole bool), atClose bool) *tee {
	return &tee{rc: rc, done: done, atClose: atClose}
}

func (t *tee) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.mu.Lock()
	if n > 0 && !t.over {
		if t.buf.Len()+n > MaxBodyBytes {
			t.over = true
			t.buf = bytes.Buffer{}
		} else {
			t.buf.Write(p[:n])
		}
	}
	if err == io.EOF {
		t.eof = true
	}
	t.mu.Unlock()
	if err == io.EOF && !t.atClose {
		t.finish()
	}
	return n, err
}

func (t *tee) Close() error {
	err := t.rc.Close()
	t.finish()
	return err
}

func (t *tee) finish() {
	t.once.Do(func() {
		t.mu.Lock()
		body, whole := bytes.Clone(t.buf.Bytes()), t.eof && !t.over
		t.mu.Unlock()
		t.done(body, whole)
	})
}

// frames passes an SSE body through unchanged while splitting it into events
// (blank-line separated; the data lines joined by "\n"), calling onData with
// each event's data and the time its last byte arrived. Comments
// (": keepalive", ": stream closed") carry no data and are skipped. An event
// longer than MaxBodyBytes is dropped.
type frames struct {
	rc     io.ReadCloser
	now    func() float64
	onData func(data []byte, at float64)
	line   []byte   // the current line so far
	data   [][]byte // the data lines of the current event
	size   int
	over   bool
}

func (f *frames) Read(p []byte) (int, error) {
	n, err := f.rc.Read(p)
	if n > 0 {
		f.feed(p[:n], f.now())
	}
	return n, err
}

func (f *frames) Close() error { return f.rc.Close() }

// feed reads bytes that arrived at time at.
func (f *frames) feed(p []byte, at float64) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			f.grow(p)
			return
		}
		f.grow(p[:i])
		p = p[i+1:]
		f.endLine(at)
	}
}

func (f *frames) grow(b []byte) {
	if f.size+len(b) > MaxBodyBytes {
		f.over = true
	}
	if !f.over {
		f.line = append(f.line, b...)
		f.size += len(b)
	}
}

// endLine handles one complete line (without its "\n"; a trailing "\r" is
// removed as SSE allows CRLF).
func (f *frames) endLine(at float64) {
	line := bytes.TrimSuffix(f.line, []byte{'\r'})
	f.line = f.line[:0]
	switch {
	case len(line) == 0:
		if len(f.data) > 0 && !f.over {
			f.onData(bytes.Join(f.data, []byte{'\n'}), at)
		}
		f.data, f.size, f.over = nil, 0, false
	case bytes.HasPrefix(line, []byte("data:")):
		v := bytes.TrimPrefix(line[5:], []byte{' '})
		f.data = append(f.data, append([]byte(nil), v...))
	}
}

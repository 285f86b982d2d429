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
// (blank-line separated; the data lines joined by "\n"; a line ends at CRLF,
// LF or a lone CR, as WHATWG HTML's "event stream interpretation" allows),
// calling onData with each event's data and the time its last byte arrived. Comments
// (": keepalive", ": stream closed") and other fields carry no data and are
// skipped. An event whose data is longer than MaxBodyBytes is still one event:
// it is skipped whole at its blank line (onOver, when set, is called once),
// never cut into frames. What is held stays within MaxBodyBytes plus a line
// prefix, however long a line or an event is.
type frames struct {
	rc     io.ReadCloser
	now    func() float64
	onData func(data []byte, at float64)
	onOver func(at float64)
	line   []byte   // the current line so far: its first lineRoom() bytes
	n      int      // the current line's length, every byte counted
	data   [][]byte // the data lines of the current event (none once over)
	lines  int      // how many data lines the current event has
	size   int      // the length of the current event's data, joined
	over   bool     // the current event's data is longer than MaxBodyBytes
	cr     bool     // the last byte fed was a CR that ended a line: an LF next is part of it
	begun  bool     // a line has ended: a byte order mark now is no longer the stream's
}

// bom is the byte order mark a stream may begin with, which SSE skips.
var bom = []byte("\ufeff")

// linePad is what a line holds beyond its data: "data: ", and a byte order
// mark before the first.
const linePad = len("\ufeffdata: ")

func (f *frames) Read(p []byte) (int, error) {
	n, err := f.rc.Read(p)
	if n > 0 {
		f.feed(p[:n], f.now())
	}
	return n, err
}

func (f *frames) Close() error { return f.rc.Close() }

// feed reads bytes that arrived at time at. A line ends at LF, at CRLF, or at
// a CR that no LF follows; a CR ends its line at once (an event it ends is
// reported at this read), and when it is the last byte of p, an LF that starts
// the next read is skipped as the rest of its CRLF.
func (f *frames) feed(p []byte, at float64) {
	if len(p) == 0 {
		return
	}
	if f.cr && p[0] == '\n' {
		p = p[1:]
	}
	f.cr = false
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			f.grow(p)
			return
		}
		f.grow(p[:i])
		n := i + 1 // the line and its ending
		if p[i] == '\r' {
			switch {
			case n == len(p):
				f.cr = true
			case p[n] == '\n':
				n++
			}
		}
		p = p[n:]
		f.endLine(at)
	}
}

// lineRoom is how much of a line is kept: enough for the data the event can
// still take, and always enough to tell a blank line and a field's name.
func (f *frames) lineRoom() int {
	return max(MaxBodyBytes-f.size, 0) + linePad
}

func (f *frames) grow(b []byte) {
	f.n += len(b)
	if room := f.lineRoom() - len(f.line); room > 0 {
		f.line = append(f.line, b[:min(room, len(b))]...)
	}
}

// endLine handles one complete line (without its line ending) by the field
// rules of WHATWG HTML's "event stream interpretation". A line longer than what
// was kept of it is not blank, and when it is a data line its event is over
// the bound.
func (f *frames) endLine(at float64) {
	line, whole := f.line, f.n == len(f.line)
	f.line, f.n = f.line[:0], 0
	if !f.begun {
		f.begun, line = true, bytes.TrimPrefix(line, bom)
	}
	switch {
	case whole && len(line) == 0:
		switch {
		case f.over:
			if f.onOver != nil {
				f.onOver(at)
			}
		case f.lines > 0:
			f.onData(bytes.Join(f.data, []byte{'\n'}), at)
		}
		f.data, f.lines, f.size, f.over = nil, 0, 0, false
	case bytes.HasPrefix(line, []byte("data:")) || string(line) == "data":
		// A line without a colon is a field with an empty value.
		v := bytes.TrimPrefix(bytes.TrimPrefix(line[4:], []byte{':'}), []byte{' '})
		if f.lines > 0 {
			f.size++ // the "\n" joining it to the previous line
		}
		f.lines++
		f.size += len(v)
		if !whole || f.size > MaxBodyBytes {
			f.over, f.data = true, nil
		}
		if !f.over {
			f.data = append(f.data, bytes.Clone(v))
		}
	}
}

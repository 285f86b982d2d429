package handlers

import (
	"net/http"
	"sync"
	"time"
)

// WriteCut cuts a stream's write in progress when the stream is ended under
// its handler (RunEvents: the transport is destroyed; GET /__admin/stream: the
// subscriber is dropped or the hub closes). A client that does not read blocks
// a write once its socket buffer is full, and a stream has no write deadline,
// so without the cut the handler — its goroutine, connection and the frames it
// holds — would wait for the client for ever, and shutdown for its grace.
//
// Only a write in progress is cut: a handler between writes sees the end
// itself and returns cleanly, leaving its connection usable. The abort and
// the handler share the cut under mu: the deadline is set only while a write
// is in progress, and a handler that ends between writes clears any deadline
// set for a write that completed, so its stream ends cleanly.
type WriteCut struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	mu      sync.Mutex
	busy    bool // a write is in progress
	stopped bool // the handler ended between writes
}

// NewWriteCut returns the cut of the stream written to w.
func NewWriteCut(w http.ResponseWriter) *WriteCut {
	return &WriteCut{w: w, rc: http.NewResponseController(w)}
}

// Write writes frames and flushes them as one write in progress, which Abort
// cuts; false when the client is gone or the write was cut.
func (c *WriteCut) Write(frames ...[]byte) bool {
	c.writing(true)
	defer c.writing(false)
	for _, f := range frames {
		if _, err := c.w.Write(f); err != nil {
			return false
		}
	}
	_ = c.rc.Flush()
	return true
}

func (c *WriteCut) writing(on bool) {
	c.mu.Lock()
	c.busy = on
	c.mu.Unlock()
}

// Watch cuts the write in progress when ended is closed, until the returned
// stop is called (the handler returns).
func (c *WriteCut) Watch(ended <-chan struct{}) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ended:
			c.Abort()
		case <-done:
		}
	}()
	return func() { close(done) }
}

// Abort cuts the write in progress, if any. Safe from another goroutine.
func (c *WriteCut) Abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy && !c.stopped {
		_ = c.rc.SetWriteDeadline(time.Now())
	}
}

// End clears a deadline set for a write that completed anyway: the handler
// ends between writes, and its stream ends cleanly.
func (c *WriteCut) End() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	_ = c.rc.SetWriteDeadline(time.Time{})
}

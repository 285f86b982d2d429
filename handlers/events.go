package handlers

import (
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hermes-emulator/hermes-emulator/gen"
	"github.com/hermes-emulator/hermes-emulator/transport"
)

// RunEvents is GET /v1/runs/{run_id}/events (runs-api §6.4): a single-consumer
// SSE stream written frame by frame, flushed at once.
func (h *Handlers) RunEvents(c echo.Context, runID gen.RunIdPath, _ gen.RunEventsParams) error {
	call := CallOf(c)
	ctx := c.Request().Context()
	sub, err := h.GW.Subscribe(ctx, call.Target, runID, call.Head)
	if err != nil {
		return err
	}
	w := c.Response()
	hdr := w.Header()
	for _, sh := range SecurityHeaders {
		hdr.Del(sh[0])
	}
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	w.Flush()
	if sub == nil { // HEAD: checks only, the transport is kept (wire.md §6)
		return nil
	}
	defer sub.Close()
	// A client that does not read blocks a write once its socket buffer is
	// full; when the transport is destroyed under it (its buffer passed
	// --sse-buffer-bytes, hardening H5; reset, checkout, restart) the write
	// gives up and the stream closes.
	// Only a write in progress is cut: a handler between writes sees the
	// abort from Next and ends cleanly, leaving its connection usable.
	// The abort and the handler share cut under mu: the deadline is set only
	// while a write is in progress, and a handler that ends between writes
	// clears any deadline set for a write that completed, so its stream ends
	// cleanly.
	cut := &writeCut{rc: http.NewResponseController(w)}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-sub.Aborted():
			cut.abort()
		case <-done:
		}
	}()
	idle := h.Opts.Keepalive
	if idle <= 0 {
		idle = 30 * time.Second
	}
	for {
		frame, next := sub.Next(ctx, idle)
		switch next {
		case transport.Frame:
		case transport.Keepalive:
			frame = []byte(": keepalive\n\n")
		case transport.Closed:
			_, _ = w.Write([]byte(": stream closed\n\n"))
			w.Flush()
			return nil
		default: // Aborted, Gone
			cut.end()
			return nil
		}
		cut.writing(true)
		_, err := w.Write(frame)
		if err == nil {
			w.Flush()
		}
		cut.writing(false)
		if err != nil {
			return nil
		}
	}
}

// writeCut cuts a stream's write in progress when its transport is destroyed
// (see RunEvents).
type writeCut struct {
	rc      *http.ResponseController
	mu      sync.Mutex
	busy    bool // a write is in progress
	stopped bool // the handler ended between writes
}

func (c *writeCut) writing(on bool) {
	c.mu.Lock()
	c.busy = on
	c.mu.Unlock()
}

// abort cuts the write in progress, if any.
func (c *writeCut) abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy && !c.stopped {
		_ = c.rc.SetWriteDeadline(time.Now())
	}
}

// end clears a deadline set for a write that completed anyway: the handler
// ends between writes, and its stream ends cleanly.
func (c *writeCut) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	_ = c.rc.SetWriteDeadline(time.Time{})
}

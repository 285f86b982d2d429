package handlers

import (
	"net/http"
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
	// gives up and the stream closes (WriteCut).
	cut := NewWriteCut(w)
	defer cut.Watch(sub.Aborted())()
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
		case transport.Closed: // a write like the frames': cut when aborted meanwhile
			if cut.Write([]byte(": stream closed\n\n")) {
				cut.End() // it completed: the stream ends cleanly
			}
			return nil
		default: // Aborted, Gone
			cut.End()
			return nil
		}
		if !cut.Write(frame) {
			return nil
		}
	}
}

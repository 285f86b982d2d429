package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hermes-emulator/hermes-emulator/gateway"
	"github.com/hermes-emulator/hermes-emulator/gen"
)

// SecurityHeaders are the upstream security headers of provider responses
// (wire.md §8); the SSE stream carries none of them.
var SecurityHeaders = [][2]string{
	{"Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"},
	{"Permissions-Policy", "camera=(), microphone=(), geolocation=()"},
	{"Strict-Transport-Security", "max-age=31536000; includeSubDomains"},
	{"X-Content-Type-Options", "nosniff"},
	{"X-Frame-Options", "DENY"},
	{"X-Xss-Protection", "0"},
	{"Referrer-Policy", "no-referrer"},
}

// securityHeaderValues holds SecurityHeaders as header values, built once.
var securityHeaderValues = func() [][]string {
	vs := make([][]string, len(SecurityHeaders))
	for i, sh := range SecurityHeaders {
		vs[i] = []string{sh[1]}
	}
	return vs
}()

// SetSecurityHeaders sets SecurityHeaders on h. The names are canonical
// already and the values are shared (net/http never writes into a value), so
// a response pays neither canonicalisation nor an allocation for them.
func SetSecurityHeaders(h http.Header) {
	for i, sh := range SecurityHeaders {
		h[sh[0]] = securityHeaderValues[i]
	}
}

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
	idle := h.Opts.Keepalive
	if idle <= 0 {
		idle = 30 * time.Second
	}
	for {
		frame, next := sub.Next(ctx, idle)
		switch next {
		case gateway.Frame:
		case gateway.Keepalive:
			frame = []byte(": keepalive\n\n")
		case gateway.Closed:
			_, _ = w.Write([]byte(": stream closed\n\n"))
			w.Flush()
			return nil
		default: // Aborted, Gone
			return nil
		}
		if _, err := w.Write(frame); err != nil {
			return nil
		}
		w.Flush()
	}
}

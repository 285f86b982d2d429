package emulator

import (
	"bufio"
	"net"
	"net/http"
)

// headWriter discards the body of every answer to a HEAD request (wire.md §6:
// HEAD is answered without a body), including errors written before the
// operation runs (404 page not found, runtime 400/409, fault responses). The
// net/http server already drops such bodies on a socket; this makes Handler()
// callers see the same. Flush, Hijack (dropped connections) and read deadlines
// reach the wrapped writer.
type headWriter struct{ http.ResponseWriter }

func (h headWriter) Write(b []byte) (int, error) { return len(b), nil }

func (h headWriter) Flush() { _ = http.NewResponseController(h.ResponseWriter).Flush() }

func (h headWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(h.ResponseWriter).Hijack()
}

func (h headWriter) Unwrap() http.ResponseWriter { return h.ResponseWriter }

package emulator

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"time"
)

// answerWriter gives every answer but a stream Options.WriteTimeout from its
// first byte to reach the client: a client that never reads a large answer
// would otherwise hold its connection, a goroutine and the answer's unsent
// bytes for ever (the connection is closed instead). A stream
// (text/event-stream: RunEvents, GET /__admin/stream) has no deadline — it
// writes for as long as it lives — and clears one an earlier answer on the
// same connection left. Flush, Hijack and the deadlines of
// http.ResponseController reach the wrapped writer.
type answerWriter struct {
	http.ResponseWriter
	timeout time.Duration
	started bool
}

// newAnswerWriter wraps w, and clears the deadline the previous answer on the
// connection set: until this answer starts, net/http's own writes (a "100
// Continue" once the body is read, after a fault delay perhaps) have none.
func newAnswerWriter(w http.ResponseWriter, timeout time.Duration) *answerWriter {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	return &answerWriter{ResponseWriter: w, timeout: timeout}
}

func (a *answerWriter) WriteHeader(code int) {
	a.start()
	a.ResponseWriter.WriteHeader(code)
}

func (a *answerWriter) Write(b []byte) (int, error) {
	a.start()
	return a.ResponseWriter.Write(b)
}

// start sets the write deadline once, when the answer starts. Without a
// connection (Handler() in-process) there is none to set.
func (a *answerWriter) start() {
	if a.started {
		return
	}
	a.started = true
	deadline := time.Now().Add(a.timeout)
	if strings.HasPrefix(a.Header().Get("Content-Type"), "text/event-stream") {
		deadline = time.Time{}
	}
	_ = http.NewResponseController(a.ResponseWriter).SetWriteDeadline(deadline)
}

func (a *answerWriter) Flush() { _ = http.NewResponseController(a.ResponseWriter).Flush() }

func (a *answerWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(a.ResponseWriter).Hijack()
}

func (a *answerWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

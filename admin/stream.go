package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hermes-emulator/hermes-emulator/gateway"
	genadmin "github.com/hermes-emulator/hermes-emulator/gen/admin"
	"github.com/hermes-emulator/hermes-emulator/handlers"
	"github.com/hermes-emulator/hermes-emulator/runs"
)

// GET /__admin/stream: Server-Sent Events of control-plane changes
// (admin.yaml StreamEvent). The Hub fans each change out to its subscribers;
// every subscriber has its own buffer of unsent frames, bounded (H5): a
// subscriber that does not read is dropped — its stream ends — once the buffer
// holds more than the bound.

// DefaultStreamBuffer is the bound of a subscriber's unsent frames (8 MiB).
const DefaultStreamBuffer = 8 << 20

// MaxStreamSubscribers is the most control-plane streams open at once: each
// may hold up to its buffer's bound of unsent frames, so their number is
// bounded too (H5). One more is refused with 503.
const MaxStreamSubscribers = 64

// streamKeepalive is the idle time before a ": keepalive" comment; a variable
// so that tests can shorten it.
var streamKeepalive = 15 * time.Second

// Hub is the change stream: publishers (the gateway's OnChange, called under
// the gateway lock and carrying clock moves too, and the pipeline's fault
// step) call its methods; GET /__admin/stream subscribes. Safe for concurrent
// use; publishing never blocks on a subscriber and never calls out.
type Hub struct {
	mu     sync.Mutex
	max    int
	subs   map[*subscriber]struct{}
	closed bool
	n      atomic.Int32 // len(subs): without subscribers nothing is rendered
}

// subscriber is one connected stream.
type subscriber struct {
	ns      string // the admin namespace
	all     bool   // ?all=1: every namespace
	frames  [][]byte
	size    int
	dropped bool          // the buffer overflowed: the stream ends
	wake    chan struct{} // capacity 1: frames or the end are waiting
	gone    chan struct{} // closed when dropped or the hub closes: a write in progress is cut
}

// NewHub returns a hub whose subscribers hold at most maxBytes of unsent
// frames (0 = DefaultStreamBuffer).
func NewHub(maxBytes int) *Hub {
	if maxBytes <= 0 {
		maxBytes = DefaultStreamBuffer
	}
	return &Hub{max: maxBytes, subs: map[*subscriber]struct{}{}}
}

// Listening reports whether any stream is connected: without one, changes need
// not be queued for the hub at all (gateway.Options.Listening).
func (h *Hub) Listening() bool { return h.n.Load() > 0 }

// Change publishes a gateway change (gateway.Options.OnChange); it never
// blocks (a subscriber whose buffer is full is dropped).
func (h *Hub) Change(c gateway.Change) {
	if h.n.Load() == 0 {
		return
	}
	if c.Kind == "clock" { // the clock is global: every subscriber hears it
		h.publish("", "clock", newObj().str("kind", "clock").rawBytes("clock", clockBody(*c.Clock)).bytes())
		return
	}
	o := newObj().str("kind", c.Kind).str("namespace", c.Namespace)
	if c.Kind == "namespace.reset" { // every branch of the namespace
		h.publish(c.Namespace, c.Kind, o.bytes())
		return
	}
	o.str("branch", c.Branch)
	switch c.Kind {
	case "checkpoint", "branch.restored":
		o.str("checkpoint", c.Checkpoint)
	case "run.event":
		o.str("run_id", c.RunID)
		data := bytes.TrimSpace(bytes.TrimPrefix(c.Frame, []byte("data: ")))
		var compact bytes.Buffer
		if json.Compact(&compact, data) == nil {
			o.rawBytes("event", compact.Bytes())
		} else {
			o.str("event", string(data)) // a non-finite float echoed in Python form (wire.md §3.1)
		}
	default:
		o.str("run_id", c.RunID)
		if c.Status != "" {
			o.str("status", c.Status)
		}
	}
	h.publish(c.Namespace, c.Kind, o.bytes())
}

// Fault publishes a fault rule that fired on a vendor request of namespace ns:
// its id ("" for a rule without one to record), the operation matched ("" when
// none) and the status it answered (0 for a drop or a rule that let the
// request go on).
func (h *Hub) Fault(ns, faultID, operationID string, status int) {
	if h.n.Load() == 0 {
		return
	}
	o := newObj().str("kind", "fault").str("namespace", ns).str("fault_id", faultID)
	if operationID != "" {
		o.str("operation_id", operationID)
	}
	if status != 0 {
		o.num("http_status", float64(status))
	}
	h.publish(ns, "fault", o.bytes())
}

// publish queues one frame for every subscriber that follows namespace ns
// ("" = every subscriber), dropping those whose buffer would exceed the bound.
func (h *Hub) publish(ns, kind string, data []byte) {
	frame := make([]byte, 0, len(kind)+len(data)+16)
	frame = append(append(append(frame, "event: "...), kind...), "\ndata: "...)
	frame = append(append(frame, data...), "\n\n"...)
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if ns != "" && !s.all && s.ns != ns {
			continue
		}
		if s.size+len(frame) > h.max {
			s.dropped, s.frames, s.size = true, nil, 0
			h.remove(s)
			close(s.gone)
		} else {
			s.frames = append(s.frames, frame)
			s.size += len(frame)
		}
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// subscribe adds a subscriber: a 503 after Close or when MaxStreamSubscribers
// streams are already open.
func (h *Hub) subscribe(ns string, all bool) (*subscriber, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, runs.Admin(503, "the server is shutting down")
	}
	if len(h.subs) >= MaxStreamSubscribers {
		return nil, runs.Admin(503, fmt.Sprintf("too many control-plane streams: at most %d at once", MaxStreamSubscribers))
	}
	s := &subscriber{ns: ns, all: all, wake: make(chan struct{}, 1), gone: make(chan struct{})}
	h.subs[s] = struct{}{}
	h.n.Store(int32(len(h.subs)))
	return s, nil
}

func (h *Hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.remove(s)
}

// remove forgets s. Callers hold h.mu.
func (h *Hub) remove(s *subscriber) {
	delete(h.subs, s)
	h.n.Store(int32(len(h.subs)))
}

// take returns the waiting frames; end is set when the stream must end
// (dropped, or the hub closed).
func (h *Hub) take(s *subscriber) (frames [][]byte, end bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	frames, s.frames, s.size = s.frames, nil, 0
	return frames, s.dropped || h.closed
}

// Close ends every stream (server shutdown); later subscriptions end at once.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		h.remove(s)
		close(s.gone)
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// StreamGet is GET /__admin/stream: the admin namespace's changes (every
// namespace's with all=1) and every clock move, until the client leaves, the
// subscriber is dropped or the server shuts down.
func (a *Admin) StreamGet(ec echo.Context, _ genadmin.StreamGetParams) error {
	c := callOf(ec)
	s, err := a.d.Hub.subscribe(c.ns, c.query.Get("all") == "1")
	if err != nil {
		return err
	}
	defer a.d.Hub.unsubscribe(s)
	w := ec.Response()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	w.Flush()
	// A subscriber whose client stopped reading is blocked in a write (a
	// stream has no write deadline) when it is dropped or the hub closes: that
	// write is cut, so its stream ends then rather than when the client goes
	// away (handlers.WriteCut).
	cut := handlers.NewWriteCut(w)
	defer cut.Watch(s.gone)()
	ctx := ec.Request().Context()
	idle := time.NewTimer(streamKeepalive)
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-idle.C:
			if !cut.Write([]byte(": keepalive\n\n")) {
				return nil
			}
		case <-s.wake:
			frames, end := a.d.Hub.take(s)
			if !cut.Write(frames...) {
				return nil
			}
			if end {
				cut.End()
				return nil
			}
		}
		idle.Reset(streamKeepalive)
	}
}

package transport

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// Key names one run's transport: its namespace, branch and run id.
type Key struct{ NS, Branch, Run string }

// Options configure a Set.
type Options struct {
	BufferBytes int           // a transport's buffer bound in bytes (hardening H5); > 0
	Wait        time.Duration // how long Subscribe waits for a transport that does not exist
	Logger      *slog.Logger  // the WARN of a full buffer; nil = discard
}

// Set is every transport of the process: per namespace branch, run id → slot.
// All methods are safe for concurrent use.
type Set struct {
	mu       sync.Mutex
	opts     Options
	branches map[branch]map[string]slot
	// orphans are the streams destroyed because a subscriber left while
	// another stays attached (keepalives only): no branch map holds them, but
	// Shutdown must still abort them, so that a write of the remaining
	// subscriber blocked on a client that stopped reading is cut.
	orphans map[*stream]struct{}
	down    chan struct{} // closed by Shutdown: every subscriber ends
	closed  bool          // down is closed
}

type branch struct{ ns, name string }

// slot is one run's transport as its branch's map holds it: the creation
// time and, once a frame, a subscriber or the end arrives, the stream itself
// (nil until then).
type slot struct {
	created float64
	t       *stream
}

// stream is one run's transport in use. Invariant: bytes is the sum of the
// lengths of frames.
type stream struct {
	frames    [][]byte
	bytes     int  // buffered frame bytes (bounded by Options.BufferBytes)
	delivered int  // frames taken by subscribers
	ended     bool // the run became terminal: ": stream closed" after the frames
	aborted   bool // destroyed under a subscriber (reset, restart, checkout, overflow): end at once
	orphaned  bool // destroyed because another subscriber left: keepalives only
	subs      int
	wake      chan struct{} // made by the first subscriber
	dead      chan struct{} // closed when aborted (made by the first subscriber)
}

// abort destroys t under its subscribers: they end at once.
func (t *stream) abort() {
	if !t.aborted && t.dead != nil {
		close(t.dead)
	}
	t.aborted = true
	t.signal()
}

func (t *stream) signal() {
	if t.wake != nil {
		close(t.wake)
		t.wake = make(chan struct{})
	}
}

// New returns an empty Set.
func New(opts Options) *Set {
	return &Set{opts: opts, branches: map[branch]map[string]slot{}, orphans: map[*stream]struct{}{}, down: make(chan struct{})}
}

// Open opens k's transport, created at created (epoch seconds); a transport
// of an earlier run with the same key is replaced.
func (s *Set) Open(k Key, created float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := branch{k.NS, k.Branch}
	m := s.branches[b]
	if m == nil {
		m = map[string]slot{}
		s.branches[b] = m
	}
	m[k.Run] = slot{created: created}
}

// Has reports whether k has a transport.
func (s *Set) Has(k Key) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.branches[branch{k.NS, k.Branch}][k.Run]
	return ok
}

// stream returns k's stream, made from its slot when first needed; nil when
// k has no transport. Callers hold s.mu.
func (s *Set) stream(k Key) *stream {
	m := s.branches[branch{k.NS, k.Branch}]
	sl, ok := m[k.Run]
	if !ok {
		return nil
	}
	if sl.t == nil {
		sl.t = &stream{}
		m[k.Run] = sl
	}
	return sl.t
}

// remove destroys k's transport when it is still t. Callers hold s.mu.
func (s *Set) remove(k Key, t *stream) {
	b := branch{k.NS, k.Branch}
	m := s.branches[b]
	if sl, ok := m[k.Run]; !ok || sl.t != t {
		return
	}
	delete(m, k.Run)
	if len(m) == 0 {
		delete(s.branches, b)
	}
}

// Deliver buffers frame on k's transport, if any, and reports whether it was
// appended. A transport whose buffer would pass Options.BufferBytes is
// destroyed as if its consumer went away (hardening H5): its subscriber, if
// any, ends with Aborted, one WARN names the run, and this frame and later ones
// are undelivered.
func (s *Set) Deliver(k Key, frame []byte) bool {
	s.mu.Lock()
	t := s.stream(k)
	if t == nil {
		s.mu.Unlock()
		return false
	}
	if t.bytes+len(frame) <= s.opts.BufferBytes {
		t.frames = append(t.frames, frame)
		t.bytes += len(frame)
		t.signal()
		s.mu.Unlock()
		return true
	}
	buffered := t.bytes
	s.remove(k, t)
	t.frames, t.bytes = nil, 0
	t.abort()
	s.mu.Unlock()
	if s.opts.Logger != nil {
		s.opts.Logger.Warn("SSE buffer full: stream closed, frames undelivered", "namespace", k.NS, "branch", k.Branch,
			"run_id", k.Run, "buffered_bytes", buffered, "limit_bytes", s.opts.BufferBytes)
	}
	return false
}

// End marks k's run terminal: its subscriber writes ": stream closed" after
// the buffered frames.
func (s *Set) End(k Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.stream(k); t != nil {
		t.ended = true
		t.signal()
	}
}

// Destroy destroys every transport of ns's branch under its subscribers
// (reset, checkout, restart): they end at once with Aborted.
func (s *Set) Destroy(ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.destroy(branch{ns, name})
}

func (s *Set) destroy(b branch) {
	m := s.branches[b]
	delete(s.branches, b)
	for _, sl := range m {
		if sl.t != nil {
			sl.t.abort()
		}
	}
}

// Expire destroys ns's branch's transports that have no subscriber and were
// created more than runs.TransportRetention before at (runs-api §11.2); a
// subscribed one ends with its subscriber. The gateway calls it once per
// sweep tick, so walking the branch's transports is cheap.
func (s *Set) Expire(ns, name string, at float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := branch{ns, name}
	m := s.branches[b]
	for run, sl := range m {
		if (sl.t == nil || sl.t.subs == 0) && runs.Expired(sl.created, at, runs.TransportRetention) {
			delete(m, run)
		}
	}
	if m != nil && len(m) == 0 {
		delete(s.branches, b)
	}
}

// Shutdown ends every stream at once (graceful shutdown): every transport is
// destroyed as by a restart, orphaned ones included (every subscription's
// Aborted is closed), and subscribers waiting for one give up.
func (s *Set) Shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		close(s.down)
		s.closed = true
	}
	for b := range s.branches {
		s.destroy(b)
	}
	for t := range s.orphans {
		t.abort()
		delete(s.orphans, t)
	}
}

// Stat is a transport as the control plane's run view shows it.
type Stat struct {
	State      string // "none", "buffering", "subscribed" or "closed" (its run ended)
	Buffered   int    // frames waiting for a subscriber
	Delivered  int    // frames taken by subscribers
	Subscribed bool   // a subscriber is attached
}

// Stat returns k's transport as the run view shows it.
func (s *Set) Stat(k Key) Stat {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl, ok := s.branches[branch{k.NS, k.Branch}][k.Run]
	switch t := sl.t; {
	case !ok:
		return Stat{State: "none"}
	case t == nil: // never used: nothing buffered yet
		return Stat{State: "buffering"}
	default:
		st := Stat{State: "buffering", Buffered: len(t.frames), Delivered: t.delivered, Subscribed: t.subs > 0}
		if t.ended {
			st.State = "closed"
		} else if st.Subscribed {
			st.State = "subscribed"
		}
		return st
	}
}

// Check verifies the invariants: every stream's buffered bytes are its
// frames' and within the bound, no subscriber count is negative, no
// destroyed (aborted or orphaned) stream is left in a map, no branch keeps an
// empty map, and the orphan list holds only orphaned streams that still have
// a subscriber. It walks everything: the tests call it.
func (s *Set) Check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for b, m := range s.branches {
		if len(m) == 0 {
			return fmt.Errorf("branch %v keeps an empty transport map", b)
		}
		for run, sl := range m {
			t := sl.t
			if t == nil {
				continue // never used: nothing buffered
			}
			n := 0
			for _, f := range t.frames {
				n += len(f)
			}
			if n != t.bytes || n > s.opts.BufferBytes || t.subs < 0 {
				return fmt.Errorf("transport %s: %d bytes buffered, counted %d (bound %d), %d subscribers", run, t.bytes, n, s.opts.BufferBytes, t.subs)
			}
			if t.aborted || t.orphaned {
				return fmt.Errorf("transport %s was destroyed (aborted %v, orphaned %v) but is still in its branch's map", run, t.aborted, t.orphaned)
			}
		}
	}
	for t := range s.orphans {
		if !t.orphaned || t.subs <= 0 || t.aborted {
			return fmt.Errorf("orphan list holds a stream that is not an orphan with a subscriber (orphaned %v, %d subscribers, aborted %v)", t.orphaned, t.subs, t.aborted)
		}
	}
	return nil
}

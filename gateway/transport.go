package gateway

import (
	"context"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// SSE transports (runs-api §6.4.1): process state, never persisted or
// checkpointed. One per admitted run; frames are buffered until a subscriber
// takes them; destroyed when a subscriber leaves, on expiry, reset, checkout,
// restart, and when its buffer passes --sse-buffer-bytes.

type tkey struct{ ns, branch, run string }

type bkey struct{ ns, branch string }

// slot is one run's transport as its branch's map holds it: the creation
// time and, once a frame, a subscriber or the end arrives, the transport
// itself (nil until then: most transports are never used, and a retained run
// should not pay for a buffer it never fills).
type slot struct {
	created float64
	t       *transport
}

// transport is one run's SSE transport. Invariant: bytes is the sum of the
// lengths of frames.
type transport struct {
	created   float64
	frames    [][]byte
	bytes     int  // buffered frame bytes (bounded by Options.SSEBufferBytes)
	delivered int  // frames taken by subscribers
	ended     bool // the run became terminal: ": stream closed" after the frames
	aborted   bool // destroyed under a subscriber (reset, restart, checkout, overflow): end at once
	orphaned  bool // destroyed because another subscriber left: keepalives only
	subs      int
	wake      chan struct{} // made by the first subscriber
	dead      chan struct{} // closed when aborted (made by the first subscriber)
}

// abort destroys t under its subscribers: they end at once.
func (t *transport) abort() {
	if !t.aborted && t.dead != nil {
		close(t.dead)
	}
	t.aborted = true
	t.signal()
}

func (t *transport) signal() {
	if t.wake != nil {
		close(t.wake)
		t.wake = make(chan struct{})
	}
}

// transportSet is every transport of the process: per namespace branch, run
// id → slot. Callers hold g.mu.
type transportSet map[bkey]map[string]slot

// hasTransport reports whether k has a transport.
func (g *Gateway) hasTransport(k tkey) bool {
	_, ok := g.transports[bkey{k.ns, k.branch}][k.run]
	return ok
}

// transport returns k's transport, made from its slot when first needed; nil
// when there is none.
func (g *Gateway) transport(k tkey) *transport {
	m := g.transports[bkey{k.ns, k.branch}]
	s, ok := m[k.run]
	if !ok {
		return nil
	}
	if s.t == nil {
		s.t = &transport{created: s.created}
		m[k.run] = s
	}
	return s.t
}

// openTransport opens the transport of run id, admitted on ns's branch at
// created; a transport of an earlier run with the same id is replaced.
func (g *Gateway) openTransport(ns, branch string, o opening) {
	bk := bkey{ns, branch}
	m := g.transports[bk]
	if m == nil {
		m = map[string]slot{}
		g.transports[bk] = m
	}
	m[o.run] = slot{created: o.created}
}

// removeTransport destroys k's transport t (its subscriber left).
func (g *Gateway) removeTransport(k tkey, t *transport) {
	m := g.transports[bkey{k.ns, k.branch}]
	if s, ok := m[k.run]; !ok || s.t != t {
		return
	}
	delete(m, k.run)
	if len(m) == 0 {
		delete(g.transports, bkey{k.ns, k.branch})
	}
}

// Callers of the following hold g.mu.

// deliver buffers frame on k's transport. A transport whose buffer would pass
// --sse-buffer-bytes is destroyed as if its consumer went away (hardening H5):
// its subscriber, if any, ends, and this frame and later ones are undelivered.
func (g *Gateway) deliver(k tkey, frame []byte) {
	t := g.transport(k)
	if t == nil {
		return
	}
	if t.bytes+len(frame) > g.opts.SSEBufferBytes {
		g.warn("SSE buffer full: stream closed, frames undelivered", "namespace", k.ns, "branch", k.branch,
			"run_id", k.run, "buffered_bytes", t.bytes, "limit_bytes", g.opts.SSEBufferBytes)
		g.removeTransport(k, t)
		t.frames, t.bytes = nil, 0
		t.abort()
		return
	}
	t.frames = append(t.frames, frame)
	t.bytes += len(frame)
	t.signal()
}

func (g *Gateway) endStream(k tkey) {
	if t := g.transport(k); t != nil {
		t.ended = true
		t.signal()
	}
}

func (g *Gateway) destroyTransports(ns, branch string, abort bool) {
	bk := bkey{ns, branch}
	m := g.transports[bk]
	delete(g.transports, bk)
	if abort {
		for _, s := range m {
			if s.t != nil {
				s.t.abort()
			}
		}
	}
}

// expireTransports destroys the transports that have no subscriber and were
// created more than runs.TransportRetention before at (runs-api §11.2); a
// subscribed one ends with its subscriber. It runs at most once per sweep
// tick, so walking the branch's transports is cheap.
func (g *Gateway) expireTransports(ns, branch string, at float64) {
	bk := bkey{ns, branch}
	m := g.transports[bk]
	for run, s := range m {
		if (s.t == nil || s.t.subs == 0) && runs.Expired(s.created, at, runs.TransportRetention) {
			delete(m, run)
		}
	}
	if m != nil && len(m) == 0 {
		delete(g.transports, bk)
	}
}

// Subscription is one connected RunEvents subscriber.
type Subscription struct {
	g   *Gateway
	key tkey
	t   *transport
}

// Subscribe performs RunEvents steps 2–4 (runs-api §6.4.2): sweep tick,
// visibility without hydration, then the transport — waiting up to the
// subscribe wait before answering 404 when there is none. With probe (HEAD)
// it checks only and returns a nil Subscription.
func (g *Gateway) Subscribe(ctx context.Context, t Target, id string, probe bool) (*Subscription, *runs.Error) {
	visible := false
	if _, err := g.update(t, func(x *tx) *runs.Error {
		x.sweepTick()
		visible = x.visible(id, x.scope())
		return nil
	}); err != nil {
		return nil, err
	}
	if !visible {
		return nil, runs.RunNotFound(id)
	}
	g.mu.Lock()
	k := tkey{t.NS, t.Branch, id}
	tr := g.transport(k)
	if t.view != nil {
		tr = nil // a history view has no transports (controls §8.6)
	}
	if tr == nil {
		g.mu.Unlock()
		timer := time.NewTimer(g.opts.SubscribeWait)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
		case <-g.down:
		}
		return nil, runs.RunNotFound(id)
	}
	if probe {
		g.mu.Unlock()
		return nil, nil
	}
	tr.subs++
	if tr.wake == nil {
		tr.wake, tr.dead = make(chan struct{}), make(chan struct{})
	}
	g.mu.Unlock()
	return &Subscription{g: g, key: k, t: tr}, nil
}

// Next is what a subscriber writes next.
type Next int

// The kinds of Next.
const (
	Frame     Next = iota // a data frame
	Keepalive             // idle for the keepalive interval
	Closed                // terminal: write ": stream closed" and end
	Aborted               // transport destroyed under the subscriber: end without a comment
	Gone                  // ctx ended (client went away)
)

// Next waits for the next frame, the end of the stream, idle (keepalive) or ctx.
func (s *Subscription) Next(ctx context.Context, idle time.Duration) ([]byte, Next) {
	timer := time.NewTimer(idle)
	defer timer.Stop()
	for {
		s.g.mu.Lock()
		t := s.t
		switch {
		case t.aborted:
			s.g.mu.Unlock()
			return nil, Aborted
		case !t.orphaned && len(t.frames) > 0:
			f := t.frames[0]
			t.frames[0] = nil
			t.frames = t.frames[1:]
			t.bytes -= len(f)
			t.delivered++
			s.g.mu.Unlock()
			return f, Frame
		case !t.orphaned && t.ended:
			s.g.mu.Unlock()
			return nil, Closed
		}
		wake := t.wake
		s.g.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, Gone
		case <-s.g.down: // shutdown, including a subscriber orphaned before it
			return nil, Aborted
		case <-timer.C:
			return nil, Keepalive
		case <-wake:
		}
	}
}

// Aborted is closed when the transport is destroyed under the subscriber
// (reset, restart, checkout, a full buffer): a writer blocked on a client
// that does not read should give up then.
func (s *Subscription) Aborted() <-chan struct{} { return s.t.dead }

// Close ends the subscription: the transport is destroyed (runs-api §6.4.2
// step 9); another subscriber still attached receives only keepalives.
func (s *Subscription) Close() {
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	s.t.subs--
	s.g.removeTransport(s.key, s.t)
	if s.t.subs > 0 && !s.t.orphaned {
		s.t.orphaned = true
		s.t.signal()
	}
}

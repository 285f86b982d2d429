package gateway

import (
	"context"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// SSE transports (runs-api §6.4.1): process state, never persisted or
// checkpointed. One per admitted run; frames are buffered until a subscriber
// takes them; destroyed when a subscriber leaves, on expiry, reset, checkout
// and restart.

type tkey struct{ ns, branch, run string }

type transport struct {
	created  float64
	frames   [][]byte
	ended    bool // the run became terminal: ": stream closed" after the frames
	aborted  bool // destroyed under a subscriber (reset, restart, checkout): end at once
	orphaned bool // destroyed because another subscriber left: keepalives only
	subs     int
	wake     chan struct{}
}

func newTransport(created float64) *transport {
	return &transport{created: created, wake: make(chan struct{})}
}

func (t *transport) signal() {
	close(t.wake)
	t.wake = make(chan struct{})
}

// Callers of the following hold g.mu.

func (g *Gateway) deliver(k tkey, frame []byte) {
	if t := g.transports[k]; t != nil {
		t.frames = append(t.frames, frame)
		t.signal()
	}
}

func (g *Gateway) endStream(k tkey) {
	if t := g.transports[k]; t != nil {
		t.ended = true
		t.signal()
	}
}

func (g *Gateway) destroyTransports(ns, branch string, abort bool) {
	for k, t := range g.transports {
		if k.ns == ns && k.branch == branch {
			delete(g.transports, k)
			if abort {
				t.aborted = true
				t.signal()
			}
		}
	}
}

func (g *Gateway) expireTransports(ns, branch string, at float64) {
	for k, t := range g.transports {
		if k.ns == ns && k.branch == branch && t.subs == 0 && at-t.created > 300 {
			delete(g.transports, k)
		}
	}
}

// HasTransport reports whether run id of t has a transport (tests, metrics).
func (g *Gateway) HasTransport(t Target, id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.transports[tkey{t.NS, t.Branch, id}] != nil
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
	tr := g.transports[k]
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
		}
		return nil, runs.RunNotFound(id)
	}
	if probe {
		g.mu.Unlock()
		return nil, nil
	}
	tr.subs++
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
		case <-timer.C:
			return nil, Keepalive
		case <-wake:
		}
	}
}

// Close ends the subscription: the transport is destroyed (runs-api §6.4.2
// step 9); another subscriber still attached receives only keepalives.
func (s *Subscription) Close() {
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	s.t.subs--
	if s.g.transports[s.key] == s.t {
		delete(s.g.transports, s.key)
	}
	if s.t.subs > 0 && !s.t.orphaned {
		s.t.orphaned = true
		s.t.signal()
	}
}

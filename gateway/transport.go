package gateway

import (
	"context"
	"sort"
	"time"

	"github.com/hermes-emulator/hermes-emulator/runs"
)

// SSE transports (runs-api §6.4.1): process state, never persisted or
// checkpointed. One per admitted run; frames are buffered until a subscriber
// takes them; destroyed when a subscriber leaves, on expiry, reset, checkout
// and restart.

type tkey struct{ ns, branch, run string }

type bkey struct{ ns, branch string }

type transport struct {
	created  float64
	frames   [][]byte
	ended    bool // the run became terminal: ": stream closed" after the frames
	aborted  bool // destroyed under a subscriber (reset, restart, checkout): end at once
	orphaned bool // destroyed because another subscriber left: keepalives only
	subs     int
	wake     chan struct{} // made by the first subscriber
}

func (t *transport) signal() {
	if t.wake != nil {
		close(t.wake)
		t.wake = make(chan struct{})
	}
}

// branchTransports are one namespace branch's transports, with their creation
// order for expiry: a sweep pops the expired front instead of scanning them all.
type branchTransports struct {
	m        map[string]*transport
	queue    []queued
	unsorted bool
}

type queued struct {
	created float64
	run     string
}

// transportSet is every transport of the process. Callers hold g.mu.
type transportSet map[bkey]*branchTransports

func (ts transportSet) get(k tkey) *transport {
	if b := ts[bkey{k.ns, k.branch}]; b != nil {
		return b.m[k.run]
	}
	return nil
}

func (ts transportSet) open(k tkey, created float64) {
	bk := bkey{k.ns, k.branch}
	b := ts[bk]
	if b == nil {
		b = &branchTransports{m: map[string]*transport{}}
		ts[bk] = b
	}
	b.m[k.run] = &transport{created: created}
	if n := len(b.queue); n > 0 && b.queue[n-1].created > created {
		b.unsorted = true
	}
	b.queue = append(b.queue, queued{created, k.run})
}

func (ts transportSet) remove(k tkey, t *transport) {
	if b := ts[bkey{k.ns, k.branch}]; b != nil && b.m[k.run] == t {
		delete(b.m, k.run)
	}
}

// Callers of the following hold g.mu.

func (g *Gateway) deliver(k tkey, frame []byte) {
	if t := g.transports.get(k); t != nil {
		t.frames = append(t.frames, frame)
		t.signal()
	}
}

func (g *Gateway) endStream(k tkey) {
	if t := g.transports.get(k); t != nil {
		t.ended = true
		t.signal()
	}
}

func (g *Gateway) destroyTransports(ns, branch string, abort bool) {
	bk := bkey{ns, branch}
	b := g.transports[bk]
	if b == nil {
		return
	}
	delete(g.transports, bk)
	if abort {
		for _, t := range b.m {
			t.aborted = true
			t.signal()
		}
	}
}

// expireTransports destroys the transports that have no subscriber and were
// created more than 300 s before at (runs-api §11.2). The queue is kept in
// creation order, so the expired ones are at its front.
func (g *Gateway) expireTransports(ns, branch string, at float64) {
	b := g.transports[bkey{ns, branch}]
	if b == nil {
		return
	}
	if b.unsorted { // the clock was set backwards between admissions
		sort.SliceStable(b.queue, func(i, j int) bool { return b.queue[i].created < b.queue[j].created })
		b.unsorted = false
	}
	n := 0
	for n < len(b.queue) && at-b.queue[n].created > 300 {
		q := b.queue[n]
		if t := b.m[q.run]; t != nil && t.created == q.created && t.subs == 0 {
			delete(b.m, q.run)
		}
		n++ // a subscribed transport ends with its subscriber
	}
	b.queue = b.queue[n:]
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
	tr := g.transports.get(k)
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
		tr.wake = make(chan struct{})
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

// Close ends the subscription: the transport is destroyed (runs-api §6.4.2
// step 9); another subscriber still attached receives only keepalives.
func (s *Subscription) Close() {
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	s.t.subs--
	s.g.transports.remove(s.key, s.t)
	if s.t.subs > 0 && !s.t.orphaned {
		s.t.orphaned = true
		s.t.signal()
	}
}

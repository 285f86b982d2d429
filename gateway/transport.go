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

// branchTransports are one namespace branch's transports. Most are opened by
// an admission and never touched before they expire, so such a transport is
// only an entry of queue: its creation time and its run's counter n (the run
// id is RunID(storage namespace, n)). A transport gets a *transport in m when
// it is first touched (a frame, the end of its run, a subscriber); m maps a
// destroyed one to nil until its queue entry goes.
//
// Within the life of one set the branch's counter only grows, so queue is in
// n order; it is also in creation order unless the clock was set backwards
// (unsorted), when expiry scans it all.
type branchTransports struct {
	ns       uint32 // catalog index of the branch's storage namespace
	m        map[string]*transport
	queue    []queued
	unsorted bool
}

type queued struct {
	created float64
	n       int64
}

// transportSet is every transport of the process. Callers hold g.mu.
type transportSet map[bkey]*branchTransports

// get returns k's transport, making the *transport of an untouched one.
func (ts transportSet) get(c *catalog, k tkey) *transport {
	b := ts[bkey{k.ns, k.branch}]
	if b == nil {
		return nil
	}
	if t, ok := b.m[k.run]; ok {
		return t
	}
	q, ok := b.untouched(c, k.run)
	if !ok {
		return nil
	}
	t := &transport{created: q.created}
	b.m[k.run] = t
	return t
}

// untouched finds the queue entry of run, touched or not.
func (b *branchTransports) untouched(c *catalog, run string) (queued, bool) {
	if len(b.queue) == 0 || b.ns == 0 {
		return queued{}, false
	}
	h, ok := runs.RunHash(run)
	if !ok {
		return queued{}, false
	}
	var q queued
	found := c.index[b.ns].each(h, func(n int64) bool {
		i := sort.Search(len(b.queue), func(i int) bool { return b.queue[i].n >= n })
		if i < len(b.queue) && b.queue[i].n == n {
			q = b.queue[i]
			return true
		}
		return false
	})
	return q, found
}

// open opens the transport of an admitted run.
func (ts transportSet) open(o opening, created float64) {
	k, n := o.k, o.n
	bk := bkey{k.ns, k.branch}
	b := ts[bk]
	if b == nil {
		b = &branchTransports{ns: o.ns, m: map[string]*transport{}}
		ts[bk] = b
	}
	if l := len(b.queue); o.ns == 0 || o.ns != b.ns || l > 0 && b.queue[l-1].n >= n {
		// Not in the catalog, or (never happens: counters grow between
		// destructions of the set) out of order: keep it as a touched one.
		b.m[k.run] = &transport{created: created}
		return
	}
	delete(b.m, k.run)
	if l := len(b.queue); l > 0 && b.queue[l-1].created > created {
		b.unsorted = true
	}
	b.queue = append(b.queue, queued{created, n})
}

// remove destroys k's transport t; a nil in m keeps its queue entry dead.
func (ts transportSet) remove(c *catalog, k tkey, t *transport) {
	b := ts[bkey{k.ns, k.branch}]
	if b == nil || b.m[k.run] != t {
		return
	}
	if _, queued := b.untouched(c, k.run); queued {
		b.m[k.run] = nil
	} else {
		delete(b.m, k.run)
	}
}

// Callers of the following hold g.mu.

func (g *Gateway) deliver(k tkey, frame []byte) {
	if t := g.transports.get(g.cat, k); t != nil {
		t.frames = append(t.frames, frame)
		t.signal()
	}
}

func (g *Gateway) endStream(k tkey) {
	if t := g.transports.get(g.cat, k); t != nil {
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
			if t != nil {
				t.aborted = true
				t.signal()
			}
		}
	}
}

// expireTransports destroys the transports that have no subscriber and were
// created more than 300 s before at (runs-api §11.2); a subscribed one ends
// with its subscriber. The queue is normally in creation order, so the expired
// ones are at its front.
func (g *Gateway) expireTransports(ns, branch string, at float64) {
	b := g.transports[bkey{ns, branch}]
	if b == nil {
		return
	}
	expired := func(q queued) bool { return at-q.created > 300 }
	drop := func(q queued) {
		if len(b.m) == 0 {
			return
		}
		run := runs.RunID(g.cat.nsNames[b.ns], q.n)
		if t, ok := b.m[run]; ok && (t == nil || t.subs == 0) {
			delete(b.m, run)
		}
	}
	if !b.unsorted {
		n := 0
		for n < len(b.queue) && expired(b.queue[n]) {
			drop(b.queue[n])
			n++
		}
		clear(b.queue[:n])
		b.queue = b.queue[n:]
		return
	}
	kept := b.queue[:0]
	b.unsorted = false
	for _, q := range b.queue {
		if expired(q) {
			drop(q)
			continue
		}
		if l := len(kept); l > 0 && kept[l-1].created > q.created {
			b.unsorted = true
		}
		kept = append(kept, q)
	}
	clear(b.queue[len(kept):])
	b.queue = kept
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
	tr := g.transports.get(g.cat, k)
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
	s.g.transports.remove(s.g.cat, s.key, s.t)
	if s.t.subs > 0 && !s.t.orphaned {
		s.t.orphaned = true
		s.t.signal()
	}
}

package gateway

import (
	"context"
	"math"
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
	created   float64
	alone     bool // outside the counter range (its run is not in the catalog): expiry finds it in m
	frames    [][]byte
	ended     bool // the run became terminal: ": stream closed" after the frames
	aborted   bool // destroyed under a subscriber (reset, restart, checkout): end at once
	orphaned  bool // destroyed because another subscriber left: keepalives only
	subs      int
	delivered int           // frames taken by subscribers (view.go)
	wake      chan struct{} // made by the first subscriber
}

func (t *transport) signal() {
	if t.wake != nil {
		close(t.wake)
		t.wake = make(chan struct{})
	}
}

// branchTransports are one namespace branch's transports. Within the life of
// one set (from its first opening to its destruction by reset, checkout or
// restart) every admission on the branch opens one, with the next run counter,
// so the set is the counter range [head, next), less the destroyed counters in
// gone. A transport's creation time is its run's admission time, which the
// branch's slot log keeps (slotTimes): an untouched transport costs nothing.
// A transport gets a *transport in m when first touched (a frame, the end of
// its run, a subscriber).
//
// Creation times grow with the counter unless the clock was set backwards
// (unsorted), when expiry scans the range instead of popping its front.
type branchTransports struct {
	ns       uint32 // catalog index of the branch's storage namespace
	m        map[string]*transport
	head     int64 // counters below head are gone
	next     int64 // counter of the next opening
	gone     map[int64]struct{}
	latest   float64 // the latest creation time opened
	unsorted bool
}

// transportSet is every transport of the process. Callers hold g.mu.
type transportSet map[bkey]*branchTransports

// slotTimes is the slot log of a branch's current state and the number of
// its slots that state sees. Within the life of a transport set the state only
// grows by admissions (everything else that replaces it destroys the set), so
// the slots of the set's counters stay where they were.
func (g *Gateway) slotTimes(k bkey) (*slotLog, int) {
	if sp := g.spaces[k.ns]; sp != nil {
		if bs := sp.branches[k.branch]; bs != nil {
			return bs.st.runs.log, bs.st.runs.n
		}
	}
	return nil, 0
}

// created is the creation time of counter n's transport.
func (g *Gateway) created(k bkey, n int64) float64 {
	l, _ := g.slotTimes(k)
	return l.at(int(n - 1 - l.base)).at
}

// transport returns k's transport, making the *transport of an untouched one.
func (g *Gateway) transport(k tkey) *transport {
	bk := bkey{k.ns, k.branch}
	b := g.transports[bk]
	if b == nil {
		return nil
	}
	if t, ok := b.m[k.run]; ok {
		return t
	}
	n, ok := b.counter(g.cat, k.run)
	if !ok {
		return nil
	}
	t := &transport{created: g.created(bk, n)}
	b.m[k.run] = t
	return t
}

// counter finds the counter of run's transport when it is in the range and
// not destroyed; of two runs with the same id (colliding hashes), the newer.
func (b *branchTransports) counter(c *catalog, run string) (int64, bool) {
	if b.head == b.next || b.ns == 0 {
		return 0, false
	}
	h, ok := runs.RunHash(run)
	if !ok {
		return 0, false
	}
	found := int64(-1)
	c.index[b.ns].each(h, func(n int64) bool {
		if _, gone := b.gone[n]; n >= b.head && n < b.next && !gone && n > found {
			found = n
		}
		return false
	})
	return found, found >= 0
}

// openTransport opens the transport of an admitted run, whose slot the
// branch's state has.
func (g *Gateway) openTransport(o opening, created float64) {
	k, n := o.k, o.n
	bk := bkey{k.ns, k.branch}
	b := g.transports[bk]
	if b == nil {
		b = &branchTransports{ns: o.ns, m: map[string]*transport{}, gone: map[int64]struct{}{}, head: n, next: n}
		g.transports[bk] = b
	}
	delete(b.m, k.run)
	l, seen := g.slotTimes(bk)
	if o.ns == 0 || o.ns != b.ns || n != b.next || l == nil || n-1-l.base < 0 || n-1-l.base >= int64(seen) ||
		l.at(int(n-1-l.base)).at != created {
		// Not in the catalog, or (never happens: counters grow by one between
		// destructions of the set, with a slot each) out of order: keep it as
		// a touched one outside the range.
		b.m[k.run] = &transport{created: created, alone: true}
		return
	}
	if b.next > b.head && created < b.latest {
		b.unsorted = true
	}
	b.latest = max(b.latest, created)
	b.next++
}

// removeTransport destroys k's transport t (its subscriber left).
func (g *Gateway) removeTransport(k tkey, t *transport) {
	b := g.transports[bkey{k.ns, k.branch}]
	if b == nil || b.m[k.run] != t {
		return
	}
	if n, ok := b.counter(g.cat, k.run); ok {
		b.gone[n] = struct{}{}
	}
	delete(b.m, k.run)
}

// Callers of the following hold g.mu.

func (g *Gateway) deliver(k tkey, frame []byte) {
	if t := g.transport(k); t != nil {
		t.frames = append(t.frames, frame)
		t.signal()
	}
}

func (g *Gateway) endStream(k tkey) {
	if t := g.transport(k); t != nil {
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
// created more than 300 s before at (runs-api §11.2); a subscribed one ends
// with its subscriber. Creation times normally grow with the counter, so the
// expired ones are at the front of the range.
func (g *Gateway) expireTransports(ns, branch string, at float64) {
	bk := bkey{ns, branch}
	b := g.transports[bk]
	if b == nil {
		return
	}
	for run, t := range b.m {
		if t.alone && t.subs == 0 && at-t.created > 300 {
			delete(b.m, run)
		}
	}
	if b.head == b.next {
		return
	}
	l, _ := g.slotTimes(bk)
	created := func(n int64) float64 { return l.at(int(n - 1 - l.base)).at }
	drop := func(n int64) {
		if len(b.m) == 0 {
			return
		}
		run := runs.RunID(g.cat.nsNames[b.ns], n)
		if t, ok := b.m[run]; ok && !t.alone && t.subs == 0 && t.created == created(n) {
			delete(b.m, run)
		}
	}
	if b.unsorted {
		b.unsorted = false
		prev := math.Inf(-1)
		for n := b.head; n < b.next; n++ {
			if _, gone := b.gone[n]; gone {
				continue
			}
			if c := created(n); at-c > 300 {
				drop(n)
				b.gone[n] = struct{}{}
			} else {
				if c < prev {
					b.unsorted = true
				}
				prev = c
			}
		}
	}
	for ; b.head < b.next; b.head++ {
		if _, gone := b.gone[b.head]; gone {
			delete(b.gone, b.head)
			continue
		}
		if !(at-created(b.head) > 300) {
			break
		}
		drop(b.head)
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

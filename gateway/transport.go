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

// branchTransports are one namespace branch's transports. Within the life of
// one set (from its first opening to its destruction by reset, checkout or
// restart) every admission on the branch opens one, with the next run counter,
// so the set is the counter range [head, next) with a creation time each:
// 8 bytes a transport. Most are never touched before they expire; a transport
// gets a *transport in m when first touched (a frame, the end of its run, a
// subscriber). A destroyed one has a NaN creation time.
//
// Creation times grow with the counter unless the clock was set backwards
// (unsorted), when expiry scans the range instead of popping its front.
type branchTransports struct {
	ns       uint32 // catalog index of the branch's storage namespace; 0 = none
	m        map[string]*transport
	first    int64       // counter of chunks[0][0]
	head     int64       // counters below head are gone
	next     int64       // counter of the next opening
	chunks   [][]float64 // creation times by counter - first, transportChunk a chunk
	latest   float64     // the latest creation time opened
	unsorted bool
}

const transportChunk = 4096

func (b *branchTransports) created(n int64) *float64 {
	i := n - b.first
	return &b.chunks[i/transportChunk][i%transportChunk]
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
	n, ok := b.counter(c, k.run)
	if !ok {
		return nil
	}
	t := &transport{created: *b.created(n)}
	b.m[k.run] = t
	return t
}

// counter finds the counter of run's transport when it is in the range and
// not destroyed.
func (b *branchTransports) counter(c *catalog, run string) (int64, bool) {
	if b.head == b.next || b.ns == 0 {
		return 0, false
	}
	h, ok := runs.RunHash(run)
	if !ok {
		return 0, false
	}
	var found int64
	ok = c.index[b.ns].each(h, func(n int64) bool {
		if n >= b.head && n < b.next && !math.IsNaN(*b.created(n)) {
			found = n
			return true
		}
		return false
	})
	return found, ok
}

// open opens the transport of an admitted run.
func (ts transportSet) open(o opening, created float64) {
	k, n := o.k, o.n
	bk := bkey{k.ns, k.branch}
	b := ts[bk]
	if b == nil {
		b = &branchTransports{ns: o.ns, m: map[string]*transport{}, first: n, head: n, next: n}
		ts[bk] = b
	}
	delete(b.m, k.run)
	if o.ns == 0 || o.ns != b.ns || n != b.next {
		// Not in the catalog, or (never happens: counters grow by one between
		// destructions of the set) out of order: keep it as a touched one.
		b.m[k.run] = &transport{created: created}
		return
	}
	if b.next > b.first && created < b.latest {
		b.unsorted = true
	}
	b.latest = max(b.latest, created)
	if (n-b.first)%transportChunk == 0 {
		b.chunks = append(b.chunks, make([]float64, 0, transportChunk))
	}
	last := &b.chunks[len(b.chunks)-1]
	*last = append(*last, created)
	b.next++
}

// remove destroys k's transport t (its subscriber left).
func (ts transportSet) remove(c *catalog, k tkey, t *transport) {
	b := ts[bkey{k.ns, k.branch}]
	if b == nil || b.m[k.run] != t {
		return
	}
	if n, ok := b.counter(c, k.run); ok {
		*b.created(n) = math.NaN()
	}
	delete(b.m, k.run)
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
	b := g.transports[bkey{ns, branch}]
	if b == nil {
		return
	}
	drop := func(n int64) {
		if len(b.m) == 0 {
			return
		}
		run := runs.RunID(g.cat.nsNames[b.ns], n)
		if t, ok := b.m[run]; ok && t.subs == 0 {
			delete(b.m, run)
		}
	}
	if b.unsorted {
		b.unsorted = false
		prev := math.Inf(-1)
		for n := b.head; n < b.next; n++ {
			c := b.created(n)
			if math.IsNaN(*c) {
				continue
			}
			if at-*c > 300 {
				drop(n)
				*c = math.NaN()
				continue
			}
			if *c < prev {
				b.unsorted = true
			}
			prev = *c
		}
	}
	for b.head < b.next {
		c := *b.created(b.head)
		if !math.IsNaN(c) {
			if !(at-c > 300) {
				break
			}
			drop(b.head)
		}
		b.head++
		if b.head-b.first == transportChunk { // a chunk wholly gone
			b.chunks[0] = nil
			b.chunks = b.chunks[1:]
			b.first += transportChunk
		}
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

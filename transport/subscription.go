package transport

import (
	"context"
	"time"
)

// Subscription is one connected RunEvents subscriber.
type Subscription struct {
	set *Set
	key Key
	t   *stream
}

// Subscribe attaches a subscriber to k's transport (runs-api §6.4.2 step 4).
// When k has none it waits as Wait does and returns ok false (the caller
// answers 404). With probe (HEAD) it checks only and returns a nil
// Subscription.
func (s *Set) Subscribe(ctx context.Context, k Key, probe bool) (sub *Subscription, ok bool) {
	s.mu.Lock()
	t := s.stream(k)
	if t == nil {
		s.mu.Unlock()
		s.Wait(ctx)
		return nil, false
	}
	if probe {
		s.mu.Unlock()
		return nil, true
	}
	t.subs++
	if t.wake == nil {
		t.wake, t.dead = make(chan struct{}), make(chan struct{})
	}
	s.mu.Unlock()
	return &Subscription{set: s, key: k, t: t}, true
}

// Wait waits as a subscriber that finds no transport does before it is
// answered 404: Options.Wait, until ctx ends or until Shutdown.
func (s *Set) Wait(ctx context.Context) {
	timer := time.NewTimer(s.opts.Wait)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	case <-s.down:
	}
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
func (sub *Subscription) Next(ctx context.Context, idle time.Duration) ([]byte, Next) {
	timer := time.NewTimer(idle)
	defer timer.Stop()
	s := sub.set
	for {
		s.mu.Lock()
		t := sub.t
		switch {
		case t.aborted:
			s.mu.Unlock()
			return nil, Aborted
		case !t.orphaned && len(t.frames) > 0:
			f := t.frames[0]
			t.frames[0] = nil
			t.frames = t.frames[1:]
			t.bytes -= len(f)
			t.delivered++
			s.mu.Unlock()
			return f, Frame
		case !t.orphaned && t.ended:
			s.mu.Unlock()
			return nil, Closed
		}
		wake := t.wake
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, Gone
		case <-s.down: // shutdown, including a subscriber orphaned before it
			return nil, Aborted
		case <-timer.C:
			return nil, Keepalive
		case <-wake:
		}
	}
}

// Aborted is closed when the transport is destroyed under the subscriber
// (reset, restart, checkout, a full buffer, Shutdown — an orphaned transport
// too): a writer blocked on a client that does not read should give up then.
func (sub *Subscription) Aborted() <-chan struct{} { return sub.t.dead }

// Close ends the subscription: the transport is destroyed (runs-api §6.4.2
// step 9); another subscriber still attached receives only keepalives.
func (sub *Subscription) Close() {
	s := sub.set
	s.mu.Lock()
	defer s.mu.Unlock()
	t := sub.t
	t.subs--
	s.remove(sub.key, t)
	switch {
	case t.subs > 0 && !t.orphaned && !t.aborted:
		t.orphaned = true
		t.signal()
		if s.closed {
			t.abort() // Shutdown has passed: nothing would abort it later
		} else {
			s.orphans[t] = struct{}{}
		}
	case t.subs == 0:
		delete(s.orphans, t)
	}
}

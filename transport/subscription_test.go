package transport

import (
	"context"
	"testing"
	"time"
)

// Next hands the frames in order, then ": stream closed" once the run ended;
// idle answers Keepalive and a finished ctx Gone.
func TestNext(t *testing.T) {
	s, _ := newSet(t, 1<<10)
	s.Open(key("r"), 1)
	s.Deliver(key("r"), []byte("one"))
	sub, ok := s.Subscribe(context.Background(), key("r"), false)
	if !ok {
		t.Fatal("no transport")
	}
	defer sub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	type step struct {
		frame string
		next  Next
	}
	var got []step
	take := func() {
		f, n := sub.Next(ctx, 5*time.Millisecond)
		got = append(got, step{string(f), n})
	}
	take()
	take() // idle
	s.Deliver(key("r"), []byte("two"))
	s.End(key("r"))
	take()
	take()
	cancel()
	take()
	want := []step{{"one", Frame}, {"", Keepalive}, {"two", Frame}, {"", Closed}, {"", Closed}}
	// A ctx that ended does not hide the end of the stream.
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("step %d: %+v, want %+v (all %+v)", i, got[i], want[i], got)
		}
	}
	sub2, _ := s.Subscribe(context.Background(), key("r"), false)
	sub2.Close()
	s.Open(key("q"), 1)
	sub3, _ := s.Subscribe(context.Background(), key("q"), false)
	defer sub3.Close()
	if _, n := sub3.Next(ctx, time.Second); n != Gone {
		t.Fatalf("ended ctx: %v, want Gone", n)
	}
}

// A frame delivered while a subscriber waits wakes it.
func TestNextWakes(t *testing.T) {
	s, _ := newSet(t, 1<<10)
	s.Open(key("r"), 1)
	sub, _ := s.Subscribe(context.Background(), key("r"), false)
	defer sub.Close()
	go func() {
		time.Sleep(5 * time.Millisecond)
		s.Deliver(key("r"), []byte("late"))
	}()
	if f, n := sub.Next(context.Background(), 10*time.Second); n != Frame || string(f) != "late" {
		t.Fatalf("Next = %q %v", f, n)
	}
}

// Subscribe without a transport waits and answers false (404); a probe
// checks only; Close destroys the transport, and a second subscriber still
// attached gets only keepalives (orphaned), ending at Shutdown.
func TestSubscribeClose(t *testing.T) {
	s, _ := newSet(t, 1<<10)
	ctx := context.Background()
	if sub, ok := s.Subscribe(ctx, key("r"), false); ok || sub != nil {
		t.Fatal("subscribed to no transport")
	}
	s.Open(key("r"), 1)
	if sub, ok := s.Subscribe(ctx, key("r"), true); !ok || sub != nil {
		t.Fatalf("probe = %v %v", sub, ok)
	}
	first, _ := s.Subscribe(ctx, key("r"), false)
	second, _ := s.Subscribe(ctx, key("r"), false)
	s.Deliver(key("r"), []byte("x"))
	first.Close()
	if s.Has(key("r")) {
		t.Fatal("the transport outlived its subscriber")
	}
	if _, ok := s.Subscribe(ctx, key("r"), true); ok {
		t.Fatal("probe after Close found a transport")
	}
	s.Deliver(key("r"), []byte("y")) // undelivered: the transport is gone
	if f, n := second.Next(ctx, 5*time.Millisecond); n != Keepalive {
		t.Fatalf("orphaned: %q %v, want Keepalive", f, n)
	}
	select {
	case <-second.Aborted():
		t.Fatal("an orphaned subscription is aborted before Shutdown")
	default:
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	s.Shutdown()
	if _, n := second.Next(ctx, time.Second); n != Aborted {
		t.Fatalf("orphaned at Shutdown: %v, want Aborted", n)
	}
	// Its Aborted is closed too: a write blocked on a client that does not
	// read is cut (handlers.WriteCut), or Close waits out its grace.
	select {
	case <-second.Aborted():
	default:
		t.Fatal("Shutdown does not close an orphaned subscription's Aborted")
	}
	second.Close()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	// A transport orphaned after Shutdown is aborted at once.
	s.Open(key("q"), 1)
	third, _ := s.Subscribe(ctx, key("q"), false)
	fourth, _ := s.Subscribe(ctx, key("q"), false)
	third.Close()
	select {
	case <-fourth.Aborted():
	default:
		t.Fatal("a transport orphaned after Shutdown is not aborted")
	}
	fourth.Close()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	// After Shutdown a subscriber that finds no transport does not wait.
	slow := New(Options{BufferBytes: 1, Wait: time.Hour})
	slow.Shutdown()
	bounded, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, ok := slow.Subscribe(bounded, key("r"), false); ok || bounded.Err() != nil {
		t.Fatal("Subscribe after Shutdown found a transport or waited")
	}
	s.Shutdown() // twice is fine
}

// A subscriber waiting for a transport gives up when its ctx ends.
func TestWaitCtx(t *testing.T) {
	s := New(Options{BufferBytes: 1, Wait: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := s.Subscribe(ctx, key("r"), false); ok {
		t.Fatal("subscribed to no transport")
	}
}

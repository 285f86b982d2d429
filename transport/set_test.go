package transport

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func newSet(t *testing.T, bound int) (*Set, *bytes.Buffer) {
	t.Helper()
	var log bytes.Buffer
	s := New(Options{BufferBytes: bound, Wait: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	t.Cleanup(func() {
		if err := s.Check(); err != nil {
			t.Error(err)
		}
	})
	return s, &log
}

func key(run string) Key { return Key{NS: "ns", Branch: "main", Run: run} }

// H5: a transport buffers frames up to exactly the bound; the frame that
// would pass it destroys the transport with one WARN naming the run, and
// that frame and every later one are undelivered.
func TestBufferBound(t *testing.T) {
	for _, c := range []struct {
		name     string
		frames   []int
		buffered int  // frames buffered at the end
		closed   bool // the transport was destroyed
	}{
		{"under the bound", []int{3, 3}, 2, false},
		{"exactly the bound", []int{5, 5}, 2, false},
		{"one byte past", []int{5, 5, 1}, 0, true},
		{"a first frame past it", []int{11}, 0, true},
		{"later frames after the close", []int{5, 6, 1, 1}, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, log := newSet(t, 10)
			s.Open(key("r"), 100)
			for _, n := range c.frames {
				s.Deliver(key("r"), bytes.Repeat([]byte("x"), n))
				if err := s.Check(); err != nil {
					t.Fatal(err)
				}
			}
			if got := s.Has(key("r")); got == c.closed {
				t.Fatalf("transport exists = %v", got)
			}
			if st := s.Stat(key("r")); st.Buffered != c.buffered {
				t.Fatalf("stat %+v, want %d buffered", st, c.buffered)
			}
			warns := strings.Count(log.String(), "level=WARN")
			if want := map[bool]int{true: 1}[c.closed]; warns != want || (c.closed && !strings.Contains(log.String(), "run_id=r")) {
				t.Fatalf("%d WARN lines, want %d: %s", warns, want, log.String())
			}
		})
	}
}

// A subscriber under a transport that passes the bound ends at once: its
// Aborted channel closes and Next answers Aborted, not the buffered frames.
func TestBufferBoundAbortsSubscriber(t *testing.T) {
	s, _ := newSet(t, 10)
	s.Open(key("r"), 100)
	sub, ok := s.Subscribe(context.Background(), key("r"), false)
	if !ok {
		t.Fatal("no transport")
	}
	defer sub.Close()
	s.Deliver(key("r"), []byte("12345678"))
	s.Deliver(key("r"), []byte("123"))
	select {
	case <-sub.Aborted():
	default:
		t.Fatal("Aborted not closed")
	}
	if f, next := sub.Next(context.Background(), time.Second); next != Aborted || f != nil {
		t.Fatalf("Next = %q %v, want Aborted", f, next)
	}
}

// Transports expire at a sweep more than runs.TransportRetention (300 s)
// after creation — exactly 300 s is kept — unsubscribed only; a branch
// left without transports keeps no map (Check).
func TestExpire(t *testing.T) {
	for _, c := range []struct {
		name    string
		created float64
		at      float64
		used    bool // a frame was delivered (the stream exists)
		subbed  bool
		kept    bool
	}{
		{"young", 100, 200, false, false, true},
		{"exactly 300 s", 100, 400, false, false, true},
		{"300.5 s", 100, 400.5, false, false, false},
		{"used, unsubscribed", 100, 401, true, false, false},
		{"used, exactly 300 s", 100, 400, true, false, true},
		{"subscribed", 100, 10000, false, true, true},
		{"subscribed and used", 100, 10000, true, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newSet(t, 1<<10)
			s.Open(key("r"), c.created)
			if c.subbed {
				sub, _ := s.Subscribe(context.Background(), key("r"), false)
				defer sub.Close()
			}
			if c.used {
				s.Deliver(key("r"), []byte("data: x\n\n"))
			}
			s.Expire("ns", "main", c.at)
			if got := s.Has(key("r")); got != c.kept {
				t.Fatalf("kept = %v, want %v", got, c.kept)
			}
			if n := len(s.branches); n != map[bool]int{true: 1}[c.kept] {
				t.Fatalf("%d branch maps", n)
			}
		})
	}
}

// Expire walks one branch, whatever the order of creation times; other
// branches and namespaces are left alone.
func TestExpireBranch(t *testing.T) {
	s, _ := newSet(t, 1<<10)
	for run, created := range map[string]float64{"a": 100, "b": 200, "c": 50, "d": 400, "e": 450} {
		s.Open(key(run), created)
	}
	other := Key{NS: "ns", Branch: "feature", Run: "a"}
	s.Open(other, 0)
	s.Expire("ns", "main", 500) // b: exactly 300 s
	for run, want := range map[string]bool{"a": false, "b": true, "c": false, "d": true, "e": true} {
		if got := s.Has(key(run)); got != want {
			t.Errorf("%s exists = %v, want %v", run, got, want)
		}
	}
	if !s.Has(other) {
		t.Error("another branch expired")
	}
}

// Open replaces a transport of an earlier run with the same key; Destroy
// drops a branch's transports, aborting their subscribers; Stat names each
// state as the run view shows it.
func TestOpenDestroyStat(t *testing.T) {
	s, _ := newSet(t, 1<<10)
	ctx := context.Background()
	if st := s.Stat(key("r")); st != (Stat{State: "none"}) {
		t.Fatalf("before Open: %+v", st)
	}
	s.Open(key("r"), 1)
	if st := s.Stat(key("r")); st != (Stat{State: "buffering"}) {
		t.Fatalf("after Open: %+v", st)
	}
	s.Deliver(key("r"), []byte("a"))
	s.Deliver(key("r"), []byte("b"))
	sub, _ := s.Subscribe(ctx, key("r"), false)
	if f, next := sub.Next(ctx, time.Second); next != Frame || string(f) != "a" {
		t.Fatalf("Next = %q %v", f, next)
	}
	if st := s.Stat(key("r")); st != (Stat{State: "subscribed", Buffered: 1, Delivered: 1, Subscribed: true}) {
		t.Fatalf("subscribed: %+v", st)
	}
	s.End(key("r"))
	if st := s.Stat(key("r")); st.State != "closed" {
		t.Fatalf("ended: %+v", st)
	}
	s.Destroy("ns", "main")
	select {
	case <-sub.Aborted():
	default:
		t.Fatal("Destroy did not abort the subscriber")
	}
	if _, next := sub.Next(ctx, time.Second); next != Aborted {
		t.Fatalf("after Destroy: %v", next)
	}
	sub.Close()
	s.Open(key("r"), 2)
	s.Deliver(key("r"), []byte("c"))
	s.Open(key("r"), 3) // a new run with the same id: nothing of the old one
	if st := s.Stat(key("r")); st != (Stat{State: "buffering"}) {
		t.Fatalf("after reopening: %+v", st)
	}
}

// Check finds a destroyed stream left in its branch's map: a stream is
// aborted or orphaned only after it left the map (Deliver past the bound,
// Destroy, Close of one of two subscribers).
func TestCheckFindsDestroyedStreamInMap(t *testing.T) {
	for _, c := range []struct {
		name    string
		destroy func(*stream)
		want    string
	}{
		{"aborted", func(t *stream) { t.abort() }, "transport r was destroyed (aborted true, orphaned false) but is still in its branch's map"},
		{"orphaned", func(t *stream) { t.orphaned = true }, "transport r was destroyed (aborted false, orphaned true) but is still in its branch's map"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(Options{BufferBytes: 10})
			s.Open(key("r"), 1)
			s.Deliver(key("r"), []byte("a"))
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
			c.destroy(s.branches[branch{"ns", "main"}]["r"].t)
			if err := s.Check(); err == nil || err.Error() != c.want {
				t.Fatalf("Check = %v, want %q", err, c.want)
			}
		})
	}
}

package scenarios

import (
	"sync"
	"testing"
	"time"
)

// fakeHost fires entries of a Queue against the real time.
type fakeHost struct {
	mu     sync.Mutex
	q      Queue
	start  time.Time
	frozen bool
	ticks  int
	fired  map[string]time.Duration // run → lateness
}

func (h *fakeHost) now() float64 { return float64(time.Since(h.start)) / float64(time.Millisecond) }

func (h *fakeHost) Tick() (time.Duration, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ticks++
	if h.frozen {
		return 0, false
	}
	now := h.now()
	h.q.Drain(now, func(e Entry) {
		h.fired[e.Run] = time.Duration((now - e.Due) * float64(time.Millisecond))
	})
	e, ok := h.q.Earliest()
	if !ok {
		return 0, false
	}
	return time.Duration((e.Due - h.now()) * float64(time.Millisecond)), true
}

func TestRunner(t *testing.T) {
	h := &fakeHost{start: time.Now(), fired: map[string]time.Duration{}}
	r := NewRunner(h)
	defer r.Close()
	h.mu.Lock()
	h.q.Notify = r.Kick
	for i, d := range []float64{60, 20, 40} {
		h.q.set(Entry{Key: Key{"ns", string(rune('a' + i))}, Due: h.now() + d})
	}
	h.mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for {
		h.mu.Lock()
		n := len(h.fired)
		h.mu.Unlock()
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fired %d of 3", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Idle: the runner waits without ticking.
	h.mu.Lock()
	ticks := h.ticks
	h.mu.Unlock()
	time.Sleep(50 * time.Millisecond)
	h.mu.Lock()
	idle := h.ticks - ticks
	h.mu.Unlock()
	if idle != 0 {
		t.Fatalf("%d ticks while idle", idle)
	}
	// A frozen clock: the runner does not set a timer, whatever is queued.
	h.mu.Lock()
	h.frozen = true
	h.q.set(Entry{Key: Key{"ns", "z"}, Due: h.now()})
	h.mu.Unlock()
	time.Sleep(50 * time.Millisecond)
	h.mu.Lock()
	ticks, fired := h.ticks, len(h.fired)
	h.mu.Unlock()
	if fired != 3 {
		t.Fatalf("fired while frozen")
	}
	time.Sleep(50 * time.Millisecond)
	h.mu.Lock()
	if h.ticks != ticks {
		t.Fatalf("ticked while frozen")
	}
	h.frozen = false
	h.mu.Unlock()
	r.Kick() // unfreezing kicks the runner
	for time.Now().Before(deadline) {
		h.mu.Lock()
		fired = len(h.fired)
		h.mu.Unlock()
		if fired == 4 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("not fired after unfreezing")
}

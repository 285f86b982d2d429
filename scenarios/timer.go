package scenarios

import (
	"sync"
	"time"
)

// Host is what a Runner drives: the gateway, which holds the cursors, the
// Queue and the clock.
type Host interface {
	// Tick fires every step due at the clock's current reading and returns the
	// real time until the next one falls due. ok is false when nothing is
	// scheduled or the clock is frozen: then nothing can fall due until the
	// queue or the clock changes, and whoever changes it calls Kick.
	Tick() (wait time.Duration, ok bool)
}

// Runner fires due steps while the clock runs, with one timer set for the
// earliest due step (scenarios §2). Idle — nothing scheduled, or the
// clock frozen — it waits on a channel and uses no CPU.
type Runner struct {
	host Host
	kick chan struct{}
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// NewRunner starts a runner for h. Close stops it.
func NewRunner(h Host) *Runner {
	r := &Runner{host: h, kick: make(chan struct{}, 1), done: make(chan struct{})}
	r.wg.Add(1)
	go r.loop()
	return r
}

// Kick makes the runner tick now: the queue's earliest entry became earlier,
// or the clock changed. It never blocks, so it may be called under the host's lock.
func (r *Runner) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Close stops the runner and waits for its goroutine (a tick in progress
// finishes first). Later calls do nothing.
func (r *Runner) Close() {
	r.once.Do(func() { close(r.done) })
	r.wg.Wait()
}

func (r *Runner) loop() {
	defer r.wg.Done()
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		if wait, ok := r.host.Tick(); ok {
			t.Reset(max(wait, 0))
		} else {
			t.Stop()
		}
		select {
		case <-r.kick:
		case <-t.C:
		case <-r.done:
			t.Stop()
			return
		}
	}
}

package gateway

import "sync"

// Change is one state change, for the control-plane stream.
type Change struct {
	Kind                                         string // "run.created" | "run.changed" | "run.removed" | "run.event" | "checkpoint" | "clock"
	Namespace, Branch, RunID, Status, Checkpoint string
	Frame                                        []byte // for run.event: the SSE frame bytes emitted
}

// changeQueue hands committed changes to Options.OnChange from one goroutine,
// in commit order. Changes are queued under the gateway lock and heard
// without it, so a slow listener delays only itself.
type changeQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending []Change
	hearing bool // a batch is being heard, outside mu
	closed  bool
	stopped chan struct{}
	hear    func(Change)
}

func newChangeQueue(hear func(Change)) *changeQueue {
	q := &changeQueue{hear: hear, stopped: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	go q.run()
	return q
}

func (q *changeQueue) add(c Change) {
	q.mu.Lock()
	q.pending = append(q.pending, c)
	q.cond.Broadcast()
	q.mu.Unlock()
}

func (q *changeQueue) run() {
	defer close(q.stopped)
	q.mu.Lock()
	for {
		for len(q.pending) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.pending) == 0 {
			q.mu.Unlock()
			return
		}
		batch := q.pending
		q.pending, q.hearing = nil, true
		q.mu.Unlock()
		for _, c := range batch {
			q.hear(c)
		}
		q.mu.Lock()
		q.hearing = false
		q.cond.Broadcast() // wakes drain
	}
}

// drain returns once every change queued before it has been heard.
func (q *changeQueue) drain() {
	q.mu.Lock()
	for (len(q.pending) > 0 || q.hearing) && !q.closed {
		q.cond.Wait()
	}
	q.mu.Unlock()
}

// close delivers what is queued and stops the goroutine.
func (q *changeQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
	<-q.stopped
}

// changed queues c when a listener is set. Callers hold g.mu.
func (g *Gateway) changed(c Change) {
	if g.listening() {
		g.changes.add(c)
	}
}

// HeardChanges returns once Options.OnChange has heard every change committed
// before the call, so that a listener's own events (a fired fault rule) come
// after them, in the order they happened.
func (g *Gateway) HeardChanges() {
	if g.changes != nil {
		g.changes.drain()
	}
}

// listening reports whether changes are wanted: an OnChange is set and, with
// Options.Listening, someone is there to hear them.
func (g *Gateway) listening() bool {
	return g.changes != nil && (g.opts.Listening == nil || g.opts.Listening())
}

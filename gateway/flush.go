package gateway

import (
	"context"
	"sync"

	"github.com/hermes-emulator/hermes-emulator/runs"
	"github.com/hermes-emulator/hermes-emulator/storage"
)

// flusher writes durable batches to storage in the order they were committed,
// many at a time in one SQLite transaction (group commit). State changes are
// made in memory under the gateway lock; the request then waits, without the
// lock, until everything committed before its answer is durable — so no client
// is acknowledged (202, replay, stop…) before what it saw is on disk, while
// concurrent requests share one write.
type flusher struct {
	db       *storage.DB
	mu       sync.Mutex
	cond     *sync.Cond
	pending  []storage.Batch
	enq      uint64 // sequence number of the last enqueued batch
	done     uint64 // every batch up to this one has been attempted
	failed   []failure
	closed   bool
	finished bool // run has returned: nothing more will be written
	stopped  chan struct{}
}

type failure struct {
	from, to uint64
	err      error
}

func newFlusher(db *storage.DB) *flusher {
	f := &flusher{db: db, stopped: make(chan struct{})}
	f.cond = sync.NewCond(&f.mu)
	go f.run()
	return f
}

// enqueue adds a batch and returns its sequence number. Callers hold g.mu, so
// batches are ordered as the changes they record.
func (f *flusher) enqueue(b storage.Batch) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending = append(f.pending, b)
	f.enq++
	f.cond.Broadcast()
	return f.enq
}

// last is the sequence number of the newest batch.
func (f *flusher) last() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.enq
}

// wait blocks until batch seq (and every one before it) was written; it
// returns the storage error when the group holding seq failed.
func (f *flusher) wait(seq uint64) *runs.Error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.done < seq {
		if f.finished {
			return runs.Internal("storage: closed")
		}
		f.cond.Wait()
	}
	for _, fl := range f.failed {
		if seq >= fl.from && seq <= fl.to {
			return errStorage(fl.err)
		}
	}
	return nil
}

func (f *flusher) run() {
	defer close(f.stopped)
	f.mu.Lock()
	for {
		for len(f.pending) == 0 && !f.closed {
			f.cond.Wait()
		}
		if len(f.pending) == 0 && f.closed {
			f.finished = true
			f.cond.Broadcast()
			f.mu.Unlock()
			return
		}
		group, from, to := f.pending, f.done+1, f.enq
		f.pending = nil
		f.mu.Unlock()
		err := f.db.Apply(context.Background(), group...)
		f.mu.Lock()
		if err != nil {
			f.failed = append(f.failed, failure{from, to, err})
			if len(f.failed) > 64 {
				f.failed = f.failed[1:]
			}
		}
		f.done = to
		f.cond.Broadcast()
	}
}

// close writes what is pending and stops the flusher.
func (f *flusher) close() {
	f.mu.Lock()
	f.closed = true
	f.cond.Broadcast()
	f.mu.Unlock()
	<-f.stopped
}

// lock takes the gateway lock and returns the newest durable sequence number;
// with unlockDurable it brackets a change that may enqueue durable batches:
//
//	defer g.unlockDurable(g.lock())
func (g *Gateway) lock() uint64 {
	g.mu.Lock()
	return g.q.last()
}

// unlockDurable releases the lock and, when batches were enqueued since
// before, waits until they are written. It drops a storage error: the
// timeline operations using it have no durable acknowledgement to withdraw,
// and the vendor requests of the same group report the failure (locked).
func (g *Gateway) unlockDurable(before uint64) {
	seq := g.q.last()
	g.mu.Unlock()
	if seq != before {
		_ = g.q.wait(seq)
	}
}

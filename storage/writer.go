package storage

import (
	"context"
	"errors"
	"sync"
)

// errClosed answers a Wait for a batch the closed writer never wrote.
var errClosed = errors.New("storage: closed")

// Writer writes durable batches to a Store in the order they were
// enqueued. With a file (--db) one goroutine writes whatever has gathered in
// one SQLite transaction (group commit): the caller changes its state in memory
// under its own lock, and the request then waits, without the lock, until
// everything committed before its answer is durable — so no client is
// acknowledged before what it saw is on disk. In memory (storage.Memory) a
// batch is applied as it is enqueued.
//
// Invariants: done ≤ enq; pending holds the batches done+1 … enq (file only).
type Writer struct {
	store    Store
	inline   bool // memory: apply in enqueue
	mu       sync.Mutex
	cond     *sync.Cond
	pending  []Batch
	enq      uint64 // sequence number of the last enqueued batch
	done     uint64 // every batch up to this one has been attempted
	failed   []failure
	repair   bool // a batch failed: the store lags memory
	closed   bool
	finished bool // run has returned: nothing more will be written
	stopped  chan struct{}
	onFail   func(error) // may be nil
}

type failure struct {
	seq uint64
	err error
}

// NewWriter starts a writer on store; onFail (may be nil) hears every failed
// write. With a file, one goroutine writes until Close.
func NewWriter(store Store, onFail func(error)) *Writer {
	f := &Writer{store: store, inline: store.Path() == "", stopped: make(chan struct{}), onFail: onFail}
	f.cond = sync.NewCond(&f.mu)
	if f.inline {
		close(f.stopped)
	} else {
		go f.run()
	}
	return f
}

// Enqueue adds a batch and returns its sequence number. Callers serialise
// their calls, so batches are ordered as the changes they record.
func (f *Writer) Enqueue(b Batch) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.enq++
	if f.inline {
		if err := f.store.Apply(context.Background(), b); err != nil {
			f.fail(f.enq, err)
		}
		f.done = f.enq
		return f.enq
	}
	f.pending = append(f.pending, b)
	f.cond.Broadcast()
	return f.enq
}

// fail records the failure of batch seq; callers hold f.mu.
func (f *Writer) fail(seq uint64, err error) {
	f.failed = append(f.failed, failure{seq, err})
	if n := len(f.failed); n > 1024 {
		f.failed = f.failed[n-1024:]
	}
	f.repair = true
	if f.onFail != nil {
		f.onFail(err)
	}
}

// Last is the sequence number of the newest batch.
func (f *Writer) Last() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.enq
}

// Wait blocks until batch seq (and every one before it) was attempted; it
// returns the storage error of a batch numbered after before and up to seq —
// the batches of the waiting request — that failed. A failure of an earlier
// batch is someone else's: it was answered there, and repair rewrites it.
func (f *Writer) Wait(before, seq uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.done < seq {
		if f.finished {
			return errClosed
		}
		f.cond.Wait()
	}
	for _, fl := range f.failed {
		if fl.seq > before && fl.seq <= seq {
			return fl.err
		}
	}
	return nil
}

// NeedsRepair reports, once, that a batch failed since the last call: the
// store then lags memory and must be rewritten (the caller rewrites it).
func (f *Writer) NeedsRepair() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.repair
	f.repair = false
	return r
}

func (f *Writer) run() {
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
		var failed []failure
		if err := f.store.Apply(context.Background(), group...); err != nil {
			// Retry one by one, so that a failure belongs to the batch
			// that caused it and the others still get written.
			for i, b := range group {
				if err := f.store.Apply(context.Background(), b); err != nil {
					failed = append(failed, failure{from + uint64(i), err})
				}
			}
		}
		f.mu.Lock()
		for _, fl := range failed {
			f.fail(fl.seq, fl.err)
		}
		f.done = to
		f.cond.Broadcast()
	}
}

// Close writes what is pending and stops the Writer.
func (f *Writer) Close() {
	f.mu.Lock()
	f.closed = true
	if f.inline {
		f.finished = true
	}
	f.cond.Broadcast()
	f.mu.Unlock()
	<-f.stopped
}

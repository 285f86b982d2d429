package gateway

import (
	"context"
	"runtime"
	"sync"
	"time"

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
	repair   bool // a batch failed: the store lags memory
	closed   bool
	finished bool // run has returned: nothing more will be written
	stopped  chan struct{}
	onFail   func(error)   // may be nil
	gather   time.Duration // wait this long for more batches before writing (gatherInMemory)
	writes   int           // transactions written, for tests
}

type failure struct {
	seq uint64
	err error
}

// gatherInMemory is how long the flusher of a private database lets batches
// gather before it writes them. Nobody waits for that store, and a SQLite
// transaction costs about as much as 40 reservation rows: written as they
// came (~4 batches a transaction under a keyed load) the mirror took ~30% of
// the CPU; gathered for 2 ms, ~30 batches share one.
const gatherInMemory = 2 * time.Millisecond

func newFlusher(db *storage.DB, onFail func(error)) *flusher {
	f := &flusher{db: db, stopped: make(chan struct{}), onFail: onFail}
	if db.Path() == "" {
		f.gather = gatherInMemory
	}
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

// maxBehind is how many batches may wait to be written before requests that
// need not wait for them (in memory) wait all the same.
const maxBehind = 4096

// behind reports whether more than maxBehind batches wait to be written.
func (f *flusher) behind() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.enq-f.done > maxBehind
}

// last is the sequence number of the newest batch.
func (f *flusher) last() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.enq
}

// wait blocks until batch seq (and every one before it) was attempted; it
// returns the storage error of a batch numbered after before and up to seq —
// the batches of the waiting request — that failed. A failure of an earlier
// batch is someone else's: it was answered there, and repair rewrites it.
func (f *flusher) wait(before, seq uint64) *runs.Error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.done < seq {
		if f.finished {
			return runs.Internal("storage: closed")
		}
		f.cond.Wait()
	}
	for _, fl := range f.failed {
		if fl.seq > before && fl.seq <= seq {
			return errStorage(fl.err)
		}
	}
	return nil
}

// needsRepair reports, once, that a batch failed since the last call: the
// store then lags memory and must be rewritten (Gateway.repair).
func (f *flusher) needsRepair() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.repair
	f.repair = false
	return r
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
		switch {
		case f.closed:
		case f.gather == 0:
			// Requests wait for this write (--db): yield once, so that
			// those already running enqueue their batches into it. Under a
			// keyed load that doubles the batches a transaction (~2.5 → ~5)
			// and takes ~5–10% of the server's CPU per submission off.
			f.mu.Unlock()
			runtime.Gosched()
			f.mu.Lock()
		case f.enq-f.done <= maxBehind/2:
			f.mu.Unlock()
			time.Sleep(f.gather)
			f.mu.Lock()
		}
		group, from, to := f.pending, f.done+1, f.enq
		f.pending = nil
		f.writes++
		f.mu.Unlock()
		renderPlain(group)
		var failed []failure
		if err := f.db.Apply(context.Background(), group...); err != nil {
			// Retry one by one, so that a failure belongs to the batch
			// that caused it and the others still get written.
			for i, b := range group {
				if err := f.db.Apply(context.Background(), b); err != nil {
					failed = append(failed, failure{from + uint64(i), err})
					if f.onFail != nil {
						f.onFail(err)
					}
				}
			}
		}
		f.mu.Lock()
		if len(failed) > 0 {
			f.failed = append(f.failed, failed...)
			if n := len(f.failed); n > 1024 {
				f.failed = f.failed[n-1024:]
			}
			f.repair = true
		}
		f.done = to
		f.cond.Broadcast()
	}
}

// renderPlain fills the records that Reservation.row left to render: the
// batches are the flusher's alone once enqueued.
func renderPlain(group []storage.Batch) {
	for i := range group {
		for j := range group[i].Upsert {
			if r := &group[i].Upsert[j]; r.Record == nil {
				r.Record = plainRecord(r.RunID, r.UpdatedAt)
			}
		}
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
	g.fire()
	if seq != before && g.waits() {
		_ = g.q.wait(before, seq)
	}
}

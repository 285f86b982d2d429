package storage

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/jmoiron/sqlx"
)

// checkpointer copies the WAL's committed pages into the database file
// (PRAGMA wal_checkpoint(PASSIVE)) on a connection of its own, every
// checkpointEvery committed batches. Without it SQLite checkpoints inside the
// commit that crosses wal_autocheckpoint, and that commit — with every
// request of its group waiting for it — waits for the whole copy and two
// fsyncs: at 1,000 keyed admissions a second the p99 was 30–90 ms against
// 1–2 ms for the rest.
//
// A PASSIVE checkpoint takes no lock a writer needs, so commits go on
// meanwhile. Under a steady load some commit always lands during a
// checkpoint, so the WAL is not started over until it reaches the writes'
// connection's wal_autocheckpoint (64 MiB): that checkpoint, still on a
// commit, now finds nearly every page already copied.
//
// Kicks coalesce: at most one checkpoint runs and at most one is pending.
type checkpointer struct {
	x          *sqlx.DB
	checkpoint func() error
	wake       chan struct{} // one pending checkpoint at most
	// batches counts the batches committed since the last kick.
	batches atomic.Int64
	stop    chan struct{}
	done    chan error
}

func startCheckpointer(dsn string) (*checkpointer, error) {
	x, err := sqlx.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("storage: open checkpointer: %w", err)
	}
	x.SetMaxOpenConns(1)
	return newCheckpointer(x, func() error {
		_, err := x.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
		return err
	}), nil
}

// newCheckpointer starts a checkpointer that runs checkpoint on each kick and
// closes x in close.
func newCheckpointer(x *sqlx.DB, checkpoint func() error) *checkpointer {
	c := &checkpointer{x: x, checkpoint: checkpoint, wake: make(chan struct{}, 1), stop: make(chan struct{}),
		done: make(chan error, 1)}
	go c.run()
	return c
}

func (c *checkpointer) run() {
	var last error
	for {
		select {
		case <-c.stop:
			c.done <- last
			return
		case <-c.wake:
		}
		// A failed checkpoint loses nothing (the frames stay in the WAL, and
		// the next checkpoint copies them): only the last one's error is
		// kept for close, so a failure that a later checkpoint made good
		// does not fail the shutdown.
		last = nil
		if err := c.checkpoint(); err != nil {
			last = fmt.Errorf("storage: checkpoint: %w", err)
		}
	}
}

// checkpointEvery is how many committed batches ask for a checkpoint: each
// costs two fsyncs, so one per commit would take a third of the keyed
// throughput; 256 batches are a few MiB of WAL (a keyed admission's commit
// adds ~16–22 KiB of pages).
const checkpointEvery = 256

// committed counts n batches committed and asks for a checkpoint every
// checkpointEvery of them; it never blocks.
func (c *checkpointer) committed(n int) {
	if c.batches.Add(int64(n)) < checkpointEvery {
		return
	}
	c.batches.Store(0)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// close stops the checkpointer (DB.Close, once) and closes its connection;
// it returns the error of the last checkpoint when that one failed.
func (c *checkpointer) close() error {
	close(c.stop)
	err := <-c.done
	if cerr := c.x.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("storage: close checkpointer: %w", cerr)
	}
	return err
}

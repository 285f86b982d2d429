package gateway

// lock takes the gateway lock and returns the newest durable sequence number;
// with unlockDurable it brackets a change that may enqueue durable batches:
//
//	defer g.unlockDurable(g.lock())
func (g *Gateway) lock() uint64 {
	g.mu.Lock()
	return g.q.Last()
}

// unlockDurable releases the lock and, when batches were enqueued since
// before, waits until they are written. It drops a storage error: the
// timeline operations using it have no durable acknowledgement to withdraw,
// and the vendor requests of the same group report the failure (locked).
func (g *Gateway) unlockDurable(before uint64) {
	seq := g.q.Last()
	g.mu.Unlock()
	if seq != before && g.waits() {
		_ = g.q.Wait(before, seq)
	}
}

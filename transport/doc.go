// Package transport holds the SSE transports of RunEvents (runs-api §6.4.1):
// one per admitted run, per namespace branch. They are process state, never
// persisted or checkpointed. Frames are buffered until a subscriber takes them;
// a transport is destroyed when its subscriber leaves, on expiry, on reset,
// checkout and restart of its branch, at shutdown, and when its buffer would
// pass the bound.
//
// Files, their job and their invariants:
//
//	set.go          Set: the per-branch maps of slots (a run's creation time;
//	                its stream is made on first use, so a retained run that is
//	                never watched holds no buffer). A stream's buffered bytes are
//	                the sum of its frames' lengths and never pass
//	                Options.BufferBytes (hardening H5): a frame that would pass
//	                it destroys the stream with one WARN, and that frame and
//	                later ones are undelivered. No branch keeps an empty map.
//	                Expire destroys unsubscribed transports created more than
//	                runs.TransportRetention before the sweep (runs-api §11.2).
//	                A transport destroyed because one of its two subscribers
//	                left (orphaned: keepalives only) is in no map but in the
//	                orphan list while the other stays, so that Shutdown aborts
//	                it too: every subscription's Aborted is closed at Shutdown.
//	subscription.go Subscribe and Subscription: waiting for the next frame, the
//	                end of the stream, a keepalive or an abort.
//
// Set.Check verifies the invariants; the tests of this package and the
// gateway's call it.
//
// Locking: a Set has its own mutex, and it never calls out while holding it
// (the WARN is logged after). The gateway calls Open, Deliver and End under
// its own lock as it commits, so frames are buffered at commit time in commit
// order; subscribers take only the Set's lock.
package transport

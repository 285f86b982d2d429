package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// The binary sizes the garbage collector's headroom to the part of the heap
// that costs marking. Go's default (GOGC=100) lets the heap grow by as much as
// is live before it collects, which keeps the cost of marking per allocated
// byte bounded. Most of what the emulator keeps under a load is the cache
// layer's run and reservation logs: arrays of integers and key bytes that
// hold no pointers, are never garbage and cost nothing to mark — yet under
// GOGC=100 each of their bytes buys one more byte of headroom, so a keyed load
// of 200,000 reservations held ~10 MB of RSS for nothing.
//
// After every collection, tuneGC sets GOGC so that the headroom is the bytes
// the collector scans (heap objects with pointers, stacks, globals), and at
// least minHeadroom: marking stays bounded as under GOGC=100, and pointer-free
// data no longer doubles. GOGC never rises above 100. A GOGC in the
// environment turns the tuning off. Only the binary does this: an embedded
// emulator leaves its host process's collector alone.

// minHeadroom is the smallest headroom tuneGC gives: Go's own minimum heap.
const minHeadroom = 4 << 20

// gcPercent is the GOGC that makes the heap goal live + max(minHeadroom, scan),
// where Go computes the goal as live + (live + stacks + globals) × GOGC/100.
// live is the live heap, scan the bytes the collector scans (live heap with
// pointers + stacks + globals). Clamped to 1..100.
func gcPercent(live, stacks, globals, scan uint64) int {
	headroom := max(minHeadroom, scan)
	base := live + stacks + globals
	if base == 0 {
		return 100
	}
	p := (100*headroom + base - 1) / base
	return int(min(max(p, 1), 100))
}

// tuneGC starts the tuning unless GOGC is set; it re-tunes after each
// collection (a cleanup on a sentinel object runs once per cycle that finds it
// unreachable, and arms the next).
func tuneGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	samples := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
		{Name: "/gc/scan/total:bytes"},
	}
	var arm func()
	arm = func() {
		runtime.AddCleanup(new(gcSentinel), func(struct{}) {
			metrics.Read(samples)
			debug.SetGCPercent(gcPercent(samples[0].Value.Uint64(), samples[1].Value.Uint64(),
				samples[2].Value.Uint64(), samples[3].Value.Uint64()))
			arm()
		}, struct{}{})
	}
	arm()
}

// gcSentinel is a heap object with a pointer, so it is never a tiny
// allocation (whose cleanups may run late or never).
type gcSentinel struct{ _ *int }

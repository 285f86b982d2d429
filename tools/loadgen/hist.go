package main

import (
	"math/bits"
	"time"
)

// histSub is the number of sub-buckets per power of two: a recorded latency is
// kept with a relative error below 1/histSub (1.6 %), like an HdrHistogram
// with two significant digits.
const histSub = 64

// hist is a log-linear latency histogram of nanosecond values. Values below
// histSub ns are exact; above, bucket i covers [lo(i), lo(i+1)). It is not safe
// for concurrent use: each connection records into its own and they are merged.
type hist struct {
	counts [64 * histSub]uint64
	n      uint64
	max    time.Duration
}

func histIndex(v uint64) int {
	if v < histSub {
		return int(v)
	}
	shift := bits.Len64(v) - 7 // v>>shift is in [64, 128)
	return (shift+1)*histSub + int(v>>uint(shift)) - histSub
}

// histLow is the smallest value of bucket i.
func histLow(i int) uint64 {
	if i < histSub {
		return uint64(i)
	}
	shift := i/histSub - 1
	return uint64(i%histSub+histSub) << uint(shift)
}

// record adds one latency.
func (h *hist) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[histIndex(uint64(d))]++
	h.n++
	if d > h.max {
		h.max = d
	}
}

// merge adds o's counts to h.
func (h *hist) merge(o *hist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	if o.max > h.max {
		h.max = o.max
	}
}

// quantile returns the latency at quantile q (0 < q ≤ 1): the midpoint of the
// bucket holding the ceil(q·n)-th smallest value, capped at the maximum seen.
// It is 0 for an empty histogram.
func (h *hist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.999999999)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := histLow(i), histLow(i+1)
			mid := time.Duration(lo + (hi-lo)/2)
			if i < histSub {
				mid = time.Duration(lo)
			}
			return min(mid, h.max)
		}
	}
	return h.max
}

// ms converts a duration to float milliseconds.
func ms(d time.Duration) float64 { return float64(d) / 1e6 }

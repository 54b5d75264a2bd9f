package loadgen

import "math/bits"

// hist is a log-linear latency histogram in nanoseconds: exact below 128 ns,
// then 64 sub-buckets per power of two (relative error under 1.6%), like
// HdrHistogram with two significant digits. Recording is an index
// computation and an increment, so each worker keeps its own.
type hist struct {
	counts [subCount * 40]uint64
	n      uint64
}

const (
	subBits  = 6
	subCount = 1 << subBits
)

func bucket(v uint64) int {
	if v < 2*subCount {
		return int(v)
	}
	shift := bits.Len64(v) - (subBits + 1)
	return (shift+1)<<subBits + int(v>>uint(shift)) - subCount
}

// bucketValue is the midpoint of bucket i.
func bucketValue(i int) uint64 {
	if i < 2*subCount {
		return uint64(i)
	}
	shift := i>>subBits - 1
	lo := uint64(i&(subCount-1)+subCount) << uint(shift)
	return lo + (uint64(1)<<uint(shift))/2
}

func (h *hist) record(ns int64) {
	if ns < 0 {
		ns = 0
	}
	i := bucket(uint64(ns))
	if i >= len(h.counts) {
		i = len(h.counts) - 1
	}
	h.counts[i]++
	h.n++
}

func (h *hist) merge(o *hist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

// quantile returns the q-quantile (0..1) in nanoseconds.
func (h *hist) quantile(q float64) uint64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return bucketValue(i)
		}
	}
	return bucketValue(len(h.counts) - 1)
}

package actors

import (
	"math/rand/v2"
	"runtime"
)

// Every tools/call enters and leaves two shared structures, the call pool
// and the watchdog. Behind one mutex each, calls on different cores take
// turns and bounce its cache line between them, a cost already visible
// with two cores that more cores would only make longer (bench/README.md,
// "Numbers behind the code's comments"). So each is split
// into shards, a call picks one at random, and the shards are padded so
// that two never share a cache line.

// shardCount is the number of shards for GOMAXPROCS: the next power of two
// at or above it, at most 64. One core needs one shard, and one shard costs
// nothing to pick.
func shardCount() int {
	n := 1
	for n < runtime.GOMAXPROCS(0) && n < 64 {
		n <<= 1
	}
	return n
}

// pickShard returns a random shard index below n, a power of two. The
// runtime's per-thread generator makes it cheap and uncontended.
func pickShard(n int) int {
	if n == 1 {
		return 0
	}
	return int(rand.Uint32() & uint32(n-1))
}

// cacheLinePad keeps a shard's hot fields off its neighbours' cache lines.
type cacheLinePad [64]byte

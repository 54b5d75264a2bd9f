package access

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"sync"
	"time"
)

// Limit is a rate of calls: at most Calls per Per for one caller, with a
// burst of Calls (a token bucket of Calls tokens, filled at Calls per
// Per). The zero Limit is no limit.
type Limit struct {
	Calls int
	Per   time.Duration
}

// IsZero reports whether l limits nothing.
func (l Limit) IsZero() bool { return l.Calls == 0 && l.Per == 0 }

// Validate reports a limit that could not be counted: a negative count, or
// a count without a positive interval.
func (l Limit) Validate() error {
	switch {
	case l.IsZero():
		return nil
	case l.Calls <= 0:
		return fmt.Errorf("calls must be positive, not %d", l.Calls)
	case l.Per <= 0:
		return fmt.Errorf("per must be a positive duration, not %v", l.Per)
	}
	return nil
}

// Limiter counts calls against limits, by key. The server makes the key of
// the limit's place (a view, an upstream, a tool) and of the caller (the
// token's subject and client; without auth, the client's address), and
// calls Take once per tools/call that a limit applies to, before the tool
// runs.
//
// Take returns whether the call may go on and, when not, how long until
// one would. It is called concurrently and must be safe for that. An error
// (a shared store unreachable) admits the call and is logged: a limiter's
// outage never takes the tools down with it; a limiter that would rather
// refuse returns false instead.
//
// [NewLimiter] counts in this process only: behind N replicas that a
// balancer sends a caller to in turn, the caller gets about N times the
// limit. For an exact limit across replicas, give every replica a Limiter
// over a shared store (a Redis INCR with an expiry per key and interval,
// say): the key is the whole identity of the bucket.
type Limiter interface {
	Take(ctx context.Context, key string, l Limit) (ok bool, retryAfter time.Duration, err error)
}

// DefaultMaxKeys is the number of buckets [NewLimiter] holds at most when
// given 0.
const DefaultMaxKeys = 100_000

// limiterShards spreads the buckets over locks, so that callers on
// different cores seldom wait for one another.
const limiterShards = 16

// NewLimiter returns the per-replica Limiter: a token bucket per key, held
// in memory. Memory is bounded: a bucket full again (its caller idle for a
// whole interval) is the same as none and is dropped when its shard is
// swept, and at most maxKeys buckets are held (0: DefaultMaxKeys); past
// that, a new key first sweeps its shard, then takes the place of an
// arbitrary bucket of it, whose caller so starts afresh: under a flood of
// new callers, the limit of some is forgotten rather than the memory grown.
func NewLimiter(maxKeys int) Limiter {
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	l := &limiter{seed: maphash.MakeSeed(), perShard: max(1, maxKeys/limiterShards)}
	for i := range l.shards {
		l.shards[i].buckets = map[string]*bucket{}
	}
	return l
}

type limiter struct {
	seed     maphash.Seed
	perShard int
	shards   [limiterShards]shard
}

type shard struct {
	mu      sync.Mutex
	buckets map[string]*bucket
	// swept is when the shard was last swept for full buckets: at most
	// once a second, so that a flood of new keys among busy ones costs a
	// map deletion each, not a walk of the shard each.
	swept time.Time
}

// bucket holds the tokens left at last, when they were counted, and the
// limit they count against (a key's limit may change with a reload).
type bucket struct {
	tokens float64
	last   time.Time
	limit  Limit
}

// fill returns the bucket's tokens at now.
func (b *bucket) fill(now time.Time) float64 {
	rate := float64(b.limit.Calls) / float64(b.limit.Per)
	return min(float64(b.limit.Calls), b.tokens+float64(now.Sub(b.last))*rate)
}

// Take implements Limiter.
func (l *limiter) Take(_ context.Context, key string, lim Limit) (bool, time.Duration, error) {
	if lim.Calls <= 0 || lim.Per <= 0 {
		return true, 0, nil
	}
	s := &l.shards[maphash.String(l.seed, key)%limiterShards]
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[key]
	if b == nil || b.limit != lim {
		if b == nil && len(s.buckets) >= l.perShard {
			s.makeRoom(now, l.perShard)
		}
		b = &bucket{tokens: float64(lim.Calls), last: now, limit: lim}
		s.buckets[key] = b
	}
	b.tokens, b.last = b.fill(now), now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0, nil
	}
	// A wait past what a Duration holds (a Per near its largest) is the
	// largest: converting it would be undefined.
	wait := time.Duration(math.MaxInt64)
	if w := (1 - b.tokens) * float64(lim.Per) / float64(lim.Calls); w < math.MaxInt64 {
		wait = time.Duration(w)
	}
	return false, max(wait, time.Millisecond), nil
}

// makeRoom drops the shard's full buckets (at most once a second), and an
// arbitrary one when that leaves it full; s.mu is held.
func (s *shard) makeRoom(now time.Time, perShard int) {
	if now.Sub(s.swept) >= time.Second {
		s.swept = now
		for k, b := range s.buckets {
			if b.fill(now) >= float64(b.limit.Calls) {
				delete(s.buckets, k)
			}
		}
	}
	for k := range s.buckets {
		if len(s.buckets) < perShard {
			return
		}
		delete(s.buckets, k)
	}
}

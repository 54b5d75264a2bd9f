package auth

import (
	"hash/maphash"
	"sync"
	"time"
)

// DefaultCacheSize is the number of verified tokens an authenticator
// remembers. Clients reuse one token for every request until it expires,
// so a cache of recent tokens turns the signature check (tens of µs for
// RS256 or ES256) or the introspection round trip (milliseconds) into a
// map lookup for all but a token's first request.
const DefaultCacheSize = 4096

// maxCachedToken bounds the tokens that are cached: longer ones are
// checked every time, so that the cache's memory stays bounded by
// DefaultCacheSize × 4 KiB.
const maxCachedToken = 4 << 10

// cacheShards spreads the cache's locks so that parallel requests with
// different tokens do not queue on one.
const cacheShards = 16

// tokenCache remembers verdicts on tokens, keyed by the token itself (the
// exact bytes that were checked: a different token can never hit), each
// until its own deadline. It is bounded: a full shard forgets an arbitrary
// entry to make room.
type tokenCache[V any] struct {
	seed     maphash.Seed
	perShard int
	shards   [cacheShards]cacheShard[V]
}

type cacheShard[V any] struct {
	mu sync.RWMutex
	m  map[string]cacheEntry[V]
}

type cacheEntry[V any] struct {
	v     V
	until time.Time
}

// newTokenCache returns a cache of about size entries; nil when size is
// negative (caching off).
func newTokenCache[V any](size int) *tokenCache[V] {
	if size < 0 {
		return nil
	}
	if size == 0 {
		size = DefaultCacheSize
	}
	c := &tokenCache[V]{seed: maphash.MakeSeed(), perShard: max(1, size/cacheShards)}
	for i := range c.shards {
		c.shards[i].m = map[string]cacheEntry[V]{}
	}
	return c
}

func (c *tokenCache[V]) shard(token string) *cacheShard[V] {
	return &c.shards[maphash.String(c.seed, token)%cacheShards]
}

// get returns the verdict on token while it is valid at now.
func (c *tokenCache[V]) get(token string, now time.Time) (V, bool) {
	var zero V
	if c == nil {
		return zero, false
	}
	s := c.shard(token)
	s.mu.RLock()
	e, ok := s.m[token]
	s.mu.RUnlock()
	if !ok {
		return zero, false
	}
	if !now.Before(e.until) {
		s.mu.Lock()
		if cur, ok := s.m[token]; ok && !now.Before(cur.until) {
			delete(s.m, token)
		}
		s.mu.Unlock()
		return zero, false
	}
	return e.v, true
}

// put remembers v for token until the given time.
func (c *tokenCache[V]) put(token string, v V, until time.Time) {
	if c == nil || len(token) > maxCachedToken {
		return
	}
	s := c.shard(token)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[token]; !ok && len(s.m) >= c.perShard {
		for k := range s.m { // evict one, arbitrarily
			delete(s.m, k)
			break
		}
	}
	s.m[token] = cacheEntry[V]{v: v, until: until}
}

// forget drops token's verdict.
func (c *tokenCache[V]) forget(token string) {
	if c == nil {
		return
	}
	s := c.shard(token)
	s.mu.Lock()
	delete(s.m, token)
	s.mu.Unlock()
}

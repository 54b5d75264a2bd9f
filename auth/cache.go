package auth

import (
	"crypto/sha256"
	"hash/maphash"
	"sync"
	"time"
)

// defaultCacheSize is the number of verified tokens an authenticator
// remembers when its options' CacheSize is 0. Clients reuse one token for
// every request until it expires, so a cache of recent tokens turns the
// signature check (tens of µs for RS256 or ES256) or the introspection
// round trip (milliseconds) into a map lookup for all but a token's first
// request.
const defaultCacheSize = 4096

// maxKeyedToken bounds the tokens that key the cache as they are: a
// longer one (up to maxTokenBytes) is keyed by its SHA-256 instead, so
// that the keys' memory stays bounded by defaultCacheSize × 4 KiB while
// long tokens are cached like short ones (a client retrying a large dead
// token would otherwise cost a check, or a call, per request). Short
// tokens, nearly all of them, skip the hash.
const maxKeyedToken = 4 << 10

// cacheShards spreads the cache's locks so that parallel requests with
// different tokens do not queue on one.
const cacheShards = 16

// tokenCache remembers verdicts on tokens, keyed by the token itself (the
// exact bytes that were checked: a different token can never hit), or by
// its SHA-256 when it is longer than maxKeyedToken, each until its own
// deadline. It is bounded: a full shard forgets an arbitrary entry to make
// room.
type tokenCache[V any] struct {
	seed     maphash.Seed
	perShard int
	shards   [cacheShards]cacheShard[V]
}

type cacheShard[V any] struct {
	mu sync.RWMutex
	m  map[string]cacheEntry[V]            // tokens up to maxKeyedToken bytes
	h  map[[sha256.Size]byte]cacheEntry[V] // longer ones, by their SHA-256
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
		size = defaultCacheSize
	}
	c := &tokenCache[V]{seed: maphash.MakeSeed(), perShard: max(1, size/cacheShards)}
	for i := range c.shards {
		c.shards[i].m = map[string]cacheEntry[V]{}
		c.shards[i].h = map[[sha256.Size]byte]cacheEntry[V]{}
	}
	return c
}

// get returns the verdict on token while it is valid at now.
func (c *tokenCache[V]) get(token string, now time.Time) (V, bool) {
	var zero V
	if c == nil {
		return zero, false
	}
	if len(token) > maxKeyedToken {
		s, d := c.long(token)
		return get(s, s.h, d, now)
	}
	s := c.short(token)
	return get(s, s.m, token, now)
}

// put remembers v for token until the given time.
func (c *tokenCache[V]) put(token string, v V, until time.Time) {
	if c == nil {
		return
	}
	e := cacheEntry[V]{v: v, until: until}
	if len(token) > maxKeyedToken {
		s, d := c.long(token)
		s.mu.Lock()
		put(s, s.h, d, e, c.perShard)
		s.mu.Unlock()
		return
	}
	s := c.short(token)
	s.mu.Lock()
	put(s, s.m, token, e, c.perShard)
	s.mu.Unlock()
}

// forget drops token's verdict.
func (c *tokenCache[V]) forget(token string) {
	if c == nil {
		return
	}
	if len(token) > maxKeyedToken {
		s, d := c.long(token)
		s.mu.Lock()
		delete(s.h, d)
		s.mu.Unlock()
		return
	}
	s := c.short(token)
	s.mu.Lock()
	delete(s.m, token)
	s.mu.Unlock()
}

// short returns the shard of a token up to maxKeyedToken bytes.
func (c *tokenCache[V]) short(token string) *cacheShard[V] {
	return &c.shards[maphash.String(c.seed, token)%cacheShards]
}

// long returns the shard and the key of a longer token: its SHA-256.
func (c *tokenCache[V]) long(token string) (*cacheShard[V], [sha256.Size]byte) {
	d := sha256.Sum256([]byte(token))
	return &c.shards[maphash.Bytes(c.seed, d[:])%cacheShards], d
}

// get is tokenCache.get on m, one of s's maps.
func get[K comparable, V any](s *cacheShard[V], m map[K]cacheEntry[V], key K, now time.Time) (V, bool) {
	var zero V
	s.mu.RLock()
	e, ok := m[key]
	s.mu.RUnlock()
	if !ok {
		return zero, false
	}
	if !now.Before(e.until) {
		s.mu.Lock()
		if cur, ok := m[key]; ok && !now.Before(cur.until) {
			delete(m, key)
		}
		s.mu.Unlock()
		return zero, false
	}
	return e.v, true
}

// put stores e under key in m, one of s's maps, first evicting an
// arbitrary entry of s (of m when it has one) when s is full. Called with
// s locked.
func put[K comparable, V any](s *cacheShard[V], m map[K]cacheEntry[V], key K, e cacheEntry[V], perShard int) {
	if _, ok := m[key]; !ok && len(s.m)+len(s.h) >= perShard {
		if len(m) > 0 {
			evictOne(m)
		} else { // the other map is the full one
			evictOne(s.m)
			evictOne(s.h)
		}
	}
	m[key] = e
}

// evictOne deletes an arbitrary entry of m, if it has one.
func evictOne[K comparable, V any](m map[K]cacheEntry[V]) {
	for k := range m {
		delete(m, k)
		return
	}
}

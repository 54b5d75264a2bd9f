package auth

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTokenCacheLongTokens: a token longer than maxKeyedToken (up to
// maxTokenBytes) is cached like a short one, keyed by its digest: it
// hits, a token differing in one byte does not, forget drops it, and
// short and long tokens of one cache do not meet.
func TestTokenCacheLongTokens(t *testing.T) {
	t.Parallel()
	c := newTokenCache[string](0)
	now := time.Now()
	until := now.Add(time.Minute)
	for _, n := range []int{maxKeyedToken, maxKeyedToken + 1, 5 << 10, 6 << 10, maxTokenBytes} {
		token := strings.Repeat("A", n-1) + "x"
		other := strings.Repeat("A", n-1) + "y"
		c.put(token, "v"+strconv.Itoa(n), until)
		if v, ok := c.get(token, now); !ok || v != "v"+strconv.Itoa(n) {
			t.Errorf("a %d-byte token: get = %q, %v after put", n, v, ok)
		}
		if v, ok := c.get(other, now); ok {
			t.Errorf("another %d-byte token hit %q", n, v)
		}
		if _, ok := c.get(token, until); ok {
			t.Errorf("a %d-byte token hit at its deadline", n)
		}
		c.put(token, "again", until)
		c.forget(token)
		if _, ok := c.get(token, now); ok {
			t.Errorf("a %d-byte token hit after forget", n)
		}
	}
	short, long := "short", strings.Repeat("B", 6<<10)
	c.put(short, "s", until)
	c.put(long, "l", until)
	if v, _ := c.get(short, now); v != "s" {
		t.Errorf("short: %q", v)
	}
	if v, _ := c.get(long, now); v != "l" {
		t.Errorf("long: %q", v)
	}
}

// TestTokenCacheBounded: long tokens count against the cache's size as
// short ones do, and each is held by a fixed-size key, not its text.
func TestTokenCacheBounded(t *testing.T) {
	t.Parallel()
	const size = 64
	c := newTokenCache[int](size)
	now := time.Now()
	pad := strings.Repeat("C", 6<<10)
	for i := range 10 * size {
		c.put(pad+strconv.Itoa(i), i, now.Add(time.Minute))
		c.put("short-"+strconv.Itoa(i), i, now.Add(time.Minute))
	}
	var entries int
	for i := range c.shards {
		s := &c.shards[i]
		entries += len(s.m) + len(s.h)
		for k := range s.m {
			if len(k) > maxKeyedToken {
				t.Errorf("a %d-byte token is a key", len(k))
			}
		}
	}
	if entries > size {
		t.Errorf("%d entries in a cache of %d", entries, size)
	}
	// The last long token put is there.
	if v, ok := c.get(pad+strconv.Itoa(10*size-1), now); !ok || v != 10*size-1 {
		t.Errorf("the last long token: %d, %v", v, ok)
	}
}

package access

import (
	"context"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

func take(t *testing.T, l Limiter, key string, lim Limit) (bool, time.Duration) {
	t.Helper()
	ok, after, err := l.Take(context.Background(), key, lim)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	return ok, after
}

// The bucket holds Calls, refills at Calls per Per, and says how long
// until the next call; keys are counted apart.
func TestLimiterBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLimiter(0)
		lim := Limit{Calls: 3, Per: 3 * time.Second}
		for i := range 3 {
			if ok, _ := take(t, l, "a", lim); !ok {
				t.Fatalf("call %d refused", i)
			}
		}
		ok, after := take(t, l, "a", lim)
		if ok || after != time.Second {
			t.Fatalf("4th call: %v, %v; want refused, 1s", ok, after)
		}
		if ok, _ := take(t, l, "b", lim); !ok {
			t.Fatal("another key refused")
		}
		time.Sleep(500 * time.Millisecond)
		if ok, after := take(t, l, "a", lim); ok || after != 500*time.Millisecond {
			t.Fatalf("half a token later: %v, %v; want refused, 500ms", ok, after)
		}
		time.Sleep(500 * time.Millisecond)
		if ok, _ := take(t, l, "a", lim); !ok {
			t.Fatal("a token later: refused")
		}
		// A changed limit starts the key afresh.
		if ok, _ := take(t, l, "a", Limit{Calls: 1, Per: time.Hour}); !ok {
			t.Fatal("new limit: refused")
		}
		// The zero limit counts nothing.
		for range 10 {
			if ok, _ := take(t, l, "z", Limit{}); !ok {
				t.Fatal("zero limit refused")
			}
		}
	})
}

// Memory is bounded: at most maxKeys buckets (per shard, its share), idle
// ones swept first, then arbitrary ones.
func TestLimiterBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLimiter(limiterShards * 4).(*limiter)
		lim := Limit{Calls: 1, Per: time.Minute}
		count := func() int {
			n := 0
			for i := range l.shards {
				n += len(l.shards[i].buckets)
			}
			return n
		}
		for i := range 10_000 {
			take(t, l, "k"+strconv.Itoa(i), lim)
		}
		if n := count(); n > limiterShards*4 {
			t.Fatalf("%d buckets, more than %d", n, limiterShards*4)
		}
		// Idle keys (full again) are swept when room is needed.
		time.Sleep(2 * time.Minute)
		take(t, l, "fresh", lim)
		if n := count(); n > limiterShards*4 {
			t.Fatalf("%d buckets after the sweep", n)
		}
		// Every bucket of its shard was idle a whole interval: swept.
		for i := range l.shards {
			if _, ok := l.shards[i].buckets["fresh"]; ok && len(l.shards[i].buckets) != 1 {
				t.Errorf("the new key's shard holds %d buckets; want the new key's alone", len(l.shards[i].buckets))
			}
		}
	})
}

func TestLimitValidate(t *testing.T) {
	for _, c := range []struct {
		l  Limit
		ok bool
	}{
		{Limit{}, true}, {Limit{Calls: 1, Per: time.Second}, true},
		{Limit{Calls: 0, Per: time.Second}, false}, {Limit{Calls: 1}, false}, {Limit{Calls: -1, Per: time.Second}, false},
	} {
		if err := c.l.Validate(); (err == nil) != c.ok {
			t.Errorf("%+v.Validate() = %v", c.l, err)
		}
	}
}

package upstream

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// fakeProbe is an upstream's answer to the breaker's probes.
type fakeProbe struct {
	up    atomic.Bool
	asked atomic.Int64
}

func (p *fakeProbe) probe(context.Context) error {
	p.asked.Add(1)
	if p.up.Load() {
		return nil
	}
	return errors.New("down")
}

func testBreaker(p *fakeProbe) (*breaker, *atomic.Int64) {
	var opened atomic.Int64
	b := newBreaker(breakerConfig{}, p.probe, func(open bool, _ string) {
		if open {
			opened.Add(1)
		}
	})
	return b, &opened
}

// The calls in flight at a replica that was killed fail in one instant;
// behind a balancer the others are served: that burst is not a dead
// upstream, however many calls it takes and however few others there are.
func TestBreakerBurstDoesNotOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, opened := testBreaker(&fakeProbe{})
		defer b.close()
		now := time.Now()
		for i := range 75 {
			b.record(true, "caller-"+string(rune('a'+i%26)), now)
		}
		for range 5 {
			b.record(false, "caller-a", now)
		}
		if ok, _ := b.allow(now); !ok || opened.Load() != 0 {
			t.Fatal("a burst of simultaneous failures opened the circuit")
		}
		// The balancer sends the next calls to the replica left: they succeed.
		later := now.Add(2 * time.Second)
		for range 100 {
			b.record(false, "caller-b", later)
		}
		if ok, _ := b.allow(later); !ok {
			t.Fatal("open after the burst")
		}
	})
}

// One caller looping on a tool that fails opens nothing: the others'
// calls to the upstream's healthy tools go through.
func TestBreakerOneCallerCannotOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, opened := testBreaker(&fakeProbe{})
		defer b.close()
		start := time.Now()
		for i := range 1000 {
			now := start.Add(time.Duration(i) * 10 * time.Millisecond)
			b.record(true, "mallory", now)
			if i%10 == 0 {
				if ok, _ := b.allow(now); !ok {
					t.Fatalf("the victim's call was refused at %d", i)
				}
				b.record(false, "victim", now)
			}
		}
		if opened.Load() != 0 {
			t.Fatal("one caller's failures opened the circuit")
		}
	})
}

// An upstream failing everyone's calls over time opens the circuit; its
// calls are then answered at once, and the breaker's own probe, not a
// caller's call, closes it when the upstream answers again, within an
// interval.
func TestBreakerOpensAndProbeCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakeProbe{}
		b, opened := testBreaker(p)
		defer b.close()
		var ok bool
		for i := 0; ; i++ {
			now := time.Now()
			if ok, _ = b.allow(now); !ok {
				break
			}
			if i > 1000 {
				t.Fatal("a dead upstream never opened the circuit")
			}
			b.record(true, []string{"a", "b", "c"}[i%3], now)
			time.Sleep(50 * time.Millisecond)
		}
		if opened.Load() != 1 {
			t.Fatalf("opened %d times", opened.Load())
		}
		time.Sleep(5 * defaultBreakerInterval)
		if ok, _ := b.allow(time.Now()); ok {
			t.Fatal("closed while the upstream is down")
		}
		asked := p.asked.Load()
		if asked < 4 || asked > 6 {
			t.Fatalf("%d probes in 5 intervals", asked)
		}
		p.up.Store(true)
		time.Sleep(defaultBreakerInterval + time.Millisecond)
		synctest.Wait()
		if ok, _ := b.allow(time.Now()); !ok {
			t.Fatal("still open an interval after the upstream answered")
		}
		// Closed, the window starts afresh: a few failures do not reopen it.
		for _, c := range []string{"a", "b", "c"} {
			b.record(true, c, time.Now())
		}
		if ok, _ := b.allow(time.Now()); !ok {
			t.Fatal("reopened on the old window")
		}
	})
}

// Few calls never open it, whatever they say.
func TestBreakerMinCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, opened := testBreaker(&fakeProbe{})
		defer b.close()
		for i := range defaultBreakerMinCalls - 1 {
			b.record(true, []string{"a", "b"}[i%2], time.Now())
			time.Sleep(200 * time.Millisecond)
		}
		if opened.Load() != 0 {
			t.Fatal("opened under minCalls")
		}
	})
}

// A breaker without a probe never opens, and close stops the probes.
func TestBreakerWithoutProbeAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breakerConfig{}, nil, nil)
		for i := range 100 {
			b.record(true, []string{"a", "b"}[i%2], time.Now())
			time.Sleep(100 * time.Millisecond)
		}
		if ok, _ := b.allow(time.Now()); !ok {
			t.Fatal("a breaker without a probe opened")
		}
		b.close()
		var nilBreaker *breaker
		if ok, _ := nilBreaker.allow(time.Now()); !ok {
			t.Fatal("nil breaker refused")
		}
	})
}

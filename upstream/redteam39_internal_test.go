package upstream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wymcp/wymcp/internal/caller"
)

// TestRedteam39CloseCancelsProbe: closing an upstream whose circuit is
// open, while a probe waits on an upstream that does not answer, ends
// that probe at once: close does not sit out the probe's timeout.
func TestRedteam39CloseCancelsProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		probing := make(chan struct{})
		ended := make(chan error, 1)
		b := newBreaker(breakerConfig{}, func(ctx context.Context) error {
			close(probing)
			<-ctx.Done() // an upstream that never answers
			ended <- ctx.Err()
			return ctx.Err()
		}, nil)
		b.trip(time.Now(), "a test opened it")
		<-probing
		b.close()
		if err := <-ended; !errors.Is(err, context.Canceled) {
			t.Fatalf("close waited for the probe's own end (%v), not cancelling it", err)
		}
	})
}

// TestRedteam39IPv6CallersOfOneNetwork: without auth a caller is its
// address, and a client holds a whole IPv6 /64 (a host's, a VM's, a
// home's): one that sends each call from another of its addresses must
// still be one caller, or it takes every slot of the upstream past its
// fair share, and alone makes the "more than one caller" the breaker
// asks for.
func TestRedteam39IPv6CallersOfOneNetwork(t *testing.T) {
	const size = 8
	s := newShares(size)
	taken := 0
	for i := range size {
		ctx := caller.WithAddress(context.Background(), fmt.Sprintf("2001:db8:1:2::%x", i+1))
		if ok, _ := s.take(callerKey(ctx)); ok {
			taken++
		}
	}
	victim := callerKey(caller.WithAddress(context.Background(), "192.0.2.1"))
	if ok, share := s.take(victim); !ok {
		t.Fatalf("one client, from %d addresses of its /64, took %d of %d slots; another caller is refused (share %v)", size, taken, size, share)
	}
	a := callerKey(caller.WithAddress(context.Background(), "2001:db8:1:2::1"))
	b := callerKey(caller.WithAddress(context.Background(), "2001:db8:1:2:ffff::9"))
	if a != b {
		t.Errorf("two addresses of one /64 are two callers: %q and %q", a, b)
	}
	if c := callerKey(caller.WithAddress(context.Background(), "2001:db8:1:3::1")); c == a {
		t.Errorf("two /64s are one caller: %q", c)
	}
	if v4 := callerKey(caller.WithAddress(context.Background(), "192.0.2.1")); v4 == callerKey(caller.WithAddress(context.Background(), "192.0.2.2")) {
		t.Errorf("two IPv4 addresses are one caller: %q", v4)
	}
}

// TestRedteam39ShortIntervalSlowProbe: the probe interval says how often
// to ask, not how fast the upstream must answer. With a short one (20 ms
// in the file), an upstream up again that takes longer than ten
// intervals to answer (a cold start, a TLS handshake far away) must
// still close the circuit, not leave its calls refused for good.
func TestRedteam39ShortIntervalSlowProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		closed := make(chan struct{})
		b := newBreaker(breakerConfig{interval: 20 * time.Millisecond}, func(ctx context.Context) error {
			select {
			case <-time.After(300 * time.Millisecond): // up, and slow to answer
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}, func(open bool, _ string) {
			if !open {
				close(closed)
			}
		})
		defer b.close()
		b.trip(time.Now(), "a test opened it")
		select {
		case <-closed:
		case <-time.After(time.Minute):
			t.Fatal("an upstream that answers each probe in 300 ms never closed the circuit in a minute")
		}
	})
}

// TestRedteam39SharesTwoFlooders: two callers flooding an upstream with
// hung calls (two addresses, two identities) must still leave a newcomer
// room, as one does: the second may not take the reserve whole. (Below
// 8 the reserve is one slot, which any second caller takes.)
func TestRedteam39SharesTwoFlooders(t *testing.T) {
	for _, size := range []int{8, 9, 256} {
		s := newShares(size)
		for _, who := range []string{"mallory", "mallory's twin"} {
			for range size {
				s.take(who)
			}
		}
		if ok, share := s.take("victim"); !ok {
			t.Errorf("MaxInFlight %d: two flooders hold %d and %d slots; a newcomer is refused (share %v)",
				size, s.held("mallory"), s.held("mallory's twin"), share)
		}
	}
}

package upstream

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
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

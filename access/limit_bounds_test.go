package access

import (
	"math"
	"testing"
	"testing/synctest"
	"time"
)

// TestLimiterLongInterval: a limit over the longest interval a Duration
// holds says to wait about that long, not a millisecond (a float beyond
// int64 converted to a Duration is undefined).
func TestLimiterLongInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLimiter(0)
		lim := Limit{Calls: 1, Per: math.MaxInt64}
		if ok, _ := take(t, l, "k", lim); !ok {
			t.Fatal("first call refused")
		}
		ok, after := take(t, l, "k", lim)
		if ok || after < 200*365*24*time.Hour {
			t.Errorf("second call: ok %v, retry after %v; want refused for about 292 years", ok, after)
		}
	})
}

package telemetry

import (
	"sync/atomic"
	"time"
)

// logInterval is how often a Limiter lets a record through.
const logInterval = time.Second

// Limiter throttles one kind of log record (docs/design.md §7): the first
// record of an interval is written, the ones after it within the interval
// are counted and left out, and the next one written says how many were;
// when none is written within an interval after them, Report says it once
// that interval is over, so that a burst that then stops is still counted.
// A storm of one cause (an authorization server that is down, a tool that
// panics on every call) then costs the log one record a second instead of
// one per request, each fault's with a stack of kilobytes, while the span
// of every request still carries the whole story.
//
// The zero Limiter is ready; it is safe for concurrent use and costs two
// atomic operations a record.
type Limiter struct {
	// next is when the next record may be written, Unix nanoseconds.
	next       atomic.Int64
	suppressed atomic.Int64
	// Interval is how often a record is let through; 0 means logInterval
	// (a second). Set it before the Limiter is used.
	Interval time.Duration
	// Report, when set, is called with the number of records held back
	// that no written record has reported, an Interval after the first of
	// them. Set it before the Limiter is used.
	Report func(suppressed int64)
}

// interval is Interval, or its default.
func (l *Limiter) interval() time.Duration {
	if l.Interval > 0 {
		return l.Interval
	}
	return logInterval
}

// Allow reports whether a record may be written at now, and how many
// records were held back since the last one written (to be logged with it
// as "suppressed"). A record it refuses is counted, and must not be
// written.
func (l *Limiter) Allow(now time.Time) (ok bool, suppressed int64) {
	n := l.next.Load()
	if now.UnixNano() < n || !l.next.CompareAndSwap(n, now.Add(l.interval()).UnixNano()) {
		if l.suppressed.Add(1) == 1 && l.Report != nil {
			time.AfterFunc(l.interval(), l.flush)
		}
		return false, 0
	}
	return true, l.suppressed.Swap(0)
}

// Reset lets the next record through at once and forgets the ones held
// back: the trouble they were about is over (an export that succeeded).
func (l *Limiter) Reset() {
	l.next.Store(0)
	l.suppressed.Store(0)
}

// flush reports the records held back that no written record reported
// (Allow and flush each take the count whole: it is reported once).
func (l *Limiter) flush() {
	if n := l.suppressed.Swap(0); n > 0 {
		l.Report(n)
	}
}

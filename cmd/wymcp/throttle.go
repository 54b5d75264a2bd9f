package main

import (
	"sync"
	"time"
)

// throttle lets one log record of a kind through per interval and counts
// the ones it holds back, so that a failure that persists (a dead
// collector fails every export) costs the log one line an interval, which
// says how many it stands for. It is the binary's own: the library's
// throttle of its fault logs is internal, and this binary imports no
// internal package of the library's (layering_test.go). Set interval
// before use; it is safe for concurrent use.
type throttle struct {
	interval time.Duration

	mu         sync.Mutex
	next       time.Time // when the next record may be written
	suppressed int64     // records held back since the last one written
}

// allow reports whether a record may be written at now, and how many were
// held back since the last one written (to be logged with it as
// "suppressed"). A record it refuses is counted, and must not be written.
func (t *throttle) allow(now time.Time) (ok bool, suppressed int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if now.Before(t.next) {
		t.suppressed++
		return false, 0
	}
	t.next = now.Add(t.interval)
	suppressed, t.suppressed = t.suppressed, 0
	return true, suppressed
}

// reset lets the next record through at once and forgets the ones held
// back: the trouble they were about is over (an export that succeeded).
func (t *throttle) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next, t.suppressed = time.Time{}, 0
}

package upstream

import "time"

// SetFailureLogInterval sets how often u logs a failed call of one class:
// a test that floods sets one no run outlasts, so that each class logs
// exactly once.
func SetFailureLogInterval(u *Upstream, d time.Duration) { u.c.fails.Interval = d }

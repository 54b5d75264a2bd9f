package upstream

import (
	"errors"
	"net"
	"sync/atomic"

	"github.com/wymcp/wymcp/protocol"
)

// retries is an upstream's budget of retries of calls that may have
// reached it (docs/design.md §10b), a token bucket filled by the calls:
// each call adds a fifth of a retry, up to burst retries, and each retry
// takes a whole one. So retries are at most a fifth of the calls, plus a
// burst: the calls in flight at a replica that died are retried at once,
// while an upstream failing every call is never sent a storm of them.
type retries struct {
	enabled bool
	burst   int64 // in milli-retries
	tokens  atomic.Int64
}

const (
	retryPerCall   = 200 // milli-retries a call adds: a fifth
	minRetryBurst  = 10
	retryBurstPart = 4 // the burst: MaxInFlight / retryBurstPart
)

func newRetries(enabled bool, maxInFlight int) *retries {
	r := &retries{enabled: enabled, burst: int64(max(maxInFlight/retryBurstPart, minRetryBurst)) * 1000}
	r.tokens.Store(r.burst)
	return r
}

// called adds a call's share to the budget.
func (r *retries) called() {
	if !r.enabled {
		return
	}
	for {
		t := r.tokens.Load()
		if t >= r.burst || r.tokens.CompareAndSwap(t, min(t+retryPerCall, r.burst)) {
			return
		}
	}
}

// take takes a retry from the budget, if it holds one.
func (r *retries) take() bool {
	if !r.enabled {
		return false
	}
	for {
		t := r.tokens.Load()
		if t < 1000 {
			return false
		}
		if r.tokens.CompareAndSwap(t, t-1000) {
			return true
		}
	}
}

// idempotent reports whether a tool may be called twice by its
// annotations: read-only, or idempotent. They are the upstream's word,
// which the operator trusts by allowing retries (Options.RetryIdempotent).
func idempotent(a *protocol.ToolAnnotations) bool {
	return a != nil && ((a.ReadOnlyHint != nil && *a.ReadOnlyHint) || (a.IdempotentHint != nil && *a.IdempotentHint))
}

// retryable reports whether a failed call may be made again: a call that
// never reached the upstream (unsent) always; one that may have, only if
// the failure says the upstream did not answer it (a broken connection, a
// proxy's 502, 503 or 504), for an idempotent tool, within the budget.
func (f *failure) retryable() bool {
	switch f.kind {
	case kindUnreachable:
		return true
	case kindStatus:
		return f.status == 502 || f.status == 503 || f.status == 504
	}
	return false
}

// unsent reports whether err, from sending a request, says it never left
// the gateway: the connection to the upstream could not be made. (A
// reused connection found closed before the request was written is
// retried by net/http itself: the request's body can be had again,
// send's GetBody.)
func unsent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

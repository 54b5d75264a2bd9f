package transport

import (
	"context"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/wire"
)

// The policy stage (docs/design.md §11), in two places of the request path:
// a tool whose rules deny the caller is hidden right after stage 3, as a
// scoped tool is, so that every later check answers the call as one of a
// tool the server does not have; a call past one of its tool's rate limits
// is refused just before stage 7, once the request is known to be a call
// the server would run. Tools without rules or limits never come here.

// errRateLimited is the message of a call past a rate limit.
const errRateLimited = "Too many calls from this caller: retry later"

// rateLimitData is the data member of a rate limit's answer: when, in
// milliseconds, a call would be admitted.
type rateLimitData struct {
	RetryAfterMs int64 `json:"retryAfterMs"`
}

// policy hides ref's tool when its rules deny the caller of ctx.
func (h *Handler) policy(ctx context.Context, req *wire.Request, ref *toolRef, op *telemetry.Op) {
	if ref.tool == nil || !ref.tool.HasRules() {
		return
	}
	if !h.access.Allow(ctx, ref.tool, req.Arguments) {
		// Recorded on the span only, as a hidden scoped tool is.
		op.SetAuthRefusal("policy")
		ref.tool = nil
	}
}

// rateLimit counts the call of ref's tool against its limits, and returns
// the refusal when one is spent: 429, Retry-After in whole seconds (at
// least 1), and -32603 with data.retryAfterMs.
func (h *Handler) rateLimit(ctx context.Context, r *http.Request, ref *toolRef) *rejection {
	if ref.tool == nil || !ref.tool.HasLimits() {
		return nil
	}
	ok, after := h.access.Take(ctx, ref.tool, h.callerKey(ctx, r))
	if ok {
		return nil
	}
	ms := max(after.Milliseconds(), 1)
	// Rounded up without adding to after, which near the largest
	// Duration (a Limiter's "never") would overflow into "1 second".
	secs := int64(after / time.Second)
	if after%time.Second > 0 {
		secs++
	}
	err := wire.Errorf(wire.CodeInternalError, errRateLimited).WithData(rateLimitData{RetryAfterMs: ms})
	return reject(StageOverload, http.StatusTooManyRequests, err).with("Retry-After", strconv.FormatInt(max(secs, 1), 10))
}

// callerKey is who a per-caller bound counts (a rate limit, the listen
// streams): the authenticated caller's key
// and client (two clients of one user hold different grants), else the
// client's address (peer.go: behind trusted proxies, the one they
// forwarded for), an IPv6 one by its /64 as for an upstream's shares
// (docs/design.md §10b): a host holds a whole /64, and would otherwise
// pose as a new caller, with a full bucket, at each call.
func (h *Handler) callerKey(ctx context.Context, r *http.Request) string {
	if id := caller.IdentityFrom(ctx); id != nil {
		return id.Subject + "\x00" + id.Client
	}
	a := clientAddress(r, h.trusted)
	if ip, err := netip.ParseAddr(a); err == nil && ip.Is6() && !ip.Is4In6() {
		p, _ := ip.WithZone("").Prefix(64)
		a = p.String()
	}
	return "addr:" + a
}

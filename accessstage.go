package wymcp

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/internal/config"
	"github.com/wymcp/wymcp/internal/toolrun"
)

// The policy stage's decisions (docs/design.md §11): the rules and limits a
// tool carries (toolrun.Tool.Guards), asked with what they read of the
// caller. The facade owns them because it owns the principal a rule reads;
// the transport asks at a call (a denied tool is hidden as a scoped one
// is, a spent limit answered 429), the tools/list worker at a listing. A
// tool without guards never comes here.

// accessStage is the stage as New builds it.
type accessStage struct {
	limiter access.Limiter
	fails   failLog
}

func newAccessStage(limiter access.Limiter, logger *slog.Logger) *config.Access {
	if limiter == nil {
		limiter = access.NewLimiter(0)
	}
	s := &accessStage{limiter: limiter, fails: failLog{logger: logger}}
	return &config.Access{Allow: s.allow, Visible: s.visible, Take: s.take}
}

// question is what the rules of one request are asked: the request and
// its caller in one allocation (a call pays for one).
type question struct {
	req    access.Request
	caller access.Caller
}

// askOf returns the question of the request whose context ctx is: its
// caller as a rule reads it, none without auth.
func askOf(ctx context.Context) *question {
	q := &question{}
	if p := PrincipalFrom(ctx); p != nil {
		q.caller = access.Caller{Subject: p.Subject, ClientID: p.ClientID, Scopes: p.Scopes, Claims: p.Claims}
		q.req.Caller = &q.caller
	}
	return q
}

// allow is config.Access.Allow.
func (s *accessStage) allow(ctx context.Context, t *toolrun.Tool, args []byte) bool {
	q := askOf(ctx)
	q.req.Tool, q.req.Args = t.Access(), args
	return s.decide(ctx, t, &q.req)
}

// visible is config.Access.Visible.
func (s *accessStage) visible(ctx context.Context) func(*toolrun.Tool) bool {
	q := askOf(ctx)
	q.req.Listing = true
	return func(t *toolrun.Tool) bool {
		req := q.req // a copy per tool: a rule must not see another's
		req.Tool = t.Access()
		return s.decide(ctx, t, &req)
	}
}

// decide asks every rule of t, in order, until one denies.
func (s *accessStage) decide(ctx context.Context, t *toolrun.Tool, req *access.Request) bool {
	for _, g := range t.Guards() {
		if g.Rule != nil && !s.ask(ctx, g.Rule, req) {
			return false
		}
	}
	return true
}

// ask runs one rule: an error or a panic denies, and is logged.
func (s *accessStage) ask(ctx context.Context, r access.Rule, req *access.Request) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			s.fails.note("a rule panicked; the tool is denied", req.Tool.Name, fmt.Errorf("%v", v))
			ok = false
		}
	}()
	ok, err := r.Allow(ctx, req)
	if err != nil {
		s.fails.note("a rule failed; the tool is denied", req.Tool.Name, err)
		return false
	}
	return ok
}

// take is config.Access.Take: the limits of t in order, each counted under
// its place's key and the caller's; the first spent one refuses (those
// before it have counted the call).
func (s *accessStage) take(ctx context.Context, t *toolrun.Tool, who string) (bool, time.Duration) {
	for _, g := range t.Guards() {
		if g.Limit.IsZero() {
			continue
		}
		if ok, after := s.count(ctx, g, who, t.Name()); !ok {
			return false, after
		}
	}
	return true, 0
}

// count takes one call from the limiter: its error or panic admits the
// call, and is logged (access.Limiter).
func (s *accessStage) count(ctx context.Context, g toolrun.Guard, who, tool string) (ok bool, after time.Duration) {
	defer func() {
		if v := recover(); v != nil {
			s.fails.note("the rate limiter panicked; the call is admitted", tool, fmt.Errorf("%v", v))
			ok, after = true, 0
		}
	}()
	ok, after, err := s.limiter.Take(ctx, g.Key+"\x00"+who, g.Limit)
	if err != nil {
		s.fails.note("the rate limiter failed; the call is admitted", tool, err)
		return true, 0
	}
	return ok, after
}

// failLog logs the stage's failures at Warn, at most one record a second:
// a broken rule fails every call, and the log must not grow with them.
// The records a second swallows are counted in the next one (suppressed).
type failLog struct {
	logger     *slog.Logger
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

func (f *failLog) note(msg, tool string, err error) {
	f.mu.Lock()
	now := time.Now()
	if now.Sub(f.last) < time.Second {
		f.suppressed++
		f.mu.Unlock()
		return
	}
	n := f.suppressed
	f.last, f.suppressed = now, 0
	f.mu.Unlock()
	f.logger.Warn("policy: "+msg, "tool", tool, "error", err.Error(), "suppressed", n)
}

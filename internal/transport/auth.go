package transport

import (
	"context"
	"net/http"
	"runtime/debug"

	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/config"
	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
)

// authStage is stage 3 of docs/design.md §3: the facade's Check (the
// embedder's authenticator and the scopes the request needs), run with any
// panic contained, and its answer written.
type authStage struct {
	check  func(context.Context, *http.Request, *toolrun.Tool) (context.Context, *config.AuthAnswer)
	record bool
}

func newAuthStage(a *config.Auth) *authStage {
	return &authStage{check: a.Check, record: a.RecordSubject}
}

// An authenticator's fault is answered as a fault past a method is: the
// fixed message, the detail on the span and in the log.
var rejAuthFault = reject(StageAuth, http.StatusOK, wire.NewError(wire.CodeInternalError))

// authenticate runs stage 3 for a classified message: ref is the tool a
// tools/call names (nil, or a nil tool, when none). It returns the context
// the rest of the request runs under, carrying the caller, or the
// rejection to answer; gone reports a client that left while its
// credential was being checked (nothing is to be written). A tool the
// caller may not see (config.AuthAnswer.Hide) is taken out of ref: from
// here on the request is one naming a tool the server does not have, and
// is answered as that (docs/design.md §5).
func (h *Handler) authenticate(ctx context.Context, r *http.Request, ref *toolRef, op *telemetry.Op) (_ context.Context, _ *rejection, gone bool) {
	s := h.auth
	var tool *toolrun.Tool
	if ref != nil {
		tool = ref.tool
	}
	authed, ans, fault := s.call(ctx, r, tool)
	if fault != nil {
		op.Fault(context.WithoutCancel(ctx), "authenticator", fault.Value, fault.Stack)
		return ctx, rejAuthFault, false
	}
	if ans != nil && ans.Hide {
		// Recorded on the span only: the operator sees why.
		op.SetAuthRefusal(ans.Kind)
		if ref != nil {
			ref.tool = nil
		}
		ans = nil
	}
	if ans != nil {
		if ctx.Err() != nil {
			return ctx, nil, true
		}
		op.SetAuthRefusal(ans.Kind)
		if ans.Unavailable != nil {
			op.Unavailable(context.WithoutCancel(ctx), "authenticator", ans.Unavailable)
		}
		return ctx, &rejection{stage: StageAuth, status: ans.Status, err: ans.Err, header: ans.Header}, false
	}
	if s.record {
		op.SetSubject(caller.Subject(authed))
	}
	return authed, nil, false
}

// call runs the facade's Check with any panic contained, as toolrun.Tool.Call
// contains a tool's. http.ErrAbortHandler is net/http's way to abort the
// response on purpose, and is let through, as connect-go's recover does.
func (s *authStage) call(ctx context.Context, r *http.Request, tool *toolrun.Tool) (authed context.Context, ans *config.AuthAnswer, fault *toolrun.Fault) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			authed, ans = nil, nil
			fault = &toolrun.Fault{Value: v, Stack: debug.Stack()}
		}
	}()
	authed, ans = s.check(ctx, r, tool)
	return authed, ans, nil
}

package transport

import (
	"context"
	"net/http"

	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
)

// toolRef is the tool a tools/call names, looked up once, ahead of stage
// 3 (which needs its scopes) and stage 5 (its headers and capabilities).
type toolRef struct {
	tool *toolrun.Tool // nil when the server has no such tool
	name string        // the name as sent, decoded
	ok   bool          // params.name is a string
}

// resolveTool looks up the tool a tools/call names; the zero toolRef for
// any other request.
func (h *Handler) resolveTool(req *wire.Request) toolRef {
	if req == nil || req.Method != wire.MethodToolsCall {
		return toolRef{}
	}
	tool, name, ok := h.tools.Load().Resolve(req.Name)
	return toolRef{tool: tool, name: name, ok: ok}
}

// resolveLate asks the embedder's hook about a call's name the set
// lacked (wymcp.Options.UnknownTool: a gateway that may lag another
// replica reads its upstreams again), past auth, so that only a caller
// the server answers can make it wait or read; when the hook says the set
// may now hold the name, it is looked up once more, and a tool found is
// authorized as at stage 3 (its scopes, or hidden from a caller without
// them). Its results are authenticate's.
//
// The requests it holds take no in-flight place, so they are bounded on
// their own, as the calls awaiting a 2025-era client's answer are
// (askingBound): past the bound a name is answered as unknown at once,
// without asking, and a flood of unknown names holds no more goroutines
// and buffers than that.
func (h *Handler) resolveLate(ctx context.Context, r *http.Request, req *wire.Request, ref *toolRef, op *telemetry.Op) (_ context.Context, _ *rejection, gone bool) {
	if h.unknownAsking.Add(1) > h.maxAsking {
		h.unknownAsking.Add(-1)
		return ctx, nil, false
	}
	found := h.unknown(ctx, ref.name)
	h.unknownAsking.Add(-1)
	if !found {
		return ctx, nil, false
	}
	again := h.resolveTool(req)
	if again.tool == nil {
		return ctx, nil, false
	}
	*ref = again
	if h.auth == nil {
		return ctx, nil, false
	}
	return h.authenticate(ctx, r, ref, op)
}

// checkFields is stage 5 past the body (docs/design.md §3), in
// docs/design.md §5's row order: the MCP headers against the body (-32020),
// the tool the call names and its Mcp-Param-* headers (-32020), the
// revision (-32022) and the tool's client capabilities (-32021). Every rule
// is wire's; this is their order. ref is the tool the call names (its tool
// nil when unknown: the method answers that); the span is named for it only
// once the headers agree with the body, so a call refused for its headers
// is recorded under the method alone.
func (h *Handler) checkFields(r *http.Request, req *wire.Request, ref toolRef, op *telemetry.Op) *rejection {
	if perr := wire.CheckHeaders(r.Header, req); perr != nil {
		return reject(StageProtocol, http.StatusBadRequest, perr)
	}
	tool := ref.tool
	if tool != nil {
		op.SetTool(ref.name)
	} else if ref.ok {
		// A name the server does not know is recorded as _OTHER: span
		// names and metric attributes must not grow with client input.
		op.SetUnknownTool(ref.name)
	}
	if tool != nil {
		if perr := wire.CheckParamHeaders(r.Header, tool.HeaderParams(), req.Arguments); perr != nil {
			return reject(StageProtocol, http.StatusBadRequest, perr)
		}
	}
	if perr := wire.CheckVersion(req, h.versions); perr != nil {
		return reject(StageProtocol, http.StatusBadRequest, perr)
	}
	if tool != nil {
		if perr := wire.CheckCapabilities(&req.Meta, tool.RequiredCapabilities()); perr != nil {
			return reject(StageProtocol, http.StatusBadRequest, perr)
		}
	}
	return nil
}

package transport

import (
	"net/http"

	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/tools"
)

// resolveTool returns the tool a tools/call names (nil when it names none
// the server knows, or is not a tools/call) and names it on the span. It
// runs once, ahead of stage 3, which needs the tool's scopes, and stage 5,
// which needs its headers and capabilities.
func (h *Handler) resolveTool(req *wire.Request, op *telemetry.Op) *tools.Tool {
	if req == nil || req.Method != wire.MethodToolsCall {
		return nil
	}
	tool, name, ok := h.tools.Resolve(req.Name)
	if tool != nil {
		op.SetTool(name)
	} else if ok {
		// A name the server does not know is recorded as _OTHER: span
		// names and metric attributes must not grow with client input.
		op.SetUnknownTool(name)
	}
	return tool
}

// checkFields is stage 5 past the body (DESIGN §3), in DESIGN §5's row
// order: the MCP headers against the body (-32020), the Mcp-Param-*
// headers of the tool the call names (-32020), the revision (-32022) and
// the tool's client capabilities (-32021). Every rule is wire's; this is
// their order. tool is resolveTool's answer (nil when unknown: the method
// answers that).
func (h *Handler) checkFields(r *http.Request, req *wire.Request, tool *tools.Tool) *rejection {
	if perr := wire.CheckHeaders(r.Header, req); perr != nil {
		return reject(StageProtocol, http.StatusBadRequest, perr)
	}
	if tool != nil {
		if perr := wire.CheckParamHeaders(r.Header, tool.HeaderParams(), req.Arguments); perr != nil {
			return reject(StageProtocol, http.StatusBadRequest, perr)
		}
	}
	if perr := wire.CheckVersion(req); perr != nil {
		return reject(StageProtocol, http.StatusBadRequest, perr)
	}
	if tool != nil {
		if perr := wire.CheckCapabilities(&req.Meta, tool.RequiredCapabilities()); perr != nil {
			return reject(StageProtocol, http.StatusBadRequest, perr)
		}
	}
	return nil
}

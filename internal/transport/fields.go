package transport

import (
	"net/http"

	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/tools"
)

// checkFields is stage 5 past the body (DESIGN §3), in DESIGN §5's row
// order: the MCP headers against the body (-32020), the tool the call
// names and its Mcp-Param-* headers (-32020), the revision (-32022) and the
// tool's client capabilities (-32021). Every rule is wire's; this is their
// order. It returns the tool a tools/call names (nil when unknown: the
// method answers that), and names it on the span.
func (h *Handler) checkFields(r *http.Request, req *wire.Request, op *telemetry.Op) (*tools.Tool, *rejection) {
	if perr := wire.CheckHeaders(r.Header, req); perr != nil {
		return nil, reject(StageProtocol, http.StatusBadRequest, perr)
	}
	var tool *tools.Tool
	if req.Method == wire.MethodToolsCall {
		var name string
		var ok bool
		if tool, name, ok = h.tools.Resolve(req.Name); tool != nil {
			op.SetTool(name)
		} else if ok {
			// A name the server does not know is recorded as _OTHER: span
			// names and metric attributes must not grow with client input.
			op.SetUnknownTool(name)
		}
		if tool != nil {
			if perr := wire.CheckParamHeaders(r.Header, tool.HeaderParams(), req.Arguments); perr != nil {
				return nil, reject(StageProtocol, http.StatusBadRequest, perr)
			}
		}
	}
	if perr := wire.CheckVersion(req); perr != nil {
		return nil, reject(StageProtocol, http.StatusBadRequest, perr)
	}
	if tool != nil {
		if perr := wire.CheckCapabilities(&req.Meta, tool.RequiredCapabilities()); perr != nil {
			return nil, reject(StageProtocol, http.StatusBadRequest, perr)
		}
	}
	return tool, nil
}

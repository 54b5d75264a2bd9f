package transport

import (
	"net/http"
	"net/textproto"

	"github.com/wymcp/wymcp/internal/actors"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/tools"
)

// checkFields is stage 5 past the body: the MCP headers against the body
// (-32020), the tool's Mcp-Param-* headers (-32020), the revision (-32022)
// and the tool's client capabilities (-32021), in DESIGN §5's row order.
// It names the call's tool on the way, for the method and the span.
func (h *Handler) checkFields(r *http.Request, call *actors.Call) *rejection {
	req := call.Request
	if perr := wire.CheckHeaders(r.Header, req); perr != nil {
		return reject(StageProtocol, http.StatusBadRequest, perr)
	}
	if req.Method == wire.MethodToolsCall {
		if call.Tool = h.toolNamed(req); call.Tool != nil {
			call.Op.SetTool(call.Tool.Name())
		} else if name, ok := req.NameString(); ok {
			// A name the server does not know is recorded as _OTHER: span
			// names and metric attributes must not grow with client input.
			if call.Tool = h.sys.Tool(name); call.Tool != nil {
				call.Op.SetTool(name)
			} else {
				call.Op.SetUnknownTool(name)
			}
		}
		if perr := checkParamHeaders(r.Header, call.Tool, req.Arguments); perr != nil {
			return reject(StageProtocol, http.StatusBadRequest, perr)
		}
	}
	if perr := wire.CheckVersion(req); perr != nil {
		return reject(StageProtocol, http.StatusBadRequest, perr)
	}
	if perr := checkCapabilities(call); perr != nil {
		return reject(StageProtocol, http.StatusBadRequest, perr)
	}
	return nil
}

// toolNamed returns the tool a params.name without escapes names, looked
// up by its bytes (no string is made for a known name); nil otherwise, and
// the caller decodes the name the long way.
func (h *Handler) toolNamed(req *wire.Request) *tools.Tool {
	name, ok := req.NameBytes()
	if !ok {
		return nil
	}
	return h.sys.Tool(string(name))
}

// checkParamHeaders checks each x-mcp-header argument of the tool against
// its Mcp-Param-<Name> header. The arguments are decoded only for tools
// that declare such headers; arguments that are not an object are left to
// the method, which answers -32602.
func checkParamHeaders(h http.Header, tool *tools.Tool, arguments wire.RawJSON) *wire.Error {
	if tool == nil || len(tool.HeaderParams()) == 0 {
		return nil
	}
	var args map[string]any
	if arguments != nil {
		if arguments[0] != '{' || wire.Unmarshal(arguments, &args) != nil {
			return nil
		}
	}
	for _, p := range tool.HeaderParams() {
		key := textproto.CanonicalMIMEHeaderKey(wire.HeaderParamPrefix + p.Name)
		value, perr := wire.HeaderValue(h, key)
		if perr != nil {
			return perr
		}
		_, present := h[key]
		if perr := wire.CheckParamHeader(p.Name, value, present, lookup(args, p.Path)); perr != nil {
			return perr
		}
	}
	return nil
}

// lookup returns the value at path in args, nil when absent or null.
func lookup(args map[string]any, path []string) any {
	var v any = args
	for _, name := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[name]
	}
	return v
}

package transport

import (
	"github.com/wymcp/wymcp/internal/actors"
	"github.com/wymcp/wymcp/internal/wire"
)

// checkCapabilities refuses a call whose tool needs client capabilities the
// request did not declare (-32021, HTTP 400). data.requiredCapabilities is
// a ClientCapabilities object naming everything the tool needs, so a client
// learns the whole requirement from one answer.
func checkCapabilities(call *actors.Call) *wire.Error {
	if call.Tool == nil {
		return nil
	}
	need := call.Tool.RequiredCapabilities()
	if len(need) == 0 {
		return nil
	}
	missing := false
	for _, c := range need {
		if !call.Request.Meta.HasCapability(c) {
			missing = true
			break
		}
	}
	if !missing {
		return nil
	}
	required := make(map[string]struct{}, len(need))
	for _, c := range need {
		required[c] = struct{}{}
	}
	return wire.NewError(wire.CodeMissingRequiredClientCapability).
		WithData(map[string]any{"requiredCapabilities": required})
}

package transport

import (
	"github.com/wymcp/wymcp/actors"
	"github.com/wymcp/wymcp/protocol"
)

// checkCapabilities refuses a call whose tool needs client capabilities the
// request did not declare (-32021, HTTP 400). data.requiredCapabilities is
// a ClientCapabilities object naming everything the tool needs, so a client
// learns the whole requirement from one answer.
func checkCapabilities(call *actors.Call) *protocol.Error {
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
	return protocol.NewError(protocol.CodeMissingRequiredClientCapability).
		WithData(map[string]any{"requiredCapabilities": required})
}

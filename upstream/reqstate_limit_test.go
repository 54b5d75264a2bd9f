package upstream_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestInputRequiredStateAtItsLimit: an upstream's requestState of 64 KiB,
// the limit, goes to the client sealed in a requestState of the
// gateway's that is at most a half larger, and comes back to the upstream
// exactly as it gave it (one byte more is the malformed answer:
// TestOutcomeInputRequiredUnreadable).
func TestInputRequiredStateAtItsLimit(t *testing.T) {
	t.Parallel()
	upState := strings.Repeat("s", 64<<10)
	ask := ocResult(`{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object"}}}},"requestState":"` + upState + `"}`)
	var got string
	answer := func(w http.ResponseWriter, r *http.Request, id string, body []byte) {
		var retry struct {
			Params struct {
				RequestState string `json:"requestState"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &retry); err != nil {
			t.Errorf("retry: %v", err)
		}
		got = retry.Params.RequestState
		ocOK(w, r, id, body)
	}
	g := newOCGateway(t, nil, ocOpts(newFakeUp(t, false, ask, answer)))
	const caps = `{"elicitation":{}}`
	rep := g.Send(t, mcptest.ToolCall("g_t", `{}`).WithCapabilities(caps))
	_, state := rep.ExpectInputRequired(t, "1")
	if len(state) > len(upState)*3/2 {
		t.Errorf("the sealed requestState is %d bytes for the upstream's %d", len(state), len(upState))
	}
	ocExpectText(t, g.Send(t, mcptest.ToolCall("g_t", `{}`).WithCapabilities(caps).Retry(`{"who":{"action":"decline"}}`, state)), "ok", false)
	if got != upState {
		t.Errorf("the upstream got back a requestState of %d bytes, want its own %d", len(got), len(upState))
	}
}

package upstream_test

import (
	"encoding/json"
	"testing"
)

// TestRedteam39RetryFreshID: a retried call is a new request of the
// upstream's session, and a 2025-era session forbids a request id used
// before in it (the first try may still be running there, its answer
// routed by that id): the retry has an id of its own.
func TestRedteam39RetryFreshID(t *testing.T) {
	t.Parallel()
	f := newFakeUp(t, true, ocHijack(""))
	f.tool = `{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`
	o := ocOpts(f)
	o.RetryIdempotent = true
	g := newOCGateway(t, nil, o)
	ocExpectText(t, g.call(t), "ok", false)
	sessions, _, _, bodies := f.record()
	if len(bodies) != 2 {
		t.Fatalf("the upstream got %d calls, want 2 (one retry)", len(bodies))
	}
	var ids [2]string
	for i, b := range bodies {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal([]byte(b), &m); err != nil {
			t.Fatal(err)
		}
		ids[i] = string(m.ID)
	}
	if ids[0] == ids[1] && sessions[0] == sessions[1] {
		t.Errorf("the retry reused request id %s in session %q", ids[0], sessions[0])
	}
}

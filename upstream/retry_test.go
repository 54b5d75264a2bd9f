package upstream_test

import (
	"fmt"
	"testing"
)

// A call that failed without an answer is made once more when its tool
// says it is read-only or idempotent and the operator allowed retries for
// the upstream; never otherwise (docs/design.md §10b).
func TestOutcomeRetryIdempotent(t *testing.T) {
	t.Parallel()
	const (
		readOnly   = `{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`
		idempotent = `{"name":"t","inputSchema":{"type":"object"},"annotations":{"idempotentHint":true,"readOnlyHint":false}}`
		plain      = `{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false}}`
	)
	for _, c := range []struct {
		name    string
		tool    string
		allowed bool
		answer  ocHandler
		calls   int32
		want    string
	}{
		{"read-only, 502, allowed", readOnly, true, ocStatus(502, "text/html", "bad gateway"), 2, "ok"},
		{"idempotent, 503, allowed", idempotent, true, ocStatus(503, "text/plain", ""), 2, "ok"},
		{"read-only, 504, allowed", readOnly, true, ocStatus(504, "text/plain", ""), 2, "ok"},
		{"read-only, connection closed, allowed", readOnly, true, ocHijack(""), 2, "ok"},
		{"read-only, 500, allowed: the upstream answered", readOnly, true, ocStatus(500, "text/plain", ""), 1, "Upstream fake answered HTTP 500."},
		{"read-only, 502, not allowed", readOnly, false, ocStatus(502, "text/html", ""), 1, "Upstream fake answered HTTP 502."},
		{"not idempotent, 502, allowed", plain, true, ocStatus(502, "text/html", ""), 1, "Upstream fake answered HTTP 502."},
		{"no annotations, connection closed, allowed", "", true, ocHijack(""), 1, "Upstream fake is unreachable."},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeUp(t, false, c.answer)
			f.tool = c.tool
			o := ocOpts(f)
			o.RetryIdempotent = c.allowed
			g := newOCGateway(t, nil, o)
			rep := g.call(t)
			if c.want == "ok" {
				ocExpectText(t, rep, "ok", false)
			} else {
				ocToolError(t, rep, c.want)
			}
			if n := f.calls.Load(); n != c.calls {
				t.Errorf("the upstream got %d calls, want %d", n, c.calls)
			}
		})
	}
}

// Retries are budgeted: when every call fails, retries stay a share of
// the calls past a first burst, however many calls there are.
func TestOutcomeRetryBudget(t *testing.T) {
	t.Parallel()
	f := newFakeUp(t, false)
	f.tool = `{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`
	f.def = ocStatus(502, "text/html", "")
	o := ocOpts(f)
	o.RetryIdempotent, o.MaxInFlight, o.BreakerMinCalls = true, 40, -1 // a burst of 10
	g := newOCGateway(t, nil, o)
	const calls = 100
	for i := range calls {
		g.callAs(t, "g_t", `{}`, fmt.Sprintf("198.51.100.%d", i))
	}
	retries := int(f.calls.Load()) - calls
	// The burst (10), then a fifth of each call's worth: at most 10 + 100/5.
	if retries < 10 || retries > 10+calls/5 {
		t.Errorf("%d retries for %d failing calls; want within the burst of 10 plus a fifth of the calls", retries, calls)
	}
}

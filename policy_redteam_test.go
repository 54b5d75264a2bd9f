package wymcp_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// readProbe counts the times something formats it.
type readProbe struct{ reads atomic.Int64 }

func (p *readProbe) String() string { p.reads.Add(1); return "probe" }

// liveRule is a rule an embedder changes while it is served: an allow-list
// under its own lock. Probe stands for any field the server must not read.
type liveRule struct {
	mu      sync.Mutex
	allowed map[string]bool
	Probe   *readProbe
}

func (r *liveRule) Allow(_ context.Context, req *access.Request) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return req.Caller != nil && r.allowed[req.Caller.Subject], nil
}

// TestPolicyRuleNotRead: the server knows a rule by its identity (or its
// String), never by reading its fields: an embedder's rule that changes
// under its own lock while the tools are set again is neither raced nor
// crashed (a map formatted while written is a fatal error).
func TestPolicyRuleNotRead(t *testing.T) {
	t.Parallel()
	rule := &liveRule{allowed: map[string]bool{}, Probe: new(readProbe)}
	mk := func() *tools.Tool {
		return tools.Must(tools.NewRaw("live", "Live.", []byte(`{"type":"object"}`),
			func(context.Context, []byte) (*protocol.CallToolResult, error) { return protocol.TextResult("ok"), nil },
			tools.WithAllow(rule)))
	}
	srv, err := wymcp.New(protocol.Implementation{Name: "wymcp-test", Version: "0.0.1"}, &wymcp.Options{}, mk())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			rule.mu.Lock()
			rule.allowed[string(rune('a'+i%26))] = i%2 == 0
			rule.mu.Unlock()
		}
	}()
	for range 5 {
		if err := srv.SetTools(mk()); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	if n := rule.Probe.reads.Load(); n != 0 {
		t.Errorf("the rule's fields were formatted %d times", n)
	}
}

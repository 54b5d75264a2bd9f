package gateway_test

import (
	"context"
	"sync"
	"testing"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/upstream"
)

// setRule allows the tools it names: a rule an embedder changes while it
// is served, under its own lock.
type setRule struct {
	mu    sync.Mutex
	names map[string]bool
}

func (r *setRule) Allow(_ context.Context, req *access.Request) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.names[req.Tool.Name], nil
}

func (r *setRule) add(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names[name] = true
}

// TestPolicyReloadRuleIdentity: with Update.Same nil, a rule is compared
// by identity, not by its fields: a reload to another rule object whose
// fields are equal today serves that object (the upstream is connected
// afresh), so that what the embedder changes in it later applies; and
// its fields are never read (they are the embedder's, under its lock).
func TestPolicyReloadRuleIdentity(t *testing.T) {
	t.Parallel()
	a := serveOrigin(t, says("one", "a one"), says("two", "a two"), says("three", "a three"))
	up := a.up("a", "")
	up.Allow = &setRule{names: map[string]bool{"one": true, "two": true}}
	up.Overrides = map[string]upstream.Override{"two": {Allow: &setRule{names: map[string]bool{"two": true}}}}
	var log mcptest.SyncBuffer
	g, url := open(t, gateway.Options{Upstreams: []upstream.Options{up}, Server: wymcp.Options{Logger: logTo(&log)}})
	ep := endpoint(url, "", info.Name)
	waitTools(t, ep, "one", "two")

	next, nextTwo := &setRule{names: map[string]bool{"one": true, "two": true}}, &setRule{names: map[string]bool{"two": true}}
	up.Allow = next
	up.Overrides = map[string]upstream.Override{"two": {Allow: nextTwo}}
	if err := g.Reload(t.Context(), gateway.Update{Upstreams: []upstream.Options{up}}); err != nil {
		t.Fatal(err)
	}
	waitLog(t, &log, `reconnected=a`)
	waitTools(t, ep, "one", "two")
	next.add("three")
	waitTools(t, ep, "one", "two", "three")
}

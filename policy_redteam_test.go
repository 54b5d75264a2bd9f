package wymcp_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/internal/mcptest"
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

// waitLimiter refuses every call with a fixed wait.
type waitLimiter time.Duration

func (w waitLimiter) Take(context.Context, string, access.Limit) (bool, time.Duration, error) {
	return false, time.Duration(w), nil
}

// TestRateLimitRetryAfterBounds: whatever wait a Limiter returns, the
// refusal's Retry-After is its whole seconds rounded up and at least 1,
// and agrees with data.retryAfterMs: a wait near the largest Duration does
// not overflow into "retry in 1 second".
func TestRateLimitRetryAfterBounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		wait   time.Duration
		header string
		ms     string
	}{
		{math.MaxInt64, "9223372037", "9223372036854"},
		{math.MaxInt64 - 500*time.Millisecond, "9223372037", "9223372036354"},
		{-time.Hour, "1", "1"},
		{0, "1", "1"},
		{time.Second, "1", "1000"},
		{time.Second + time.Nanosecond, "2", "1000"},
	} {
		echo := tools.Must(tools.NewRaw("echo", "Echoes.", []byte(`{"type":"object"}`),
			func(context.Context, []byte) (*protocol.CallToolResult, error) {
				return protocol.TextResult("ran"), nil
			},
			tools.WithRateLimit(access.Limit{Calls: 1, Per: time.Minute})))
		info := protocol.Implementation{Name: "wymcp-test", Version: "0.0.1"}
		srv, err := wymcp.New(info, &wymcp.Options{Limiter: waitLimiter(tc.wait)}, echo)
		if err != nil {
			t.Fatal(err)
		}
		rep := mcptest.InMemory(srv, info).Send(t, mcptest.ToolCall("echo", `{}`))
		rep.ExpectError(t, http.StatusTooManyRequests, -32603, "1")
		want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Too many calls from this caller: retry later","data":{"retryAfterMs":` + tc.ms + `}}}`
		if got := rep.Header.Get("Retry-After"); got != tc.header || string(rep.Raw) != want {
			t.Errorf("wait %v: Retry-After %q, body %s\nwant %q, %s", tc.wait, got, rep.Raw, tc.header, want)
		}
		_ = srv.Shutdown(context.Background())
	}
}

// TestRateLimitIPv6Prefix: without auth, a rate limit counts an IPv6
// caller by its /64, as an upstream's shares do (docs/design.md §10b): a
// host that holds the whole /64 does not get a new bucket per address;
// another /64 and an IPv4 caller go on.
func TestRateLimitIPv6Prefix(t *testing.T) {
	t.Parallel()
	echo := tools.Must(tools.NewRaw("echo", "Echoes.", []byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			return protocol.TextResult("ran"), nil
		},
		tools.WithRateLimit(access.Limit{Calls: 1, Per: time.Hour})))
	info := protocol.Implementation{Name: "wymcp-test", Version: "0.0.1"}
	srv, err := wymcp.New(info, &wymcp.Options{}, echo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	from := func(addr string) *mcptest.Endpoint {
		return mcptest.InMemory(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.RemoteAddr = addr
			srv.ServeHTTP(w, r)
		}), info)
	}
	from("[2001:db8:1:2::1]:1000").Send(t, mcptest.ToolCall("echo", `{}`)).ExpectResult(t, "1")
	rep := from("[2001:db8:1:2:ffff::9]:1000").Send(t, mcptest.ToolCall("echo", `{}`))
	rep.ExpectError(t, http.StatusTooManyRequests, -32603, "1")
	if rep.Header.Get("Retry-After") == "" {
		t.Errorf("no Retry-After: %v", rep.Header)
	}
	from("[2001:db8:1:3::1]:1000").Send(t, mcptest.ToolCall("echo", `{}`)).ExpectResult(t, "1")
	from("192.0.2.7:1000").Send(t, mcptest.ToolCall("echo", `{}`)).ExpectResult(t, "1")
}

// TestPolicyRuleFuncChangeTold: tools set again with a rule that is
// another closure of the same function (another caller allowed, the same
// code) tell the listen streams: a func cannot be told apart from another
// by its code, so a set with one always counts as changed.
func TestPolicyRuleFuncChangeTold(t *testing.T) {
	t.Parallel()
	gate := func(who string) *tools.Tool {
		return tools.Must(tools.NewRaw("gate", "Gated.", []byte(`{"type":"object"}`),
			func(context.Context, []byte) (*protocol.CallToolResult, error) { return protocol.TextResult("ok"), nil },
			tools.WithAllow(access.RuleFunc(func(_ context.Context, req *access.Request) (bool, error) {
				return req.Caller != nil && req.Caller.Subject == who, nil
			}))))
	}
	// One call site: the two rules are one closure's code.
	var gates []*tools.Tool
	for _, who := range []string{"alice", "bob"} {
		gates = append(gates, gate(who))
	}
	srv, err := wymcp.New(listenInfo, &wymcp.Options{ToolsChange: true}, gates[0])
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	ep := &mcptest.Endpoint{URL: hs.URL, HTTP: hs.Client(), Info: listenInfo}
	s := openListen(t, ep, listen("4", `{"toolsListChanged":true}`), "4", `{"toolsListChanged":true}`)
	if err := srv.SetTools(gates[1]); err != nil {
		t.Fatal(err)
	}
	// Shutdown tells a pending change before each stream's result.
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	hs.CloseClientConnections()
	if got := s.NextData(t); got != changedOf("4") {
		t.Fatalf("got %s, want %s", got, changedOf("4"))
	}
	expectEnd(t, s, "4")
}

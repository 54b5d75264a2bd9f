package wymcp_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// rootOnly allows the caller whose subject is "root" (the fake
// authenticator's admin token) and nobody else.
var rootOnly = access.RuleFunc(func(_ context.Context, req *access.Request) (bool, error) {
	return req.Caller != nil && req.Caller.Subject == "root", nil
})

// guardedVault is vault (hidden_tool_test.go) without scopes, hidden by a
// rule instead.
func guardedVault(rule access.Rule) *tools.Tool {
	return tools.Must(tools.NewRaw(vaultTool, "Needs root.",
		[]byte(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			return protocol.TextResult("opened"), nil
		},
		tools.WithAllow(rule), tools.WithRequiredCapabilities("elicitation")))
}

// TestPolicyDeniedAnswersAsUnknown: a tool a rule denies the caller is
// answered, when called, exactly as a name no tool has, in every case the
// hidden scoped tool is (hiddenCases): status, headers and body but for
// the echoed name (docs/design.md §5, §11).
func TestPolicyDeniedAnswersAsUnknown(t *testing.T) {
	t.Parallel()
	e := newAuthServer(t, &wymcp.Options{Versions: allVersions}, guardedVault(rootOnly))
	for _, tc := range hiddenCases() {
		t.Run(tc.name, func(t *testing.T) {
			unknown := tc.send(t, e, unknownTool, tc.token)
			expectAnswer(t, "unknown tool", unknown, tc)
			denied := tc.send(t, e, vaultTool, tc.token)
			want := unknown
			want.body = strings.ReplaceAll(unknown.body, unknownTool, vaultTool)
			if denied.status != want.status || !reflect.DeepEqual(denied.header, want.header) || denied.body != want.body {
				t.Errorf("denied tool:\n%d %v\n%s\nunknown tool (its name swapped):\n%d %v\n%s",
					denied.status, denied.header, denied.body, want.status, want.header, want.body)
			}
		})
	}
	res := e.Send(t, bearer(mcptest.ToolCall(vaultTool, `{}`).WithCapabilities(`{"elicitation":{}}`), "admin")).ExpectResult(t, "1")
	if text, isErr := mcptest.ToolText(t, res); text != "opened" || isErr {
		t.Errorf("root's call: %q isError %v", text, isErr)
	}
}

// Without auth a rule sees no caller: a rule that needs one denies, and
// the call is an unknown tool's, byte for byte.
func TestPolicyWithoutAuth(t *testing.T) {
	t.Parallel()
	e := newPlainServer(t, guardedVault(rootOnly))
	unknown := e.Send(t, mcptest.ToolCall(unknownTool, `{}`))
	unknown.ExpectError(t, 200, -32602, "1")
	denied := e.Send(t, mcptest.ToolCall(vaultTool, `{}`))
	if got, want := string(denied.Raw), strings.ReplaceAll(string(unknown.Raw), unknownTool, vaultTool); got != want {
		t.Errorf("denied: %s\nwant: %s", got, want)
	}
	if names := toolNames(e.Send(t, mcptest.Call("tools/list", "")).ExpectResult(t, "1")); slices.Contains(names, vaultTool) {
		t.Errorf("tools/list shows the denied tool: %v", names)
	}
}

// TestPolicyList: tools/list leaves out, per caller, the tools a rule
// denies it; a rule that needs the arguments allows the list (the call
// decides); the pages are cacheScope private and their cursors bound to
// the caller's subset, as a scoped list's.
func TestPolicyList(t *testing.T) {
	t.Parallel()
	byArgs := access.RuleFunc(func(_ context.Context, req *access.Request) (bool, error) {
		if req.Listing {
			return true, nil
		}
		return !strings.Contains(string(req.Args), "prod"), nil
	})
	deploy := tools.Must(tools.NewRaw("deploy", "Deploys.", []byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			return protocol.TextResult("deployed"), nil
		},
		tools.WithAllow(byArgs)))
	e := newAuthServer(t, &wymcp.Options{PageSize: 1}, guardedVault(rootOnly), deploy)
	list := func(token, cursor string) mcptest.Reply {
		params := ""
		if cursor != "" {
			params = `"cursor":` + mcptest.Quote(cursor)
		}
		return e.Send(t, bearer(mcptest.Call("tools/list", params), token))
	}
	all := func(token string) (names []string, cursors []string) {
		cursor := ""
		for {
			res := list(token, cursor).ExpectResult(t, "1")
			if res["cacheScope"] != "private" {
				t.Errorf("cacheScope = %v, want private", res["cacheScope"])
			}
			names = append(names, toolNames(res)...)
			next, _ := res["nextCursor"].(string)
			if next == "" {
				return names, cursors
			}
			cursors = append(cursors, next)
			cursor = next
		}
	}
	alice, aliceCursors := all("reader")
	root, _ := all("admin")
	if slices.Contains(alice, vaultTool) || !slices.Contains(alice, "deploy") {
		t.Errorf("alice lists %v: want deploy and not %s", alice, vaultTool)
	}
	if !slices.Contains(root, vaultTool) || !slices.Contains(root, "deploy") {
		t.Errorf("root lists %v: want %s and deploy", root, vaultTool)
	}
	// A cursor of alice's list is of her subset: root's is another.
	last := aliceCursors[len(aliceCursors)-1]
	list("admin", last).ExpectError(t, 200, -32602, "1")
	list("reader", last).ExpectResult(t, "1")
	// The call decides what the list could not.
	e.Send(t, bearer(mcptest.ToolCall("deploy", `{"env":"dev"}`), "reader")).ExpectResult(t, "1")
	e.Send(t, bearer(mcptest.ToolCall("deploy", `{"env":"prod"}`), "reader")).ExpectError(t, 200, -32602, "1")
}

// captureLog is a slog handler that keeps the records' messages.
type captureLog struct {
	mu   sync.Mutex
	msgs []string
}

func (c *captureLog) Enabled(context.Context, slog.Level) bool { return true }
func (c *captureLog) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, r.Message)
	return nil
}
func (c *captureLog) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *captureLog) WithGroup(string) slog.Handler      { return c }
func (c *captureLog) all() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.msgs, "\n")
}

// A rule that fails or panics denies, and the server logs it and goes on.
func TestPolicyFailingRuleDenies(t *testing.T) {
	t.Parallel()
	for name, rule := range map[string]access.Rule{
		"error": access.RuleFunc(func(context.Context, *access.Request) (bool, error) {
			return true, errors.New("no such claim")
		}),
		"panic": access.RuleFunc(func(context.Context, *access.Request) (bool, error) { panic("rule exploded") }),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			logs := &captureLog{}
			e := newAuthServer(t, &wymcp.Options{Logger: slog.New(logs)}, guardedVault(rule))
			e.Send(t, bearer(mcptest.ToolCall(vaultTool, `{}`), "admin")).ExpectError(t, 200, -32602, "1")
			if names := toolNames(e.Send(t, bearer(mcptest.Call("tools/list", ""), "admin")).ExpectResult(t, "1")); slices.Contains(names, vaultTool) {
				t.Errorf("tools/list shows the tool: %v", names)
			}
			e.Send(t, bearer(mcptest.ToolCall("echo", `{"text":"still"}`), "admin")).ExpectResult(t, "1")
			if got := logs.all(); !strings.Contains(got, "policy: a rule") {
				t.Errorf("log %q: want the rule's failure", got)
			}
		})
	}
}

// fixedLimiter refuses the keys in deny with a fixed wait, and records
// every key it is asked.
type fixedLimiter struct {
	mu   sync.Mutex
	deny map[string]bool
	keys []string
}

func (f *fixedLimiter) Take(_ context.Context, key string, l access.Limit) (bool, time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = append(f.keys, key)
	if f.deny[key] {
		return false, 2500 * time.Millisecond, nil
	}
	return true, 0, nil
}

// TestRateLimitAnswer: a call past its tool's limit is answered 429 with
// Retry-After (whole seconds, rounded up) and -32603 with
// data.retryAfterMs, before the tool runs; another caller goes on; the
// key is the limit's place and the caller (its key and client).
func TestRateLimitAnswer(t *testing.T) {
	t.Parallel()
	lim := &fixedLimiter{deny: map[string]bool{"tool:echo\x00sub:alice\x00": true}}
	echo := tools.Must(tools.NewRaw("echo", "Echoes.", []byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			return protocol.TextResult("ran"), nil
		},
		tools.WithRateLimit(access.Limit{Calls: 1, Per: time.Minute})))
	opts := &wymcp.Options{Limiter: lim, Versions: allVersions}
	opts.Auth = &wymcp.AuthOptions{Authenticator: wymcp.AuthenticatorFunc(fakeAuthenticator), ResourceMetadata: testMetadata, RequiredScopes: []string{"mcp"}}
	srv, err := wymcp.New(protocol.Implementation{Name: "wymcp-test", Version: "0.0.1"}, opts, echo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	e := mcptest.InMemory(srv, protocol.Implementation{Name: "wymcp-test", Version: "0.0.1"})

	rep := e.Send(t, bearer(mcptest.ToolCall("echo", `{}`).WithID(5), "reader"))
	rep.ExpectError(t, http.StatusTooManyRequests, -32603, "5")
	if got := rep.Header.Get("Retry-After"); got != "3" {
		t.Errorf("Retry-After = %q, want 3", got)
	}
	const want = `{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"Too many calls from this caller: retry later","data":{"retryAfterMs":2500}}}`
	if got := string(rep.Raw); got != want {
		t.Errorf("body %s\nwant %s", got, want)
	}
	// The 2025 era is answered alike.
	status, hdr, body := legacyRequest(t, e, "2025-11-25", legacyCall("echo", `{}`), map[string]string{"Authorization": "Bearer reader"})
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") != "3" || !strings.Contains(body, `"data":{"retryAfterMs":2500}`) {
		t.Errorf("2025 era: %d %v %s", status, hdr, body)
	}
	// Root is another caller.
	res := e.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "admin")).ExpectResult(t, "1")
	if text, _ := mcptest.ToolText(t, res); text != "ran" {
		t.Errorf("root's call: %q", text)
	}
	// Neither a tools/list nor a call of an unknown tool counts.
	e.Send(t, bearer(mcptest.Call("tools/list", ""), "reader")).ExpectResult(t, "1")
	lim.mu.Lock()
	defer lim.mu.Unlock()
	if want := []string{"tool:echo\x00sub:alice\x00", "tool:echo\x00sub:alice\x00", "tool:echo\x00sub:root\x00"}; !slices.Equal(lim.keys, want) {
		t.Errorf("keys %q, want %q", lim.keys, want)
	}
}

// TestRateLimitDefault: with the default limiter, one caller past its
// limit is refused while another goes on; without auth, callers are told
// apart by their address.
func TestRateLimitDefault(t *testing.T) {
	t.Parallel()
	echo := tools.Must(tools.NewRaw("echo", "Echoes.", []byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			return protocol.TextResult("ran"), nil
		},
		tools.WithRateLimit(access.Limit{Calls: 2, Per: time.Hour})))
	srv, err := wymcp.New(protocol.Implementation{Name: "wymcp-test", Version: "0.0.1"}, &wymcp.Options{Logger: slog.New(slog.DiscardHandler)}, echo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	from := func(addr string) *mcptest.Endpoint {
		return mcptest.InMemory(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.RemoteAddr = addr
			srv.ServeHTTP(w, r)
		}), protocol.Implementation{Name: "wymcp-test", Version: "0.0.1"})
	}
	a, b := from("192.0.2.1:1000"), from("192.0.2.2:1000")
	for range 2 {
		a.Send(t, mcptest.ToolCall("echo", `{}`)).ExpectResult(t, "1")
	}
	rep := a.Send(t, mcptest.ToolCall("echo", `{}`))
	rep.ExpectError(t, http.StatusTooManyRequests, -32603, "1")
	ms, _ := rep.Data(t)["retryAfterMs"].(float64)
	if ms <= 0 || ms > float64(30*time.Minute/time.Millisecond) || rep.Header.Get("Retry-After") == "" {
		t.Errorf("retryAfterMs %v, Retry-After %q: want a wait of at most half an hour", ms, rep.Header.Get("Retry-After"))
	}
	b.Send(t, mcptest.ToolCall("echo", `{}`)).ExpectResult(t, "1")
}

// A limit that could not be counted fails the tool's construction.
func TestRateLimitInvalid(t *testing.T) {
	t.Parallel()
	for _, l := range []access.Limit{{Calls: -1, Per: time.Second}, {Calls: 1}, {Per: time.Second}} {
		if _, err := tools.NewRaw("x", "X.", []byte(`{"type":"object"}`),
			func(context.Context, []byte) (*protocol.CallToolResult, error) { return nil, nil },
			tools.WithRateLimit(l)); err == nil {
			t.Errorf("WithRateLimit(%+v): no error", l)
		}
	}
}

// newPlainServer serves ts without auth, in memory.
func newPlainServer(t *testing.T, ts ...*tools.Tool) *mcptest.Endpoint {
	t.Helper()
	info := protocol.Implementation{Name: "wymcp-test", Version: "0.0.1"}
	srv, err := wymcp.New(info, &wymcp.Options{Logger: slog.New(slog.DiscardHandler)}, ts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return mcptest.InMemory(srv, info)
}

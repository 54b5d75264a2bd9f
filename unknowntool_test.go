package wymcp_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/tools"
)

// Options.UnknownTool and Server.SetCacheTTL: what a gateway needs to keep
// its clients' lists fresh (docs/design.md §10e).

// TestUnknownToolHook: a call naming a tool the set lacks asks the hook,
// with the name as sent; when the hook has set the tool and says so, the
// call is served; when it says no, the call is answered as unknown,
// exactly as without a hook. A known tool's call never reaches it.
func TestUnknownToolHook(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		asked []string
		srv   *wymcp.Server
	)
	hook := func(_ context.Context, name string) bool {
		mu.Lock()
		asked = append(asked, name)
		mu.Unlock()
		if name != "extra_1" {
			return false
		}
		if err := srv.SetTools(generation(t, 2)...); err != nil {
			t.Error(err)
		}
		return true
	}
	var err error
	srv, err = wymcp.New(listenInfo, &wymcp.Options{UnknownTool: hook}, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	ep := mcptest.Serve(t, srv, listenInfo)
	plain, err := wymcp.New(listenInfo, nil, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	plainEP := mcptest.Serve(t, plain, listenInfo)

	ep.Send(t, mcptest.ToolCall("version", `{}`)).ExpectResult(t, "1")
	got := ep.Send(t, mcptest.ToolCall("nothing", `{}`))
	got.ExpectError(t, 200, -32602, "1")
	if want := plainEP.Send(t, mcptest.ToolCall("nothing", `{}`)); string(got.Raw) != string(want.Raw) {
		t.Errorf("unknown with the hook %s, without %s", got.Raw, want.Raw)
	}
	res := ep.Send(t, mcptest.ToolCall("extra_1", `{}`)).ExpectResult(t, "1")
	if res["isError"] == true {
		t.Errorf("extra_1 after the hook set it: %v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[0] != "nothing" || asked[1] != "extra_1" {
		t.Errorf("the hook was asked %q, want [nothing extra_1]", asked)
	}
}

// TestSetCacheTTL: tools/list answers the new ttlMs from then on (in
// every revision served), server/discover keeps the configured one, and a
// listen stream is not told (its list is the same).
func TestSetCacheTTL(t *testing.T) {
	t.Parallel()
	srv, ep := listenServer(t, &wymcp.Options{CacheTTL: time.Minute, Versions: []string{"2026-07-28", "2025-11-25"}})
	s := openListen(t, ep, listen("5", `{"toolsListChanged":true}`), "5", `{"toolsListChanged":true}`)
	if err := srv.SetCacheTTL(1500 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	res := ep.Send(t, mcptest.Call("tools/list", "")).ExpectResult(t, "1")
	if res["ttlMs"] != float64(1500) {
		t.Errorf("tools/list ttlMs %v, want 1500", res["ttlMs"])
	}
	res = ep.Send(t, mcptest.Call("server/discover", "")).ExpectResult(t, "1")
	if res["ttlMs"] != float64(60_000) {
		t.Errorf("server/discover ttlMs %v, want 60000", res["ttlMs"])
	}
	// A later SetTools keeps it.
	if err := srv.SetTools(generation(t, 2)...); err != nil {
		t.Fatal(err)
	}
	if got := s.NextData(t); got != changedOf("5") {
		t.Fatalf("after SetTools: %s, want %s", got, changedOf("5"))
	}
	res = ep.Send(t, mcptest.Call("tools/list", "")).ExpectResult(t, "1")
	if res["ttlMs"] != float64(1500) {
		t.Errorf("tools/list ttlMs after SetTools %v, want 1500", res["ttlMs"])
	}
	if err := srv.SetCacheTTL(-time.Second); err != nil {
		t.Fatal(err)
	}
	res = ep.Send(t, mcptest.Call("tools/list", "")).ExpectResult(t, "1")
	if res["ttlMs"] != float64(0) {
		t.Errorf("tools/list ttlMs after a negative one %v, want 0", res["ttlMs"])
	}
	// No change of the list was pending: the drain's end comes next.
	if err := srv.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	expectEnd(t, s, "5")
}

// TestUnknownToolHookAfterAuth: with auth, the hook is asked only for a
// caller the server answers (a request without a token is refused first,
// its hook never asked), and a tool it finds is authorized as any: hidden
// from a caller without its scope (answered as unknown, byte for byte),
// served to one with it.
func TestUnknownToolHookAfterAuth(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		asked int
		srv   *wymcp.Server
	)
	secret := tools.Must(tools.New("secret", "Needs admin.", func(context.Context, struct{}) (string, error) { return "s", nil }, tools.WithScopes("admin")))
	hook := func(_ context.Context, name string) bool {
		mu.Lock()
		asked++
		mu.Unlock()
		if name != "secret" {
			return false
		}
		if err := srv.SetTools(append(generation(t, 1), secret)...); err != nil {
			t.Error(err)
		}
		return true
	}
	var err error
	srv, err = wymcp.New(listenInfo, &wymcp.Options{
		UnknownTool: hook,
		Auth:        &wymcp.AuthOptions{Authenticator: wymcp.AuthenticatorFunc(fakeAuthenticator), ResourceMetadata: testMetadata, RequiredScopes: []string{"mcp"}},
	}, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	ep := mcptest.Serve(t, srv, listenInfo)
	ep.Send(t, mcptest.ToolCall("secret", `{}`)).ExpectError(t, 401, -32600, "1")
	mu.Lock()
	if asked != 0 {
		t.Errorf("the hook was asked %d times for a request without a token", asked)
	}
	mu.Unlock()
	unknown := ep.Send(t, bearer(mcptest.ToolCall("nothing", `{}`), "reader"))
	unknown.ExpectError(t, 200, -32602, "1")
	hidden := ep.Send(t, bearer(mcptest.ToolCall("secret", `{}`), "reader"))
	hidden.ExpectError(t, 200, -32602, "1")
	if want := strings.ReplaceAll(string(unknown.Raw), "nothing", "secret"); string(hidden.Raw) != want {
		t.Errorf("a found tool the caller may not see: %s, want %s", hidden.Raw, want)
	}
	res := ep.Send(t, bearer(mcptest.ToolCall("secret", `{}`), "admin")).ExpectResult(t, "1")
	if res["isError"] == true {
		t.Errorf("secret for admin: %v", res)
	}
}

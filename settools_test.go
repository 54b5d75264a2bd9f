package wymcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// generation returns a tool set whose tools say which set they are of:
// "version" answers v, and set v has v extra tools, so that its tools/list
// says which set it is too.
func generation(t testing.TB, v int) []*tools.Tool {
	ts := []*tools.Tool{tools.Must(tools.New("version", "Says which tool set answered.", func(context.Context, struct{}) (string, error) {
		return fmt.Sprint(v), nil
	}))}
	for i := range v {
		ts = append(ts, tools.Must(tools.New(fmt.Sprintf("extra_%d", i), "An extra tool.", func(context.Context, struct{}) (string, error) {
			return "", nil
		})))
	}
	return ts
}

// TestSetToolsUnderLoad: the tool set is replaced many times while calls
// and listings run; every answer is one set's whole, and none fails.
func TestSetToolsUnderLoad(t *testing.T) {
	srv, err := wymcp.New(protocol.Implementation{Name: "live", Version: "1.0.0"}, &wymcp.Options{PageSize: 2}, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	ep := mcptest.Serve(t, srv, protocol.Implementation{Name: "live", Version: "1.0.0"})

	// The load runs 2 s, and on until it made calls, listings and swaps
	// (a loaded machine may need longer to see a listing whole), at most
	// 30 s.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	began := time.Now()
	var (
		wg           sync.WaitGroup
		calls, lists atomic.Int64
		current      atomic.Int64
		swaps        int
	)
	current.Store(1)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if w%2 == 0 {
					rep := ep.Send(t, mcptest.ToolCall("version", `{}`).WithID(w+1))
					res := rep.ExpectResult(t, fmt.Sprint(w+1))
					text, isErr := mcptest.ToolText(t, res)
					if isErr || len(text) != 3 { // `"N"`
						t.Errorf("call answered %s", rep.Raw)
						return
					}
					calls.Add(1)
					continue
				}
				// A whole listing, page by page: every page of one set, or
				// a cursor refused because the set changed.
				names, ok := listAll(t, ep)
				if !ok {
					continue
				}
				v := strings.Count(strings.Join(names, ","), "extra_")
				if len(names) != v+1 || names[0] != "version" {
					t.Errorf("listing mixes sets: %q", names)
					return
				}
				lists.Add(1)
			}
		}()
	}
	for time.Since(began) < 2*time.Second || (calls.Load() == 0 || lists.Load() == 0 || swaps < 10) && time.Since(began) < 30*time.Second {
		v := int(current.Load())%5 + 1
		if err := srv.SetTools(generation(t, v)...); err != nil {
			t.Fatal(err)
		}
		current.Store(int64(v))
		swaps++
		time.Sleep(2 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if calls.Load() == 0 || lists.Load() == 0 || swaps < 10 {
		t.Fatalf("%d calls, %d listings, %d swaps", calls.Load(), lists.Load(), swaps)
	}
	t.Logf("%d calls and %d listings across %d swaps", calls.Load(), lists.Load(), swaps)

	// After the last swap, the answers are the last set's.
	rep := ep.Send(t, mcptest.ToolCall("version", `{}`))
	if text, _ := mcptest.ToolText(t, rep.ExpectResult(t, "1")); text != fmt.Sprintf("%q", fmt.Sprint(current.Load())) {
		t.Errorf("after the swaps: %s, want set %d", text, current.Load())
	}
}

// listAll pages through tools/list; ok is false when a cursor was refused
// (the set changed between pages: -32602).
func listAll(t testing.TB, ep *mcptest.Endpoint) ([]string, bool) {
	var names []string
	cursor := ""
	for page := 0; page < 10; page++ {
		params := ""
		if cursor != "" {
			params = `"cursor":` + mcptest.Quote(cursor)
		}
		rep := ep.Send(t, mcptest.Call("tools/list", params))
		if rep.Msg.Error != nil {
			if rep.Msg.Error.Code != -32602 || cursor == "" {
				t.Errorf("tools/list: %s", rep.Raw)
			}
			return nil, false
		}
		var res struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(rep.Msg.Result, &res); err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if res.NextCursor == "" {
			return names, true
		}
		cursor = res.NextCursor
	}
	t.Errorf("more than 10 pages")
	return nil, false
}

// TestSetToolsRefusals: what New refuses, SetTools refuses, and the set
// served is unchanged.
func TestSetToolsRefusals(t *testing.T) {
	srv, err := wymcp.New(protocol.Implementation{Name: "live", Version: "1.0.0"}, nil, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	ep := mcptest.Serve(t, srv, protocol.Implementation{Name: "live", Version: "1.0.0"})
	dup := generation(t, 1)
	if err := srv.SetTools(append(dup, dup[0])...); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate names: %v", err)
	}
	scoped := tools.Must(tools.New("scoped", "Needs a scope.", func(context.Context, struct{}) (string, error) { return "", nil }, tools.WithScopes("s")))
	if err := srv.SetTools(scoped); err == nil || !strings.Contains(err.Error(), "Options.Auth is nil") {
		t.Errorf("a scoped tool without auth: %v", err)
	}
	rep := ep.Send(t, mcptest.ToolCall("version", `{}`))
	if text, _ := mcptest.ToolText(t, rep.ExpectResult(t, "1")); text != `"1"` {
		t.Errorf("after refused swaps: %s", rep.Raw)
	}
}

// TestSetToolsScopes: the scopes a call needs are those of the set that
// serves it.
func TestSetToolsScopes(t *testing.T) {
	authn := wymcp.AuthenticatorFunc(func(_ context.Context, r *http.Request) (*wymcp.Principal, error) {
		return &wymcp.Principal{Subject: "u", Scopes: strings.Fields(r.Header.Get("X-Scopes"))}, nil
	})
	tool := func(scope string) *tools.Tool {
		return tools.Must(tools.New("t", "Scoped.", func(context.Context, struct{}) (string, error) { return "ok", nil }, tools.WithScopes(scope)))
	}
	info := protocol.Implementation{Name: "live", Version: "1.0.0"}
	srv, err := wymcp.New(info, &wymcp.Options{Auth: &wymcp.AuthOptions{Authenticator: authn}}, tool("a"))
	if err != nil {
		t.Fatal(err)
	}
	ep := mcptest.Serve(t, srv, info)
	// call returns the JSON-RPC error code of the answer, 0 for a result.
	call := func(scopes string) int {
		rep := ep.Send(t, mcptest.ToolCall("t", `{}`).With("X-Scopes", scopes))
		if rep.Status != 200 {
			t.Fatalf("status %d: %s", rep.Status, rep.Raw)
		}
		if rep.Msg.Error != nil {
			return rep.Msg.Error.Code
		}
		return 0
	}
	// A caller without the tool's scope is answered as for an unknown
	// tool (-32602); one with it, by the tool.
	if a, b := call("a"), call("b"); a != 0 || b != -32602 {
		t.Fatalf("before: %d %d", a, b)
	}
	if err := srv.SetTools(tool("b")); err != nil {
		t.Fatal(err)
	}
	if a, b := call("a"), call("b"); a != -32602 || b != 0 {
		t.Fatalf("after: %d %d", a, b)
	}
}

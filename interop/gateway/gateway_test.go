package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// threeUpstreams starts server-everything, the go-sdk server and the
// mcp-go server, and returns their endpoints.
func threeUpstreams(t *testing.T, mgoArgs ...string) (ev, sdk, mgo string, sdkProc, mgoProc *proc) {
	t.Helper()
	_, ev = startEverything(t)
	sdkProc, sdk = startGo(t, "sdkserver", "127.0.0.1:0")
	mgoProc, mgo = startGo(t, "mgoserver", "127.0.0.1:0", mgoArgs...)
	return ev, sdk, mgo, sdkProc, mgoProc
}

// unionYAML is the gateway's file for the three upstreams. Of
// server-everything's tools it serves three: the others include get-env,
// which answers with the server's whole environment.
func unionYAML(ev, sdk, mgo, extra string) string {
	return fmt.Sprintf(`upstreams:
  - name: everything
    url: %s
    prefix: ev_
    include: [echo, get-sum, trigger-long-running-operation]
  - name: sdk
    url: %s
    prefix: sdk_
%s  - name: mgo
    url: %s
    prefix: mgo_
%s`, ev, sdk, extra, mgo, extra)
}

// progressLog collects the progress notifications a go-sdk client gets.
type progressLog struct {
	mu   sync.Mutex
	byTK map[string][]*mcp.ProgressNotificationParams
}

func (l *progressLog) add(p *mcp.ProgressNotificationParams) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byTK == nil {
		l.byTK = map[string][]*mcp.ProgressNotificationParams{}
	}
	k := fmt.Sprint(p.ProgressToken)
	l.byTK[k] = append(l.byTK[k], p)
}

func (l *progressLog) get(token string) []*mcp.ProgressNotificationParams {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.byTK[token])
}

// sdkClient connects the official Go SDK's client (v1.8.0, its default
// negotiation: server/discover first) to the gateway.
func sdkClient(t *testing.T, ctx context.Context, url string, progress *progressLog) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-client", Version: "1.8.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress.add(req.Params)
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("go-sdk client: connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func progressOf(ps []*mcp.ProgressNotificationParams) []float64 {
	var out []float64
	for _, p := range ps {
		out = append(out, p.Progress)
	}
	return out
}

func sdkText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content %+v", res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T", res.Content[0])
	}
	return tc.Text
}

// TestGatewayUnion: through one gateway, the official Go SDK's client
// lists the tools of the three upstreams under their prefixes, calls each
// upstream's echo, gets the progress of a long-running operation of
// server-everything and of the Go upstreams relayed, and each upstream's
// errors come back as docs/design.md §10a says.
func TestGatewayUnion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ev, sdk, mgo, _, _ := threeUpstreams(t)
	gw, url := startGateway(t, t.TempDir(), unionYAML(ev, sdk, mgo, ""))

	// The revision the gateway negotiated with each: server-everything
	// has no server/discover (it answers 400 "Server not initialized"),
	// so initialize and a session; go-sdk's and mcp-go's servers speak
	// 2026-07-28.
	for _, want := range []string{
		`msg="upstream connected" upstream=everything url=` + ev + ` version=2025-11-25 tools=3 prefix=ev_`,
		`msg="upstream connected" upstream=sdk url=` + sdk + ` version=2026-07-28 tools=5 prefix=sdk_`,
		`msg="upstream connected" upstream=mgo url=` + mgo + ` version=2026-07-28 tools=5 prefix=mgo_`,
	} {
		gw.waitFor(t, want)
	}

	var progress progressLog
	cs := sdkClient(t, ctx, url, &progress)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("the go-sdk client negotiated %q with the gateway", v)
	}

	t.Run("list", func(t *testing.T) {
		list, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		byName := map[string]*mcp.Tool{}
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
			byName[tool.Name] = tool
		}
		sort.Strings(names)
		want := []string{
			"ev_echo", "ev_get-sum", "ev_trigger-long-running-operation",
			"mgo_authz", "mgo_echo", "mgo_fail", "mgo_session", "mgo_steps",
			"sdk_echo", "sdk_fail", "sdk_seen", "sdk_steps", "sdk_whoami",
		}
		if !slices.Equal(names, want) {
			t.Fatalf("tools:\n got %q\nwant %q", names, want)
		}
		// The upstreams' definitions, kept.
		echo := byName["ev_echo"]
		schema, _ := json.Marshal(echo.InputSchema)
		if echo.Title != "Echo Tool" || echo.Description != "Echoes back the input string" ||
			!strings.Contains(string(schema), `"message":{"description":"Message to echo","type":"string"}`) ||
			echo.Annotations == nil || !echo.Annotations.ReadOnlyHint {
			t.Errorf("ev_echo: %+v, schema %s", echo, schema)
		}
		if byName["sdk_echo"].Title != "Echo" || byName["mgo_echo"].Description != "Echoes its text." {
			t.Errorf("sdk_echo %+v, mgo_echo %+v", byName["sdk_echo"], byName["mgo_echo"])
		}
	})

	t.Run("echo", func(t *testing.T) {
		for _, c := range []struct{ tool, args, want string }{
			{"ev_echo", `{"message":"hello, everything"}`, "Echo: hello, everything"},
			{"sdk_echo", `{"text":"hello, go-sdk"}`, "hello, go-sdk"},
			{"mgo_echo", `{"text":"hello, mcp-go"}`, "hello, mcp-go"},
			{"ev_get-sum", `{"a":2,"b":40}`, "The sum of 2 and 40 is 42."},
		} {
			var args map[string]any
			_ = json.Unmarshal([]byte(c.args), &args)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: args})
			if err != nil {
				t.Fatalf("%s: %v", c.tool, err)
			}
			if got := sdkText(t, res); got != c.want || res.IsError {
				t.Errorf("%s: %q (isError %v), want %q", c.tool, got, res.IsError, c.want)
			}
		}
	})

	t.Run("progress", func(t *testing.T) {
		for _, c := range []struct {
			tool string
			args map[string]any
			want string
			// all: every notification the upstream sends arrives.
			// mcp-go v1.2.1 drops one of a call's three notifications
			// about half the time on its own (100 calls straight to
			// cmd/mgoserver: 50 got 2 and 3, 3 got 1 and 3, 2 got 1
			// and 2): of its, those relayed must be some of the three, in
			// order.
			all, msgs bool
		}{
			{"ev_trigger-long-running-operation", map[string]any{"duration": 0.6, "steps": 3},
				"Long running operation completed. Duration: 0.6 seconds, Steps: 3.", true, false},
			{"sdk_steps", map[string]any{}, "done", true, true},
			{"mgo_steps", map[string]any{}, "done", false, true},
		} {
			params := &mcp.CallToolParams{Name: c.tool, Arguments: c.args}
			token := "progress-" + c.tool
			params.SetProgressToken(token)
			res, err := cs.CallTool(ctx, params)
			if err != nil {
				t.Fatalf("%s: %v", c.tool, err)
			}
			if got := sdkText(t, res); got != c.want {
				t.Errorf("%s: %q, want %q", c.tool, got, c.want)
			}
			// The notifications come before the result on the call's
			// stream; the client's handler may still be running (for as
			// long as a loaded machine takes). Where not all need come,
			// those that came within half a second of the first do.
			var got []*mcp.ProgressNotificationParams
			var first time.Time
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if got = progress.get(token); len(got) > 0 && first.IsZero() {
					first = time.Now()
				}
				if len(got) == 3 || (!c.all && len(got) > 0 && time.Since(first) > 500*time.Millisecond) {
					break
				}
			}
			if len(got) == 0 || (c.all && len(got) != 3) {
				t.Errorf("%s: %d progress notifications for %q, want 3", c.tool, len(got), token)
				continue
			}
			for i, p := range got {
				if p.Total != 3 || p.Progress < 1 || p.Progress > 3 || (c.all && p.Progress != float64(i+1)) ||
					(i > 0 && p.Progress <= got[i-1].Progress) {
					t.Errorf("%s: notification %d: progress %v of %v (all: %v)", c.tool, i, p.Progress, p.Total, progressOf(got))
				}
				if want := fmt.Sprintf("step %v", p.Progress); c.msgs && p.Message != want {
					t.Errorf("%s: notification %d: message %q, want %q", c.tool, i, p.Message, want)
				}
			}
			t.Logf("%s: progress %v of 3 relayed", c.tool, progressOf(got))
		}
	})

	t.Run("errors", func(t *testing.T) {
		// A JSON-RPC error other than -32602 and -32021: a tool error
		// naming the upstream, the code and the message.
		for _, c := range []struct{ tool, args, want string }{
			{"sdk_fail", `{"code":-32000,"message":"the origin is down for maintenance"}`,
				"Upstream sdk failed the call with JSON-RPC error -32000: the origin is down for maintenance"},
			{"sdk_fail", `{"code":-32603,"message":"boom"}`,
				"Upstream sdk failed the call with JSON-RPC error -32603: boom"},
			// mcp-go answers a handler's error with -32603 and its text.
			{"mgo_fail", `{"message":"mcp-go says no"}`,
				"Upstream mgo failed the call with JSON-RPC error -32603: mcp-go says no"},
		} {
			text, isError := callText(t, ctx, url, c.tool, c.args, "")
			if text != c.want || !isError {
				t.Errorf("%s %s: %q (isError %v), want the tool error %q", c.tool, c.args, text, isError, c.want)
			}
		}

		// -32602: the upstream's error as it sent it: code, message, data.
		a := call(t, ctx, url, "sdk_fail", `{"code":-32602,"message":"widget must be blue"}`, "")
		e := a.responses()[0].Error
		if e == nil || e.Code != -32602 || e.Message != "widget must be blue" || string(e.Data) != `{"origin":"go-sdk"}` {
			t.Errorf("sdk_fail -32602: %s", a.Raw)
		}

		// server-everything answers bad arguments with an isError result
		// of its own (the gateway does not apply upstream schemas): kept
		// as the upstream set it.
		text, isError := callText(t, ctx, url, "ev_get-sum", `{"a":"two","b":40}`, "")
		if want := "MCP error -32602: Input validation error: Invalid arguments for tool get-sum: Invalid input: expected number, received string at a"; text != want || !isError {
			t.Errorf("ev_get-sum with a string: %q (isError %v), want %q", text, isError, want)
		}
	})
}

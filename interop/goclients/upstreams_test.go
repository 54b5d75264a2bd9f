package goclients

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wymcp/wymcp"
	gw "github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/upstream"
)

// The gateway (package upstream) in front of MCP servers built with the
// official Go SDK, driven by the official Go SDK's client of both eras.

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

// goSDKOrigin serves a go-sdk v1.8.0 server with echo, steps (progress)
// and ask (an elicitation during the call), stateful (2025-11-25, with
// sessions) or stateless. forget drops every session the server holds, as
// a restart of the upstream would.
func goSDKOrigin(t *testing.T, stateless bool) (url string, forget func()) {
	t.Helper()
	url, forget, _, _ = goSDKOriginSlow(t, stateless)
	return url, forget
}

// goSDKOriginSlow is goSDKOrigin, with a tool "slow" that sends on started
// when it runs, waits for its call to be cancelled and then sends on
// cancelled.
func goSDKOriginSlow(t *testing.T, stateless bool) (url string, forget func(), started, cancelled <-chan struct{}) {
	t.Helper()
	entered, gone := make(chan struct{}, 16), make(chan struct{}, 16)
	newServer := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "go-sdk-origin", Version: "1.8.0"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Title: "Echo", Description: "Echoes its text."},
			func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
			})
		mcp.AddTool(s, &mcp.Tool{Name: "steps", Description: "Reports three steps of progress."},
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				if tok := req.Params.GetProgressToken(); tok != nil {
					for i := 1; i <= 3; i++ {
						_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: "step"})
					}
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
			})
		mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the user's name."},
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
					Message: "Your name?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
						"name": map[string]any{"type": "string"}}},
				})
				if err != nil {
					return nil, nil, err
				}
				name, _ := res.Content["name"].(string)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action + ":" + name}}}, nil, nil
			})
		mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Waits until cancelled."},
			func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				entered <- struct{}{}
				select {
				case <-ctx.Done():
					gone <- struct{}{}
				case <-time.After(20 * time.Second):
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "finished"}}}, nil, nil
			})
		return s
	}
	var (
		mu sync.Mutex
		h  http.Handler
	)
	reset := func() {
		s := newServer()
		mu.Lock()
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
		mu.Unlock()
	}
	reset()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cur := h
		mu.Unlock()
		cur.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL, reset, entered, gone
}

// gateway connects to origin and serves its tools, prefixed, in both eras.
func gateway(t *testing.T, origin string, versions ...string) (*upstream.Upstream, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := upstream.Connect(ctx, upstream.Options{Name: "origin", URL: origin, Prefix: "sdk_", Versions: versions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	srv, err := wymcp.New(protocol.Implementation{Name: "gateway", Version: "1.0.0"},
		&wymcp.Options{Versions: []string{"2026-07-28", "2025-11-25"}}, u.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Shutdown(context.Background())
	})
	return u, hs.URL
}

// connect opens a go-sdk client session to url: pinned to version, or
// the client's default (which tries server/discover first) when "".
func connect(t *testing.T, ctx context.Context, url, version string, progress *atomic.Int32) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-client", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
	})
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, opts)
	if err != nil {
		t.Fatalf("connect (%s): %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// text calls a tool and returns its one text block.
func text(t *testing.T, ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams) string {
	t.Helper()
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("content %+v", res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T", res.Content[0])
	}
	return tc.Text
}

// TestGatewayGoSDKSessionful: a 2025-11-25 upstream with sessions, behind
// the gateway, called by clients of both eras.
func TestGatewayGoSDKSessionful(t *testing.T) {
	origin, forget := goSDKOrigin(t, false)
	u, url := gateway(t, origin)
	if v := u.Version(); v != "2025-11-25" {
		t.Fatalf("negotiated %q with a stateful go-sdk server", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, era := range []string{"", "2025-11-25"} {
		t.Run("client="+era, func(t *testing.T) {
			var progress atomic.Int32
			cs := connect(t, ctx, url, era, &progress)
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			// go-sdk lists its tools sorted by name, and the gateway keeps
			// the upstream's order.
			if strings.Join(names, ",") != "sdk_ask,sdk_echo,sdk_slow,sdk_steps" {
				t.Fatalf("tools %q", names)
			}
			if list.Tools[1].Title != "Echo" || !strings.Contains(string(mustJSON(t, list.Tools[1].InputSchema)), `"the text to echo"`) {
				t.Errorf("echo's definition: %+v", list.Tools[1])
			}
			if got := text(t, ctx, cs, &mcp.CallToolParams{Name: "sdk_echo", Arguments: map[string]any{"text": "hi"}}); got != "hi" {
				t.Errorf("echo: %q", got)
			}
			params := &mcp.CallToolParams{Name: "sdk_steps", Arguments: map[string]any{}}
			params.SetProgressToken("tok")
			if got := text(t, ctx, cs, params); got != "done" {
				t.Errorf("steps: %q", got)
			}
			for deadline := time.Now().Add(30 * time.Second); progress.Load() < 3 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if n := progress.Load(); n != 3 {
				t.Errorf("%d progress notifications relayed, want 3", n)
			}
			// The upstream's elicitation during the call: relayed to a
			// 2025-era client on the call's stream, declined for a
			// 2026-07-28 one, whose requests for input are results.
			want := "decline:"
			if era == "2025-11-25" {
				want = "accept:Ada"
			}
			if got := text(t, ctx, cs, &mcp.CallToolParams{Name: "sdk_ask", Arguments: map[string]any{}}); got != want {
				t.Errorf("ask: %q, want %q", got, want)
			}
		})
	}

	// The upstream forgets its sessions (a restart): the next call finds
	// its session gone (404), and the gateway makes a new one.
	forget()
	var progress atomic.Int32
	cs := connect(t, ctx, url, "", &progress)
	if got := text(t, ctx, cs, &mcp.CallToolParams{Name: "sdk_echo", Arguments: map[string]any{"text": "again"}}); got != "again" {
		t.Errorf("echo after the upstream lost its session: %q", got)
	}
}

// TestGatewayGoSDKStateless: the go-sdk server in stateless mode speaks
// 2026-07-28, and the gateway reaches it through server/discover.
func TestGatewayGoSDKStateless(t *testing.T) {
	origin, _ := goSDKOrigin(t, true)
	u, url := gateway(t, origin)
	if v := u.Version(); v != "2026-07-28" {
		t.Fatalf("negotiated %q with a stateless go-sdk server", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var progress atomic.Int32
	cs := connect(t, ctx, url, "", &progress)
	if got := text(t, ctx, cs, &mcp.CallToolParams{Name: "sdk_echo", Arguments: map[string]any{"text": "hi"}}); got != "hi" {
		t.Errorf("echo: %q", got)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGatewayMultiRoundTrip: a 2026-07-28 upstream (wymcp) asks for input
// with input_required; through the gateway, a 2026-07-28 client gets the
// input_required result and retries, and a 2025-era client is asked on
// its call's stream while the gateway retries upstream for it.
func TestGatewayMultiRoundTrip(t *testing.T) {
	u, url := gateway(t, serve(t))
	if v := u.Version(); v != "2026-07-28" {
		t.Fatalf("negotiated %q with wymcp", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, era := range []string{"", "2025-11-25"} {
		var progress atomic.Int32
		cs := connect(t, ctx, url, era, &progress)
		if got := text(t, ctx, cs, &mcp.CallToolParams{Name: "sdk_ask_name", Arguments: map[string]any{}}); got != `"Hello, Ada!"` {
			t.Errorf("client %q: ask_name: %q", era, got)
		}
	}
}

// TestGatewayMCPGo: an mcp-go v1.2.1 server behind the gateway.
func TestGatewayMCPGo(t *testing.T) {
	s := mcpgoserver.NewMCPServer("mcp-go-origin", "1.2.1", mcpgoserver.WithToolCapabilities(false))
	s.AddTool(mcpgo.NewTool("echo", mcpgo.WithDescription("Echoes its text."), mcpgo.WithString("text", mcpgo.Required())),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText(req.GetString("text", "")), nil
		})
	hs := httptest.NewServer(mcpgoserver.NewStreamableHTTPServer(s))
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Its default is 2026-07-28 (server/discover); pinned to 2025-11-25,
	// the gateway keeps an mcp-go session.
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		u, url := gateway(t, hs.URL, v)
		if u.Version() != v {
			t.Fatalf("negotiated %s with mcp-go, want %s", u.Version(), v)
		}
		var progress atomic.Int32
		cs := connect(t, ctx, url, "", &progress)
		if got := text(t, ctx, cs, &mcp.CallToolParams{Name: "sdk_echo", Arguments: map[string]any{"text": "hi"}}); got != "hi" {
			t.Errorf("%s: echo: %q", v, got)
		}
	}
}

// TestGatewayCancelsUpstream: a client that gives up a call through the
// gateway cancels it at a 2025-era upstream, which is told with
// notifications/cancelled (its transport does not take a closed stream for
// a cancellation).
func TestGatewayCancelsUpstream(t *testing.T) {
	origin, _, started, cancelled := goSDKOriginSlow(t, false)
	_, url := gateway(t, origin)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var progress atomic.Int32
	cs := connect(t, ctx, url, "", &progress)
	// The client gives up once the call runs at the upstream (not after a
	// fixed time, which a loaded machine may spend before the call gets
	// there: then there is nothing to cancel).
	callCtx, stop := context.WithCancel(ctx)
	defer stop()
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "sdk_slow", Arguments: map[string]any{}})
		called <- err
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the call never reached the upstream's tool")
	}
	stop()
	if err := <-called; err == nil {
		t.Fatal("the call outlived its context")
	}
	select {
	case <-cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the upstream's tool was not cancelled")
	}
}

// TestGatewayGoSDKListChanged: a gateway in front of a go-sdk server
// (2025-11-25, with sessions) follows the server's GET stream: when the
// server adds a tool, it tells its session's stream, the gateway reads
// its list at once (its refresh interval is an hour) and a client
// listening on the gateway hears of it.
func TestGatewayGoSDKListChanged(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "go-sdk-origin", Version: "1.8.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var lists atomic.Int32
	listed := make(chan int32, 16)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
		if bytes.Contains(body, []byte(`"method":"tools/list"`)) {
			listed <- lists.Add(1)
		}
	}))
	t.Cleanup(hs.Close)
	g, err := gw.New(t.Context(), gw.Options{
		Info:      protocol.Implementation{Name: "gateway", Version: "1.0.0"},
		Upstreams: []upstream.Options{{Name: "sdk", URL: hs.URL, Prefix: "sdk_", Refresh: time.Hour, Versions: []string{"2025-11-25"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	gs := httptest.NewServer(g)
	t.Cleanup(func() {
		gs.Close()
		_ = g.Shutdown(context.Background())
	})
	ep := &mcptest.Endpoint{URL: gs.URL, HTTP: http.DefaultClient, Info: protocol.Implementation{Name: "gateway", Version: "1.0.0"}}
	stream := ep.Listen(t, mcptest.Raw("subscriptions/listen", "", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":`+mcptest.Meta+`}}`))
	if stream.Resp.StatusCode != http.StatusOK {
		t.Fatalf("listen: %d", stream.Resp.StatusCode)
	}
	if got := stream.NextData(t); !strings.Contains(got, `"notifications/subscriptions/acknowledged"`) {
		t.Fatalf("first message %s, want the ack", got)
	}
	// The gateway's own reads (at its connection, at its stream's
	// opening) are answered before the change: only the stream tells it.
	for n := int32(0); n < 2; {
		n = <-listed
	}
	mcp.AddTool(s, &mcp.Tool{Name: "late", Description: "Added late."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
		})
	want := `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`
	if got := stream.NextData(t); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	res := ep.Send(t, mcptest.Call("tools/list", "")).ExpectResult(t, "1")
	if b, _ := json.Marshal(res["tools"]); !strings.Contains(string(b), `"name":"sdk_late"`) {
		t.Errorf("the gateway lists %s", b)
	}
}

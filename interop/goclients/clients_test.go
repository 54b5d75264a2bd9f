package goclients

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// serve starts a server of both eras with an echo tool, a tool that
// reports progress, and one that asks the user's name, on loopback.
func serve(t *testing.T) string {
	t.Helper()
	echo := tools.Must(tools.New("echo", "Echoes its text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	}))
	steps := tools.Must(tools.New("steps", "Reports three steps of progress.", func(ctx context.Context, _ struct{}) (string, error) {
		total := 3.0
		for i := 1; i <= 3; i++ {
			tools.ReportProgress(ctx, float64(i), &total, "step")
		}
		return "done", nil
	}))
	form := protocol.ElicitRequest{Message: "Your name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
	askName := tools.Must(tools.New("ask_name", "Asks the user's name and greets them.", func(ctx context.Context, _ struct{}) (string, error) {
		var answer protocol.ElicitResult
		if err := tools.Ask(ctx, tools.Elicit("name", form, &answer)); err != nil {
			return "", err
		}
		var who struct {
			Name string `json:"name"`
		}
		if err := answer.DecodeContent(&who); err != nil {
			return "", err
		}
		return "Hello, " + who.Name + "!", nil
	}))
	srv, err := wymcp.New(protocol.Implementation{Name: "both-eras", Version: "1.0.0"},
		&wymcp.Options{Versions: []string{"2026-07-28", "2025-11-25", "2025-06-18"}}, echo, steps, askName)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Shutdown(context.Background())
	})
	return hs.URL
}

func TestGoSDKPinned20251125(t *testing.T) {
	url := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var progress atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-client", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("negotiated %q", v)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "echo,steps,ask_name" {
		t.Errorf("tools %q", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != `"hi"` {
		t.Errorf("echo: %+v %v", res, err)
	}
	params := &mcp.CallToolParams{Name: "steps", Arguments: map[string]any{}}
	params.SetProgressToken("tok")
	if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
		t.Errorf("steps: %+v %v", res, err)
	}
	// The client hands notifications to its handler apart from the call's
	// result: wait for them (as long as a loaded machine may take).
	for deadline := time.Now().Add(30 * time.Second); progress.Load() < 3 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := progress.Load(); n != 3 {
		t.Errorf("%d progress notifications, want 3", n)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_name", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Hello, Ada!") {
		t.Errorf("ask_name: %+v %v", res, err)
	}
}

type elicitAda struct{}

func (elicitAda) Elicit(context.Context, mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: mcpgo.ElicitationResponseActionAccept, Content: map[string]any{"name": "Ada"}}}, nil
}

func TestMCPGoPinned20251125(t *testing.T) {
	url := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	c := mcpgoclient.NewClient(tr, mcpgoclient.WithProtocolVersion("2025-11-25"), mcpgoclient.WithElicitationHandler(elicitAda{}))
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var progress atomic.Int32
	c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			progress.Add(1)
		}
	})
	init := mcpgo.InitializeRequest{}
	init.Params.ClientInfo = mcpgo.Implementation{Name: "mcp-go-client", Version: "1.0.0"}
	init.Params.Capabilities.Elicitation = &mcpgo.ElicitationCapability{}
	got, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if got.ProtocolVersion != "2025-11-25" {
		t.Errorf("negotiated %q", got.ProtocolVersion)
	}
	//lint:ignore SA1019 ping is deprecated for 2026-07-28 only; this client is pinned to 2025-11-25, where it is sent.
	if err := c.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
	list, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil || len(list.Tools) != 3 {
		t.Fatalf("tools/list: %+v %v", list, err)
	}
	call := mcpgo.CallToolRequest{}
	call.Params.Name = "echo"
	call.Params.Arguments = map[string]any{"text": "hi"}
	res, err := c.CallTool(ctx, call)
	if err != nil || res.IsError || mcpgo.GetTextFromContent(res.Content[0]) != `"hi"` {
		t.Errorf("echo: %+v %v", res, err)
	}
	steps := mcpgo.CallToolRequest{}
	steps.Params.Name = "steps"
	steps.Params.Meta = &mcpgo.Meta{ProgressToken: "tok"}
	if res, err := c.CallTool(ctx, steps); err != nil || res.IsError {
		t.Errorf("steps: %+v %v", res, err)
	}
	if n := progress.Load(); n != 3 {
		t.Errorf("%d progress notifications, want 3", n)
	}
	ask := mcpgo.CallToolRequest{}
	ask.Params.Name = "ask_name"
	res, err = c.CallTool(ctx, ask)
	if err != nil || res.IsError || !strings.Contains(mcpgo.GetTextFromContent(res.Content[0]), "Hello, Ada!") {
		t.Errorf("ask_name: %+v %v", res, err)
	}
}

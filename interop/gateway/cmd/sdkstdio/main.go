// Command sdkstdio is a stdio upstream of interop/gateway's end-to-end test
// (stdio_test.go): an MCP server built with the official Go SDK (go-sdk
// v1.8.0) on its stdio transport, which the gateway runs as a child.
//
//	sdkstdio [-tag TAG]
//
// TAG is ignored: it marks the process, so that the test can find it in
// /proc and kill it. Tools: echo {text, sleepMs}; steps (three progress
// notifications); fail {code, message} (a JSON-RPC error with that code and
// message); pid (the process's id); hold (runs until its call is
// cancelled or the process ends); holding (how many hold calls are
// running: a test knows a call is in the child, without timing).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text    string `json:"text" jsonschema:"the text to echo"`
	SleepMs int    `json:"sleepMs,omitempty" jsonschema:"how long to wait first, in milliseconds"`
}

type failArgs struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func main() {
	_ = flag.String("tag", "", "marks the process; ignored")
	flag.Parse()
	s := mcp.NewServer(&mcp.Implementation{Name: "go-sdk-stdio", Version: "1.8.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			if in.SleepMs > 0 {
				select {
				case <-time.After(time.Duration(in.SleepMs) * time.Millisecond):
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
			}
			return text(in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "steps", Description: "Reports three steps of progress."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= 3; i++ {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i),
					}); err != nil {
						return nil, nil, err
					}
				}
			}
			return text("done"), nil, nil
		})
	s.AddTool(&mcp.Tool{
		Name:        "fail",
		Description: "Fails with the JSON-RPC error asked for.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"code":{"type":"integer"},"message":{"type":"string"}},"required":["code","message"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in failArgs
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return nil, &jsonrpc.Error{Code: in.Code, Message: in.Message}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Says the process's id."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(strconv.Itoa(os.Getpid())), nil, nil
		})
	var holding atomic.Int64
	mcp.AddTool(s, &mcp.Tool{Name: "hold", Description: "Runs until its call is cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			holding.Add(1)
			defer holding.Add(-1)
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "holding", Description: "Says how many hold calls are running."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(strconv.FormatInt(holding.Load(), 10)), nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "sdkstdio:", err)
		os.Exit(1)
	}
}

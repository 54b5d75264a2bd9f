package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text    string `json:"text" jsonschema:"the text to echo"`
	SleepMs int    `json:"sleepMs,omitempty" jsonschema:"milliseconds to wait before answering"`
}

type failArgs struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// addCommon adds the tools of both transports: echo, steps and fail.
func addCommon(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Title: "Echo", Description: "Echoes its text."},
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
		return nil, &jsonrpc.Error{Code: in.Code, Message: in.Message, Data: json.RawMessage(`{"origin":"go-sdk"}`)}
	})
}

// seen is the SHA-256 of every bearer token presented over HTTP, in order
// of first use.
var (
	seenMu sync.Mutex
	seen   []string
)

// see records the bearer token of an Authorization header.
func see(authorization string) {
	sum := tokenHash(authorization)
	if sum == "" {
		return
	}
	seenMu.Lock()
	defer seenMu.Unlock()
	if !slices.Contains(seen, sum) {
		seen = append(seen, sum)
	}
}

func tokenHash(authorization string) string {
	tok, ok := strings.CutPrefix(authorization, "Bearer ")
	if !ok || tok == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// addHTTP adds the tools that read the HTTP request's bearer token:
// whoami and seen.
func addHTTP(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Says who the bearer token names."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			out := map[string]any{}
			if req.Extra != nil && req.Extra.TokenInfo != nil {
				out = req.Extra.TokenInfo.Extra
				out["tokenSHA256"] = tokenHash(req.Extra.Header.Get("Authorization"))
			}
			b, _ := json.Marshal(out)
			return text(string(b)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "seen", Description: "Lists the SHA-256 of every bearer token presented."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			seenMu.Lock()
			b, _ := json.Marshal(seen)
			seenMu.Unlock()
			return text(string(b)), nil, nil
		})
}

// addStdio adds the tools of a child process: pid, so that a test can
// kill it; hold and holding, so that a test knows a call is running
// in it without timing; grow, which adds the tool grown (the SDK tells
// its listeners), and listening, which says how many subscriptions/listen
// requests it has received and how many tools/list since the last ("1 1"
// once the gateway has listened and read the list at the
// acknowledgement).
func addStdio(s *mcp.Server) {
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
	var (
		mu             sync.Mutex
		listens, lists int // lists: tools/list requests since the last listen
	)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			mu.Lock()
			switch method {
			case "subscriptions/listen":
				listens, lists = listens+1, 0
			case "tools/list":
				lists++
			}
			mu.Unlock()
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "listening", Description: "Says how many subscriptions/listen requests it has received, and tools/list requests since the last."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			defer mu.Unlock()
			return text(fmt.Sprintf("%d %d", listens, lists)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Adds the tool grown."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "grown", Description: "Was added by grow."},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return text("grown"), nil, nil
				})
			return text("grew"), nil, nil
		})
}

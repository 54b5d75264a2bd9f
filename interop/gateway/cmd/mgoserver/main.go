// Command mgoserver is an upstream of interop/gateway's end-to-end test: an
// MCP server built with mcp-go v1.2.1 over Streamable HTTP. The test runs
// it as a child process so that it can kill it (SIGKILL) and start it
// again on the same address.
//
//	mgoserver -addr 127.0.0.1:0 [-stateful]
//
// Once listening it prints "listening on http://<addr>/mcp" to stdout.
// -stateful makes it validate session ids (mcp-go's
// InsecureStatefulSessionIdManager), so that a restarted server answers
// 404 to the sessions of the one it replaced; by default mcp-go issues
// session ids without checking them.
//
// Tools: echo {text, sleepMs}; steps (three progress notifications); fail
// {message} (the handler's error, which mcp-go answers as JSON-RPC error
// -32603 with that message); authz (the Authorization header the request
// carried, "" for none); session (the request's session id, "" for none).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type authzKey struct{}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	stateful := flag.Bool("stateful", false, "validate session ids")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mgoserver:", err)
		os.Exit(1)
	}
	url := "http://" + ln.Addr().String() + "/mcp"

	s := server.NewMCPServer("mcp-go-origin", "1.2.1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echoes its text."),
		mcp.WithString("text", mcp.Required(), mcp.Description("the text to echo")),
		mcp.WithNumber("sleepMs", mcp.Description("milliseconds to wait before answering"))),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if ms := req.GetInt("sleepMs", 0); ms > 0 {
				select {
				case <-time.After(time.Duration(ms) * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("steps", mcp.WithDescription("Reports three steps of progress.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
				for i := 1; i <= 3; i++ {
					err := s.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
						"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": 3,
						"message": fmt.Sprintf("step %d", i),
					})
					if err != nil {
						return nil, err
					}
				}
			}
			return mcp.NewToolResultText("done"), nil
		})
	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("Fails with the message given."),
		mcp.WithString("message", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errors.New(req.GetString("message", ""))
		})
	s.AddTool(mcp.NewTool("authz", mcp.WithDescription("Says which Authorization header the request carried.")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			v, _ := ctx.Value(authzKey{}).(string)
			return mcp.NewToolResultText(v), nil
		})

	s.AddTool(mcp.NewTool("session", mcp.WithDescription("Says the Mcp-Session-Id of the request.")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			id := ""
			if cs := server.ClientSessionFromContext(ctx); cs != nil {
				id = cs.SessionID()
			}
			return mcp.NewToolResultText(id), nil
		})

	opts := []server.StreamableHTTPOption{
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			return context.WithValue(ctx, authzKey{}, r.Header.Get("Authorization"))
		}),
	}
	if *stateful {
		opts = append(opts, server.WithStateful(true))
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(s, opts...))
	fmt.Println("listening on " + url)
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, "mgoserver:", err)
		os.Exit(1)
	}
}

// Command gosdk-forward is the forwarding server a Go team would write by
// hand today with the official SDK alone (github.com/modelcontextprotocol/
// go-sdk v1.8.0): a client session to $UPSTREAM_URL over the SDK's
// streamable client transport, its tools/list registered on an SDK server
// (Server.AddTool with each listed tool as it came), and each call
// forwarded with ClientSession.CallTool. The client negotiates as the SDK
// does by default (server/discover first, 2026-07-28 when the upstream
// offers it); the server is the same stateless, JSON-answering
// StreamableHTTPHandler as servers/gosdk. The client's net/http transport
// keeps up to 64 idle connections to the upstream (the default keeps 2),
// the same bound as the gateway's.
package main

import (
	"context"
	"log"
	"net/http"
	_ "net/http/pprof" // served only on PPROF_ADDR
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wymcp/wymcp/bench/serve"
)

func main() {
	url := os.Getenv("UPSTREAM_URL")
	if url == "" {
		log.Fatal("$UPSTREAM_URL is required")
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.MaxIdleConns, t.MaxIdleConnsPerHost, t.MaxConnsPerHost = 64, 64, 64
	client := mcp.NewClient(&mcp.Implementation{Name: "gosdk-forward", Version: "1.0.0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             url,
		HTTPClient:           &http.Client{Transport: t},
		DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "echo-gosdk-forward", Version: "1.0.0"}, nil)
	n := 0
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			log.Fatal(err)
		}
		name := tool.Name
		server.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: req.Params.Arguments})
		})
		n++
	}
	cancel()
	log.Printf("upstream %s speaks %s; %d tools", url, cs.InitializeResult().ProtocolVersion, n)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	if addr := os.Getenv("PPROF_ADDR"); addr != "" {
		go func() { log.Println(http.ListenAndServe(addr, http.DefaultServeMux)) }()
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	serve.ListenAndServe(mux, "38191")
}

package gateway_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// Two upstream MCP servers and a local tool, composed into two curated
// views, each an MCP endpoint of its own.
func Example() {
	// The upstreams: any MCP servers over Streamable HTTP; here, wymcp's.
	weather, stop := mcptest.ServeExample(says("forecast", "sunny"))
	defer stop()
	tickets, stop := mcptest.ServeExample(says("open", "#42 opened"), says("close", "#42 closed"))
	defer stop()

	g, err := gateway.New(context.Background(), gateway.Options{
		Info:  protocol.Implementation{Name: "gateway", Version: "1.0.0"},
		Tools: []*tools.Tool{says("time", "noon")},
		Upstreams: []upstream.Options{
			{Name: "weather", URL: weather},
			{Name: "tickets", URL: tickets, Prefix: "tickets_"},
		},
		Views: []gateway.View{
			{Path: "/mcp/ops", Tools: []string{"time", "tickets_*"}},
			{Path: "/mcp/public", Tools: []string{"forecast"}, Name: "weather-desk"},
		},
	})
	if err != nil {
		panic(err)
	}
	defer g.Shutdown(context.Background())
	hs := httptest.NewServer(g) // or mount g.View(path) on your own mux
	defer hs.Close()

	for _, view := range []string{"/mcp/ops", "/mcp/public"} {
		names, _ := mcptest.ToolNames(hs.URL + view)
		fmt.Println(view, names)
	}
	res, _ := mcptest.CallResult(hs.URL+"/mcp/ops", "tickets_open", `{}`)
	fmt.Println(res)
	res, _ = mcptest.CallResult(hs.URL+"/mcp/public", "tickets_open", `{}`)
	fmt.Println(res)
	// Output:
	// /mcp/ops [time tickets_open tickets_close]
	// /mcp/public [forecast]
	// {"content":[{"type":"text","text":"\"#42 opened\""}]}
	// 200 {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: tickets_open"}}
}

package upstream_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// A gateway: the tools of another MCP server, served under a prefix beside
// the gateway's own, each call forwarded.
func ExampleConnect() {
	// The upstream: any MCP server reached over Streamable HTTP. Here, a
	// wymcp server with one tool.
	greet := tools.Must(tools.New("greet", "Greets someone.", func(_ context.Context, in struct {
		Name string `json:"name"`
	}) (string, error) {
		return "Hello, " + in.Name + "!", nil
	}))
	origin, stop := mcptest.ServeExample(greet)
	defer stop()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := upstream.Connect(ctx, upstream.Options{
		Name:   "greeter",
		URL:    origin,
		Prefix: "greeter_",
	})
	if err != nil {
		panic(err)
	}
	defer u.Close()
	for _, t := range u.Tools() {
		fmt.Println("serving", t.Name())
	}

	gateway, err := wymcp.New(protocol.Implementation{Name: "gateway", Version: "1.0.0"}, nil, u.Tools()...)
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(gateway)
	defer hs.Close()
	res, err := mcptest.CallResult(hs.URL, "greeter_greet", `{"name":"Ada"}`)
	if err != nil {
		panic(err)
	}
	fmt.Println(res)
	// Output:
	// serving greeter_greet
	// {"content":[{"type":"text","text":"\"Hello, Ada!\""}]}
}

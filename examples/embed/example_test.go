package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
)

// Example runs the program's serve on a free port in place of 8080: one
// tools/call, then the stop that SIGINT or SIGTERM starts in main. The
// README's embedding example is main.go, word for word
// (TestREADMEEmbedExample in the root package checks it).
func Example() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- serve(ctx, ln) }()

	status, body := call("http://"+ln.Addr().String()+"/mcp", "greet", `{"name":"Ada"}`)
	fmt.Println(status)
	fmt.Println(body)
	stop()
	fmt.Println("stopped:", <-stopped)
	// Output:
	// 200
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"greeting\":\"Hello, Ada!\"}"}],"structuredContent":{"greeting":"Hello, Ada!"},"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"greeter","version":"1.0.0"}}}}
	// stopped: <nil>
}

// call sends one tools/call with the headers MCP 2026-07-28 requires: the
// version, the method and the tool name mirror the body.
func call(url, tool, args string) (int, string) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

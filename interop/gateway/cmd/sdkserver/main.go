// Command sdkserver is the go-sdk upstream of interop/gateway's end-to-end
// tests: an MCP server built with the official Go SDK (go-sdk v1.8.0),
// which the tests run as a child process so that they can kill it
// (SIGKILL) and start it again. It serves Streamable HTTP in the SDK's
// stateless mode, in which it speaks 2026-07-28 (server/discover), or,
// with -stdio, the stdio transport, as a stdio upstream the gateway runs
// itself (stdio_test.go).
//
//	sdkserver -addr 127.0.0.1:0 [-auth-issuer URL -auth-jwks URL]
//	sdkserver -stdio
//
// Over HTTP, once listening it prints "listening on http://<addr>/mcp" to
// stdout. With -auth-issuer every request needs a bearer token: a JWT
// access token of that issuer whose audience is this server's URL,
// verified against the JWK Set at -auth-jwks with golang-jwt (go-sdk's
// auth.RequireBearerToken middleware, a verifier of this command: nothing
// of wymcp's).
//
// Tools, on both transports: echo {text, sleepMs}; steps (three progress
// notifications); fail {code, message} (a JSON-RPC error with that code
// and message, and data {"origin":"go-sdk"}). Over HTTP: whoami (the
// verified token's claims, and a SHA-256 of the bearer token presented);
// seen (the SHA-256 of every bearer token accepted). On stdio: pid (the
// process's id); hold (runs until its call is cancelled or the process
// ends); holding (how many hold calls are running: a test knows a call is
// in the child, without timing); grow (adds the tool grown, which the SDK
// tells its listeners of); listening (the subscriptions/listen requests
// received, and the tools/list requests since the last).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	stdio := flag.Bool("stdio", false, "serve on stdin and stdout, not HTTP")
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	issuer := flag.String("auth-issuer", "", "require JWT access tokens of this issuer")
	jwksURL := flag.String("auth-jwks", "", "the issuer's JWK Set URL")
	flag.Parse()

	s := mcp.NewServer(&mcp.Implementation{Name: "go-sdk-origin", Version: "1.8.0"}, nil)
	addCommon(s)
	if *stdio {
		if *issuer != "" {
			fail("-auth-issuer needs HTTP, not -stdio")
		}
		addStdio(s)
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fail(err)
		}
		return
	}
	addHTTP(s)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fail(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true})
	// Tokens are recorded once accepted (with auth on, inside its check).
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		see(r.Header.Get("Authorization"))
		mcpHandler.ServeHTTP(w, r)
	})
	if *issuer != "" {
		keys, err := fetchJWKS(*jwksURL)
		if err != nil {
			fail(err)
		}
		h = auth.RequireBearerToken(verifier(*issuer, url, keys), nil)(h)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	fmt.Println("listening on " + url)
	if err := http.Serve(ln, mux); err != nil {
		fail(err)
	}
}

// fail reports why the server cannot run, on stderr (stdout is the
// protocol's with -stdio), and exits.
func fail(why any) {
	fmt.Fprintln(os.Stderr, "sdkserver:", why)
	os.Exit(1)
}

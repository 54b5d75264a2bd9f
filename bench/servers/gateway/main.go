// Command gateway serves the tools of another MCP server through wymcp's
// gateway (package upstream): upstream.Connect to $UPSTREAM_URL (the
// harness's -hop mode points it at servers/wymcp), then wymcp.New with the
// upstream's tools under their own names (Prefix ""), on
// 127.0.0.1:$PORT/mcp. With PPROF_ADDR set it also serves net/http/pprof
// there.
//
// $GATEWAY_CLIENT picks the client the gateway forwards with, through the
// library's public options only (upstream.Options.HTTPClient):
//
//   - "" (the gateway as shipped): the upstream package's own net/http
//     client (MaxConns 64, no proxy, no redirects).
//   - "lean": bench/leanhttp, a transport that writes each request and
//     reads its answer on the calling goroutine (one write, no read and
//     write loops).
package main

import (
	"context"
	"log"
	"net/http"
	_ "net/http/pprof" // served only on PPROF_ADDR
	"net/url"
	"os"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/bench/leanhttp"
	"github.com/wymcp/wymcp/bench/serve"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/upstream"
)

func main() {
	raw := os.Getenv("UPSTREAM_URL")
	target, err := url.Parse(raw)
	if err != nil || target.Host == "" {
		log.Fatalf("$UPSTREAM_URL %q is not a URL", raw)
	}
	opts := upstream.Options{Name: "origin", URL: raw, Prefix: ""}
	noRedirects := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	switch mode := os.Getenv("GATEWAY_CLIENT"); mode {
	case "":
	case "lean":
		opts.HTTPClient = &http.Client{Transport: &leanhttp.Transport{Addr: target.Host, MaxIdle: 64}, CheckRedirect: noRedirects}
	default:
		log.Fatalf("$GATEWAY_CLIENT %q: want \"\" or lean", mode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	u, err := upstream.Connect(ctx, opts)
	cancel()
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("upstream %s speaks %s", raw, u.Version())
	srv, err := wymcp.New(protocol.Implementation{Name: "echo-gateway", Version: "1.0.0"}, nil, u.Tools()...)
	if err != nil {
		log.Fatal(err)
	}
	if addr := os.Getenv("PPROF_ADDR"); addr != "" {
		go func() { log.Println(http.ListenAndServe(addr, http.DefaultServeMux)) }()
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	serve.ListenAndServe(mux, "38190")
}

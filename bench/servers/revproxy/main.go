// Command revproxy is the floor of any hop: net/http/httputil's
// ReverseProxy in front of $UPSTREAM_URL, forwarding the request's and the
// answer's bytes and parsing neither (no JSON, no MCP). Its transport is
// net/http's default with the idle pool raised to 64 connections to the
// upstream (the default keeps 2 per host, which would close and reopen
// connections at 16 and 64 clients), the same bound as the gateway's.
package main

import (
	"log"
	"net/http"
	"net/http/httputil"
	_ "net/http/pprof" // served only on PPROF_ADDR
	"net/url"
	"os"

	"github.com/wymcp/wymcp/bench/serve"
)

func main() {
	target, err := url.Parse(os.Getenv("UPSTREAM_URL"))
	if err != nil || target.Host == "" {
		log.Fatalf("$UPSTREAM_URL %q is not a URL", os.Getenv("UPSTREAM_URL"))
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.MaxIdleConns, t.MaxIdleConnsPerHost, t.MaxConnsPerHost = 64, 64, 64
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host, r.Out.URL.Path = target.Scheme, target.Host, target.Path
			r.Out.Host = target.Host
		},
		Transport: t,
	}
	if addr := os.Getenv("PPROF_ADDR"); addr != "" {
		go func() { log.Println(http.ListenAndServe(addr, http.DefaultServeMux)) }()
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", rp)
	serve.ListenAndServe(mux, "38192")
}

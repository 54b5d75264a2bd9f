// Command wymcp-auth is the bench's wymcp server behind JWT bearer auth:
// the echo tool of servers/wymcp, with an auth.JWT authenticator whose keys
// are the JWK Set file named by $WYMCP_BENCH_JWKS (the harness writes it,
// and signs the token the load generator sends). Against servers/wymcp it
// measures what authenticating every request costs.
package main

import (
	"log"
	"net/http"
	"os"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
	"github.com/wymcp/wymcp/bench/benchauth"
	"github.com/wymcp/wymcp/bench/echotool"
	"github.com/wymcp/wymcp/bench/serve"
	"github.com/wymcp/wymcp/protocol"
)

func main() {
	doc, err := os.ReadFile(os.Getenv(benchauth.JWKSEnv))
	if err != nil {
		log.Fatalf("$%s: %v", benchauth.JWKSEnv, err)
	}
	keys, err := auth.ParseJWKS(doc)
	if err != nil {
		log.Fatal(err)
	}
	verifier, err := auth.NewJWT(benchauth.Issuer, benchauth.Audience, keys, nil)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := wymcp.New(protocol.Implementation{Name: "echo-wymcp", Version: "1.0.0"}, &wymcp.Options{
		Auth: &wymcp.AuthOptions{Authenticator: verifier},
	}, echotool.New())
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	serve.ListenAndServe(mux, "38181")
}

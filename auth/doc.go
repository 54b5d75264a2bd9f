// Package auth makes a wymcp server an OAuth 2.1 resource server, as MCP
// authorization requires of an HTTP server that authorizes
// (docs/design.md §6).
//
// The seam is wymcp.Authenticator, in the root package with the principal
// it yields and wymcp.PrincipalFrom: that is the server's own contract,
// and any authenticator (an API-key check, a mutual-TLS one) plugs into
// it. This package holds the ready implementations and the metadata
// endpoint, so that the root stays the small facade most embedders read,
// and a server without authorization imports none of this:
//
//   - [JWT] verifies JWT access tokens (RFC 9068) against a [JWKS], fixed
//     or fetched from the authorization server and kept fresh;
//   - [Introspection] checks opaque tokens at the authorization server's
//     RFC 7662 introspection endpoint;
//   - [BearerToken] reads the token of a request by RFC 6750's rules, for
//     these and for authenticators of your own;
//   - [MetadataHandler] serves the RFC 9728 Protected Resource Metadata a
//     client discovers the authorization server through, as (pattern,
//     handler) pairs for your mux.
//
// # Wiring
//
//	keys, _ := auth.NewRemoteJWKS("https://as.example.com/jwks", nil)
//	jwtAuth, _ := auth.NewJWT("https://as.example.com", "https://mcp.example.com/mcp", keys, nil)
//	prm, _ := auth.NewMetadataHandler(auth.ResourceMetadata{
//		Resource:             "https://mcp.example.com/mcp",
//		AuthorizationServers: []string{"https://as.example.com"},
//		ScopesSupported:      []string{"files:read"},
//	})
//	srv, _ := wymcp.New(info, &wymcp.Options{Auth: &wymcp.AuthOptions{
//		Authenticator:    jwtAuth,
//		ResourceMetadata: prm.URL(),
//	}}, tools...)
//	mux.Handle("/mcp", srv)
//	for pattern, h := range prm.Routes() {
//		mux.Handle(pattern, h)
//	}
//
// A [JWT] on a remote [JWKS] cannot verify any token until the set is
// fetched once; it is a wymcp.Readier, so the server's ReadinessHandler
// answers 503 meanwhile and a balancer routes elsewhere.
//
// # The audience
//
// Both authenticators take the server's canonical resource URI (RFC 8707)
// and refuse a token that does not name it: a token issued for another
// service, replayed here, is the confused-deputy attack MCP requires
// resource servers to stop. It is compared exactly, as the authorization
// server copies the client's resource parameter verbatim: configure the
// URI clients are told (the metadata's resource), scheme, host, port and
// path.
//
// # Network
//
// Only the configured URLs are ever fetched (the JWKS URL; the
// introspection endpoint), over https or, for local servers and tests,
// http to a loopback address; redirects are not followed, responses are
// bounded in size and time, and nothing a token says (jku, x5u) is
// fetched.
package auth

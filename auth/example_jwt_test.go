package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// A server that accepts JWT access tokens from one authorization server,
// with the Protected Resource Metadata that tells clients where to get
// them. The keys would come from the authorization server's jwks_uri
// (auth.NewRemoteJWKS); here the example is its own authorization server,
// with a key it makes and a JWKS it parses.
func ExampleNewJWT() {
	const (
		issuer   = "https://as.example.com"
		resource = "https://mcp.example.com/mcp" // the audience of its tokens
	)
	signer, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jwks, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{
		"kty": "EC", "crv": "P-256", "kid": "key-1", "alg": "ES256", "use": "sig",
		"x": b64(signer.X.FillBytes(make([]byte, 32))), "y": b64(signer.Y.FillBytes(make([]byte, 32))),
	}}})

	keys, err := auth.ParseJWKS(jwks)
	if err != nil {
		log.Fatal(err)
	}
	verifier, err := auth.NewJWT(issuer, resource, keys, nil)
	if err != nil {
		log.Fatal(err)
	}
	prm, err := auth.NewMetadataHandler(auth.ResourceMetadata{
		Resource:             resource,
		AuthorizationServers: []string{issuer},
		ScopesSupported:      []string{"notes:read"},
	})
	if err != nil {
		log.Fatal(err)
	}
	notes := tools.Must(tools.New("notes", "Lists the caller's notes.",
		func(ctx context.Context, _ struct{}) (string, error) {
			return "notes of " + wymcp.PrincipalFrom(ctx).Subject, nil
		}, tools.WithScopes("notes:read")))
	srv, err := wymcp.New(protocol.Implementation{Name: "notes", Version: "1.0.0"}, &wymcp.Options{
		Auth: &wymcp.AuthOptions{Authenticator: verifier, ResourceMetadata: prm.URL()},
	}, notes)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	for pattern, h := range prm.Routes() {
		mux.Handle(pattern, h)
	}
	ts := httptest.NewServer(mux)
	defer ts.Close()

	// A token as the authorization server issues it, for this resource.
	token := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"iss": issuer, "aud": resource, "sub": "ada", "scope": "notes:read",
		"exp": time.Now().Add(time.Hour).Unix(),
	})
	token.Header["kid"], token.Header["typ"] = "key-1", "at+jwt"
	signed, _ := token.SignedString(signer)

	status, challenge, _ := call(ts.URL+"/mcp", "")
	fmt.Println(status, challenge)
	resp, _ := http.Get(ts.URL + "/.well-known/oauth-protected-resource/mcp")
	doc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(doc))
	status, _, body := call(ts.URL+"/mcp", signed)
	fmt.Println(status, strings.Contains(body, `notes of ada`))
	// Output:
	// 401 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	// 200 {"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example.com"],"scopes_supported":["notes:read"],"bearer_methods_supported":["header"]}
	// 200 true
}

// call sends a tools/call of notes with token as the bearer token ("" for
// none) and returns the status, the challenge and the body.
func call(url, token string) (int, string, string) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "notes")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

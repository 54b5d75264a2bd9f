package wymcp_test

import (
	"context"
	"crypto/subtle"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// An Authenticator of one's own: a static API key in the bearer token,
// granting the scope the "notes" tool needs. The tool reads the caller
// with wymcp.PrincipalFrom. Package auth has the OAuth ones (JWT, RFC 7662
// introspection) and the metadata endpoint.
func ExampleAuthenticatorFunc() {
	apiKey := wymcp.AuthenticatorFunc(func(ctx context.Context, r *http.Request) (*wymcp.Principal, error) {
		if r.URL.Query().Has("api_key") {
			return nil, &wymcp.AuthError{Code: wymcp.AuthInvalidRequest, Description: "send the API key in the Authorization header"}
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			return nil, &wymcp.AuthError{Code: wymcp.AuthNoToken}
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte("key-for-bob")) == 1 {
			// A key the authenticator knows to be suspended for reading.
			return nil, &wymcp.AuthError{Code: wymcp.AuthInsufficientScope, Scopes: []string{"notes:read"}, Description: "this key may not read notes"}
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte("key-for-ada")) != 1 {
			return nil, &wymcp.AuthError{Code: wymcp.AuthInvalidToken, Description: "unknown API key"}
		}
		return &wymcp.Principal{Subject: "ada", Scopes: []string{"notes:read"}}, nil
	})
	notes := tools.Must(tools.New("notes", "Lists the caller's notes.",
		func(ctx context.Context, _ struct{}) (string, error) {
			return "notes of " + wymcp.PrincipalFrom(ctx).Subject, nil
		}, tools.WithScopes("notes:read")))
	srv, err := wymcp.New(protocol.Implementation{Name: "notes", Version: "1.0.0"}, &wymcp.Options{
		Auth: &wymcp.AuthOptions{
			Authenticator:    apiKey,
			ResourceMetadata: "https://notes.example.com/.well-known/oauth-protected-resource/mcp",
		},
	}, notes)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	ts := httptest.NewServer(srv)
	defer ts.Close()

	for _, key := range []string{"", "wrong", "key-for-bob", "key-for-ada"} {
		status, challenge, body := exampleAuthCall(ts.URL, key)
		if status != 200 {
			fmt.Println(status, challenge)
			continue
		}
		fmt.Println(status, body)
	}
	status, challenge, _ := exampleAuthCall(ts.URL+"?api_key=key-for-ada", "")
	fmt.Println(status, challenge)
	// Output:
	// 401 Bearer resource_metadata="https://notes.example.com/.well-known/oauth-protected-resource/mcp"
	// 401 Bearer error="invalid_token", error_description="unknown API key", resource_metadata="https://notes.example.com/.well-known/oauth-protected-resource/mcp"
	// 403 Bearer error="insufficient_scope", error_description="this key may not read notes", resource_metadata="https://notes.example.com/.well-known/oauth-protected-resource/mcp", scope="notes:read"
	// 200 {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"notes of ada\""}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"notes","version":"1.0.0"}}}}
	// 400 Bearer error="invalid_request", error_description="send the API key in the Authorization header", resource_metadata="https://notes.example.com/.well-known/oauth-protected-resource/mcp"
}

// exampleAuthCall calls the notes tool with key as the bearer token ("" for
// none) and returns the status, the challenge and the body.
func exampleAuthCall(url, key string) (int, string, string) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "notes")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

package auth_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/auth"
)

// TestMetadataDocument: RFC 9728 Protected Resource Metadata at both
// well-known paths (path-inserted for the MCP path, and the root), with
// resource, authorization_servers, scopes_supported and
// bearer_methods_supported ["header"]; GET and HEAD only (405 and Allow
// otherwise), an OPTIONS preflight answered, readable from any origin.
func TestMetadataDocument(t *testing.T) {
	t.Parallel()
	prm, err := auth.NewMetadataHandler(auth.ResourceMetadata{
		Resource:             testAudience,
		AuthorizationServers: []string{testIssuer},
		ScopesSupported:      []string{"tools:echo", "tools:admin"},
		ResourceName:         "wymcp test",
	})
	if err != nil {
		t.Fatal(err)
	}
	if prm.URL() != testMetadata {
		t.Errorf("URL() = %q, want %q", prm.URL(), testMetadata)
	}
	mux := http.NewServeMux()
	var patterns []string
	for pattern, h := range prm.Routes() {
		patterns = append(patterns, pattern)
		mux.Handle(pattern, h)
	}
	if strings.Join(patterns, " ") != "/.well-known/oauth-protected-resource/mcp /.well-known/oauth-protected-resource" {
		t.Errorf("patterns %q", patterns)
	}
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	const want = `{"resource":"https://mcp.example.test/mcp","authorization_servers":["https://as.example.test"],"scopes_supported":["tools:echo","tools:admin"],"bearer_methods_supported":["header"],"resource_name":"wymcp test"}`
	do := func(method, path string, header ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, hs.URL+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, body := do("GET", path, "Origin", "https://app.example.test")
		if resp.StatusCode != 200 || body != want {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		for k, v := range map[string]string{"Content-Type": "application/json", "Access-Control-Allow-Origin": "*", "Cache-Control": "public, max-age=300"} {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("GET %s: %s = %q, want %q", path, k, got, v)
			}
		}
		resp, body = do("HEAD", path)
		if resp.StatusCode != 200 || body != "" || resp.ContentLength != int64(len(want)) {
			t.Errorf("HEAD %s: %d, %d bytes, Content-Length %d", path, resp.StatusCode, len(body), resp.ContentLength)
		}
		resp, _ = do("OPTIONS", path, "Origin", "https://app.example.test", "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "mcp-protocol-version")
		if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Methods") != "GET, HEAD, OPTIONS" ||
			resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Access-Control-Allow-Headers") == "" {
			t.Errorf("OPTIONS %s: %d %v", path, resp.StatusCode, resp.Header)
		}
		for _, verb := range []string{"POST", "PUT", "DELETE", "PATCH"} {
			resp, _ := do(verb, path)
			if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD, OPTIONS" {
				t.Errorf("%s %s: %d, Allow %q", verb, path, resp.StatusCode, resp.Header.Get("Allow"))
			}
		}
	}
	if resp, _ := do("GET", "/.well-known/oauth-protected-resource/other"); resp.StatusCode != 404 {
		t.Errorf("another path: %d", resp.StatusCode)
	}
}

// TestMetadataPaths: the well-known URI for each shape of resource (RFC
// 9728 §3.1), and resources refused.
func TestMetadataPaths(t *testing.T) {
	t.Parallel()
	for resource, want := range map[string][2]string{
		"https://mcp.example.test":            {"https://mcp.example.test/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource"},
		"https://mcp.example.test/":           {"https://mcp.example.test/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource"},
		"https://mcp.example.test:8443/a/mcp": {"https://mcp.example.test:8443/.well-known/oauth-protected-resource/a/mcp", "/.well-known/oauth-protected-resource/a/mcp"},
		"http://127.0.0.1:8080/public/mcp/":   {"http://127.0.0.1:8080/.well-known/oauth-protected-resource/public/mcp/", "/.well-known/oauth-protected-resource/public/mcp/{$}"},
	} {
		prm, err := auth.NewMetadataHandler(auth.ResourceMetadata{Resource: resource, AuthorizationServers: []string{testIssuer}})
		if err != nil {
			t.Errorf("%s: %v", resource, err)
			continue
		}
		var first string
		for p := range prm.Routes() {
			first = p
			break
		}
		if prm.URL() != want[0] || first != want[1] {
			t.Errorf("%s: URL %q pattern %q, want %q %q", resource, prm.URL(), first, want[0], want[1])
		}
	}
	for name, md := range map[string]auth.ResourceMetadata{
		"relative resource": {Resource: "/mcp", AuthorizationServers: []string{testIssuer}},
		"resource fragment": {Resource: "https://a.test/mcp#x", AuthorizationServers: []string{testIssuer}},
		"resource query":    {Resource: "https://a.test/mcp?x=1", AuthorizationServers: []string{testIssuer}},
		"resource braces":   {Resource: "https://a.test/{mcp}", AuthorizationServers: []string{testIssuer}},
		"no issuer":         {Resource: testAudience},
		"relative issuer":   {Resource: testAudience, AuthorizationServers: []string{"as.example.test"}},
		"bad scope":         {Resource: testAudience, AuthorizationServers: []string{testIssuer}, ScopesSupported: []string{"a b"}},
	} {
		if _, err := auth.NewMetadataHandler(md); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

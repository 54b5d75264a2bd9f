package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// trapTransport fails every request without a packet: a test that must
// not connect counts what would have gone out.
type trapTransport struct{ n atomic.Int32 }

func (tr *trapTransport) RoundTrip(*http.Request) (*http.Response, error) {
	tr.n.Add(1)
	return nil, errors.New("trapTransport: no request may be sent")
}

// TestConnectRefusesCleartextCredentials (issue 38): credentials over
// plain http to a host that is not loopback are refused by Connect before
// any connection, naming what is wrong; AllowCleartextCredentials accepts
// them; without credentials, or to loopback, http is fine. Nothing here
// sends a packet: every HTTP client is a trap.
func TestConnectRefusesCleartextCredentials(t *testing.T) {
	trap := &trapTransport{}
	hc := &http.Client{Transport: trap}
	path := writeHeadersFile(t, "Authorization: Bearer s3cret\n")
	static, err := StaticHeaders(path)
	if err != nil {
		t.Fatal(err)
	}
	oauth := func(tokenURL string) OAuth {
		return OAuth{TokenURL: tokenURL, ClientID: "gw", ClientSecret: "secret", HTTPClient: hc}
	}
	cc := func(tokenURL string) Credentials {
		c, err := ClientCredentials(oauth(tokenURL))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	te := func(tokenURL string) Credentials {
		c, err := TokenExchange(oauth(tokenURL))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	const (
		urlMsg   = "upstream: Options.URL: %q is plain http to a host that is not loopback, and the upstream has credentials, which would travel unencrypted; use https, or allow cleartext credentials"
		tokenMsg = "upstream: Options.Credentials.TokenURL: %q is plain http to a host that is not loopback: the client secret (and, for an exchange, the caller's token) would travel unencrypted; use https, or allow cleartext credentials"
	)
	for _, tc := range []struct {
		name  string
		url   string
		creds Credentials
		want  string
	}{
		{"static headers to an address", "http://10.1.2.3/mcp", static, fmt.Sprintf(urlMsg, "http://10.1.2.3/mcp")},
		{"static headers to a name", "http://example.com/mcp", static, fmt.Sprintf(urlMsg, "http://example.com/mcp")},
		{"client credentials to an address", "http://10.1.2.3/mcp", cc("https://as.example/token"), fmt.Sprintf(urlMsg, "http://10.1.2.3/mcp")},
		{"a cleartext token endpoint", "https://example.com/mcp", cc("http://10.1.2.3/token"), fmt.Sprintf(tokenMsg, "http://10.1.2.3/token")},
		{"a cleartext exchange endpoint", "https://example.com/mcp", te("http://example.com/token"), fmt.Sprintf(tokenMsg, "http://example.com/token")},
		{"a loopback upstream, a cleartext token endpoint", "http://127.0.0.1:1/mcp", cc("http://example.com/token"), fmt.Sprintf(tokenMsg, "http://example.com/token")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Name: "up", URL: tc.url, Credentials: tc.creds, HTTPClient: hc}
			_, err := Connect(context.Background(), o)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Connect: %v\nwant %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "secret\"") {
				t.Errorf("the error holds a secret: %v", err)
			}
			o.AllowCleartextCredentials = true
			if err := o.Validate(); err != nil {
				t.Errorf("opted in: %v", err)
			}
		})
	}
	if n := trap.n.Load(); n != 0 {
		t.Fatalf("%d requests were attempted while checking the configuration", n)
	}
	for _, o := range []Options{
		{Name: "up", URL: "http://10.1.2.3/mcp"}, // no credentials
		{Name: "up", URL: "http://127.0.0.1:9/mcp", Credentials: static},
		{Name: "up", URL: "http://[::1]:9/mcp", Credentials: cc("http://localhost:9/token")},
		{Name: "up", URL: "https://example.com/mcp", Credentials: te("https://as.example/token")},
	} {
		if err := o.Validate(); err != nil {
			t.Errorf("%s with %T: %v", o.URL, o.Credentials, err)
		}
	}
}

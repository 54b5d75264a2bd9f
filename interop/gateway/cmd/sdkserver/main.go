// Command sdkserver is an upstream of interop/gateway's end-to-end test: an
// MCP server built with the official Go SDK (go-sdk v1.8.0) in its
// stateless mode, in which it speaks 2026-07-28 (server/discover). The test
// runs it as a child process so that it can kill it (SIGKILL) and start it
// again on the same address.
//
//	sdkserver -addr 127.0.0.1:0 [-auth-issuer URL -auth-jwks URL]
//
// Once listening it prints "listening on http://<addr>/mcp" to stdout. With
// -auth-issuer every request needs a bearer token: a JWT access token of
// that issuer whose audience is this server's URL, verified against the
// JWK Set at -auth-jwks with golang-jwt (go-sdk's auth.RequireBearerToken
// middleware, a verifier of this file: nothing of wymcp's).
//
// Tools: echo {text, sleepMs}; steps (three progress notifications); fail
// {code, message} (a JSON-RPC error with that code and message, and data
// {"origin":"go-sdk"}); whoami (the verified token's claims, and a SHA-256
// of the bearer token presented); seen (the SHA-256 of every bearer token
// accepted).
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text    string `json:"text" jsonschema:"the text to echo"`
	SleepMs int    `json:"sleepMs,omitempty" jsonschema:"milliseconds to wait before answering"`
}

type failArgs struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// seen is the SHA-256 of every bearer token presented, in order of first use.
var (
	seenMu sync.Mutex
	seen   []string
)

func tokenHash(authorization string) string {
	tok, ok := strings.CutPrefix(authorization, "Bearer ")
	if !ok || tok == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	issuer := flag.String("auth-issuer", "", "require JWT access tokens of this issuer")
	jwksURL := flag.String("auth-jwks", "", "the issuer's JWK Set URL")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sdkserver:", err)
		os.Exit(1)
	}
	url := "http://" + ln.Addr().String() + "/mcp"

	s := mcp.NewServer(&mcp.Implementation{Name: "go-sdk-origin", Version: "1.8.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Title: "Echo", Description: "Echoes its text."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			if in.SleepMs > 0 {
				select {
				case <-time.After(time.Duration(in.SleepMs) * time.Millisecond):
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
			}
			return text(in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "steps", Description: "Reports three steps of progress."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= 3; i++ {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i),
					}); err != nil {
						return nil, nil, err
					}
				}
			}
			return text("done"), nil, nil
		})
	s.AddTool(&mcp.Tool{
		Name:        "fail",
		Description: "Fails with the JSON-RPC error asked for.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"code":{"type":"integer"},"message":{"type":"string"}},"required":["code","message"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in failArgs
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return nil, &jsonrpc.Error{Code: in.Code, Message: in.Message, Data: json.RawMessage(`{"origin":"go-sdk"}`)}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Says who the bearer token names."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			out := map[string]any{}
			if req.Extra != nil && req.Extra.TokenInfo != nil {
				out = req.Extra.TokenInfo.Extra
				out["tokenSHA256"] = tokenHash(req.Extra.Header.Get("Authorization"))
			}
			b, _ := json.Marshal(out)
			return text(string(b)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "seen", Description: "Lists the SHA-256 of every bearer token presented."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			seenMu.Lock()
			b, _ := json.Marshal(seen)
			seenMu.Unlock()
			return text(string(b)), nil, nil
		})

	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true})
	// Tokens are recorded once accepted (with auth on, inside its check).
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sum := tokenHash(r.Header.Get("Authorization")); sum != "" {
			seenMu.Lock()
			if !slices.Contains(seen, sum) {
				seen = append(seen, sum)
			}
			seenMu.Unlock()
		}
		mcpHandler.ServeHTTP(w, r)
	})
	if *issuer != "" {
		keys, err := fetchJWKS(*jwksURL)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sdkserver:", err)
			os.Exit(1)
		}
		h = auth.RequireBearerToken(verifier(*issuer, url, keys), nil)(h)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	fmt.Println("listening on " + url)
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, "sdkserver:", err)
		os.Exit(1)
	}
}

// verifier checks a JWT access token (RFC 9068) of issuer for audience.
func verifier(issuer, audience string, keys map[string]any) auth.TokenVerifier {
	return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		claims := jwt.MapClaims{}
		parsed, err := jwt.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
			kid, _ := t.Header["kid"].(string)
			if k, ok := keys[kid]; ok {
				return k, nil
			}
			return nil, fmt.Errorf("no key %q", kid)
		}, jwt.WithValidMethods([]string{"RS256", "ES256"}), jwt.WithIssuer(issuer),
			jwt.WithAudience(audience), jwt.WithExpirationRequired())
		if err != nil {
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		if typ, _ := parsed.Header["typ"].(string); !strings.EqualFold(typ, "at+jwt") {
			return nil, fmt.Errorf("%w: typ %q", auth.ErrInvalidToken, typ)
		}
		exp, _ := claims.GetExpirationTime()
		sub, _ := claims.GetSubject()
		scope, _ := claims["scope"].(string)
		return &auth.TokenInfo{Scopes: strings.Fields(scope), Expiration: exp.Time, UserID: sub, Extra: claims}, nil
	}
}

// fetchJWKS reads the RSA and P-256 keys of a JWK Set, by kid.
func fetchJWKS(url string) (map[string]any, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	var set struct {
		Keys []struct {
			Kty, Kid, Crv, N, E, X, Y string
		} `json:"keys"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		return nil, err
	}
	b64 := func(s string) *big.Int {
		b, _ := base64.RawURLEncoding.DecodeString(s)
		return new(big.Int).SetBytes(b)
	}
	keys := map[string]any{}
	for _, k := range set.Keys {
		switch {
		case k.Kty == "RSA":
			keys[k.Kid] = &rsa.PublicKey{N: b64(k.N), E: int(b64(k.E).Int64())}
		case k.Kty == "EC" && k.Crv == "P-256":
			x, _ := base64.RawURLEncoding.DecodeString(k.X)
			y, _ := base64.RawURLEncoding.DecodeString(k.Y)
			pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
			if err != nil {
				return nil, fmt.Errorf("key %q: %v", k.Kid, err)
			}
			keys[k.Kid] = pub
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("the JWK Set has no RSA or P-256 key")
	}
	return keys, nil
}

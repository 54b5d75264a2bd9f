package bench_test

// What authenticating every request costs, in process: tools/call of echo
// through wymcp.Server.ServeHTTP without an authenticator and with
// auth.JWT verifying a bearer token against a fixed JWK Set (a cached key
// set: no network), and the verification alone.
//
//	cd bench && GOWORK=off go test -run '^$' -bench 'Auth|Verify' -benchmem -count 5

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
	"github.com/wymcp/wymcp/bench/benchauth"
	"github.com/wymcp/wymcp/bench/echotool"
	"github.com/wymcp/wymcp/bench/inproc"
	"github.com/wymcp/wymcp/protocol"
)

// authKeys are the bench's two signing keys, made once.
var authKeys = func() map[string]*benchauth.Key {
	rs, err := benchauth.NewKey()
	if err != nil {
		panic(err)
	}
	es, err := benchauth.NewECKey()
	if err != nil {
		panic(err)
	}
	return map[string]*benchauth.Key{"RS256": rs, "ES256": es}
}()

// newVerifier is auth.JWT over key's JWK Set; cacheSize as JWTOptions has it.
func newVerifier(tb testing.TB, key *benchauth.Key, cacheSize int) (*auth.JWT, string) {
	tb.Helper()
	keys, err := auth.ParseJWKS(key.JWKS())
	if err != nil {
		tb.Fatal(err)
	}
	v, err := auth.NewJWT(benchauth.Issuer, benchauth.Audience, keys, &auth.JWTOptions{CacheSize: cacheSize})
	if err != nil {
		tb.Fatal(err)
	}
	token, err := key.Token(24 * time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	return v, token
}

// newAuthServer is newServer's echo behind authn (nil: no auth).
func newAuthServer(tb testing.TB, authn wymcp.Authenticator) *wymcp.Server {
	tb.Helper()
	opts := &wymcp.Options{Logger: slog.New(slog.DiscardHandler)}
	if authn != nil {
		opts.Auth = &wymcp.AuthOptions{Authenticator: authn, ResourceMetadata: "https://mcp.bench.wymcp.test/.well-known/oauth-protected-resource/mcp"}
	}
	srv, err := wymcp.New(protocol.Implementation{Name: "echo-wymcp", Version: "1.0.0"}, opts, echotool.New())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Shutdown(context.Background()) })
	return srv
}

// BenchmarkAuth is the pair: tools/call without auth ("none") and with a
// valid RS256 JWT whose verdict is cached ("jwt": every request after the
// first, as with a client that reuses its token), then with the
// verified-token cache off, so that every request checks the signature
// against the cached key set ("jwt-verify-RS256", "jwt-verify-ES256").
func BenchmarkAuth(b *testing.B) {
	c := cases[2]
	run := func(b *testing.B, srv *wymcp.Server, token string) {
		r, rewind := newRequest(c)
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := inproc.NewSink()
		b.ReportAllocs()
		for b.Loop() {
			rewind()
			w.Reset()
			srv.ServeHTTP(w, r)
		}
		check(b, c, w)
	}
	b.Run("none", func(b *testing.B) { run(b, newAuthServer(b, nil), "") })
	b.Run("jwt", func(b *testing.B) {
		v, token := newVerifier(b, authKeys["RS256"], 0)
		run(b, newAuthServer(b, v), token)
	})
	for _, alg := range []string{"RS256", "ES256"} {
		b.Run("jwt-verify-"+alg, func(b *testing.B) {
			v, token := newVerifier(b, authKeys[alg], -1)
			run(b, newAuthServer(b, v), token)
		})
	}
}

// BenchmarkVerify is the verification alone, auth.JWT.Authenticate on one
// request that carries the token (its header read and the check):
// "cached" answers from the verified-token cache (a map lookup and the
// key-still-held check); the others parse the token, check its signature
// with the cached key set and its claims, and build the principal.
func BenchmarkVerify(b *testing.B) {
	ctx := context.Background()
	bench := func(b *testing.B, v *auth.JWT, token string) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		if _, err := v.Authenticate(ctx, r); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v.Authenticate(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("cached", func(b *testing.B) {
		v, token := newVerifier(b, authKeys["RS256"], 0)
		bench(b, v, token)
	})
	for _, alg := range []string{"RS256", "ES256"} {
		b.Run(alg, func(b *testing.B) {
			v, token := newVerifier(b, authKeys[alg], -1)
			if !strings.Contains(token, ".") {
				b.Fatal("no token")
			}
			bench(b, v, token)
		})
	}
}

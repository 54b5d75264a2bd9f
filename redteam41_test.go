package wymcp_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
	"github.com/wymcp/wymcp/internal/mcptest"
)

// Issue 41's red team: listen streams and the credentials they outlive
// no longer than.

// TestListenWithExpiredTokenRefused: a token past its exp that the
// authenticator still accepts (auth.JWT's leeway for clock skew, 30 s)
// opens no listen stream: it is refused 401 invalid_token, so that the
// client gets a fresh token. It was acknowledged and ended at once (the
// stream ends at the token's expiry), and a client that listens again
// with the token it has looped, a stream a round trip, for the whole
// leeway. Calls with that token are served as before; a token whose exp
// is ahead opens its stream.
func TestListenWithExpiredTokenRefused(t *testing.T) {
	t.Parallel()
	s := newJWTSigner(t)
	keys, err := auth.ParseJWKS(s.doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewJWT(jwtIssuer, jwtAudience, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := wymcp.New(listenInfo, &wymcp.Options{
		Logger:      slog.New(slog.DiscardHandler),
		ToolsChange: true,
		Auth:        &wymcp.AuthOptions{Authenticator: v, ResourceMetadata: testMetadata},
	}, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	ep := mcptest.Serve(t, srv, listenInfo)

	late := s.token(t, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(-10 * time.Second).Unix()})
	rep := ep.Send(t, bearer(listen("1", `{"toolsListChanged":true}`), late))
	rep.ExpectError(t, http.StatusUnauthorized, -32600, "1")
	want := `Bearer error="invalid_token", error_description="the token has expired", resource_metadata="` + testMetadata + `"`
	if got := rep.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != want {
		t.Errorf("WWW-Authenticate %q, want %q", got, want)
	}
	// The same token's calls are served: the leeway is the authenticator's.
	ep.Send(t, bearer(mcptest.Call("tools/list", ""), late)).ExpectResult(t, "1")

	fresh := s.token(t, jwt.MapClaims{"sub": "alice"})
	openListen(t, ep, bearer(listen("2", `{"toolsListChanged":true}`), fresh), "2", `{"toolsListChanged":true}`)
}

package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
	"github.com/wymcp/wymcp/internal/mcptest"
)

// The refusals of a token that does not say who it stands for.
const (
	badSubject = "the token's subject (sub) is not a non-empty string"
	badClient  = "the token's client (client_id, azp) is not a non-empty string"
	noIdentity = "the token names no subject or client (sub, client_id, azp)"
	notStrict  = "the token's header or claims are not strict JSON (duplicate names, invalid UTF-8)"
)

// TestJWTIdentity: a token binds as its sub, a non-empty string, or, with
// no sub, as its client (client_id, else azp); a token with a sub of
// another type, an empty one, or neither a sub nor a client is refused 401
// invalid_token, so that no two tokens share an empty identity
// (docs/design.md §6).
func TestJWTIdentity(t *testing.T) {
	t.Parallel()
	rs := rsaKey("rs-id")
	hs, _, _ := newJWTServer(t, []testKey{rs}, nil)
	token := func(edit func(jwt.MapClaims)) string {
		c := claims("")
		edit(c)
		return sign(t, rs, c, nil)
	}
	for name, tc := range map[string]struct {
		edit func(jwt.MapClaims)
		desc string // "" for accepted
		who  string
	}{
		"numeric sub":                 {func(c jwt.MapClaims) { c["sub"] = 12345 }, badSubject, ""},
		"other numeric sub":           {func(c jwt.MapClaims) { c["sub"] = 67890; delete(c, "client_id") }, badSubject, ""},
		"empty sub":                   {func(c jwt.MapClaims) { c["sub"] = "" }, badSubject, ""},
		"object sub":                  {func(c jwt.MapClaims) { c["sub"] = map[string]any{} }, badSubject, ""},
		"no sub, no client":           {func(c jwt.MapClaims) { delete(c, "sub"); delete(c, "client_id") }, noIdentity, ""},
		"no sub, numeric client_id":   {func(c jwt.MapClaims) { delete(c, "sub"); c["client_id"] = 5 }, badClient, ""},
		"no sub, empty client_id":     {func(c jwt.MapClaims) { delete(c, "sub"); c["client_id"] = ""; c["azp"] = 5 }, badClient, ""},
		"no sub: the client":          {func(c jwt.MapClaims) { delete(c, "sub") }, "", "client mcp-client"},
		"null sub: the client":        {func(c jwt.MapClaims) { c["sub"] = nil }, "", "client mcp-client"},
		"no sub: azp":                 {func(c jwt.MapClaims) { delete(c, "sub"); delete(c, "client_id"); c["azp"] = "azp-client" }, "", "client azp-client"},
		"sub, odd client_id ignored":  {func(c jwt.MapClaims) { c["client_id"] = 7 }, "", "user-42"},
		"sub named like a client too": {func(c jwt.MapClaims) { c["sub"] = "mcp-client" }, "", "mcp-client"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rep := hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), token(tc.edit)))
			if tc.desc == "" {
				expectCalled(t, rep, tc.who)
				return
			}
			expectRefused(t, rep, 401, -32600, "1", invalidToken(tc.desc))
		})
	}
}

// TestJWTPrincipalIdentity: the principal's Subject is the sub claim
// only, and its ClientID the client, never one for the other.
func TestJWTPrincipalIdentity(t *testing.T) {
	t.Parallel()
	rs := rsaKey("rs-pid")
	set, err := auth.ParseJWKS(jwksDoc([]testKey{rs}))
	if err != nil {
		t.Fatal(err)
	}
	v := mustJWT(t, set)
	c := claims("")
	delete(c, "sub")
	p, err := v.Verify(context.Background(), sign(t, rs, c, nil))
	if err != nil || p.Subject != "" || p.ClientID != "mcp-client" {
		t.Errorf("client token: %+v, %v; want subject \"\", client mcp-client", p, err)
	}
	p, err = v.Verify(context.Background(), sign(t, rs, claims(""), nil))
	if err != nil || p.Subject != "user-42" || p.ClientID != "mcp-client" {
		t.Errorf("user token: %+v, %v; want subject user-42, client mcp-client", p, err)
	}
}

// signRaw signs a JWS of the exact header and payload JSON given, which
// jwt.NewWithClaims could not make (two members of one name).
func signRaw(t *testing.T, k testKey, header, payload string) string {
	t.Helper()
	input := b64([]byte(header)) + "." + b64([]byte(payload))
	sig, err := jwt.GetSigningMethod(k.alg).Sign(input, k.signer)
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + b64(sig)
}

// TestJWTDuplicateMembers: a validly signed token whose header or claims
// have two members of one name (which encoding/json would read as the
// last) or invalid UTF-8 is refused 401 invalid_token, as every JSON wymcp
// reads is strict (internal/strictjson).
func TestJWTDuplicateMembers(t *testing.T) {
	t.Parallel()
	rs := rsaKey("rs-dup")
	hs, _, _ := newJWTServer(t, []testKey{rs}, nil)
	exp := time.Now().Add(time.Hour).Unix()
	claimsJSON := func(extra string) string {
		b, _ := json.Marshal(map[string]any{"iss": testIssuer, "exp": exp, "client_id": "mcp-client"})
		return string(b[:len(b)-1]) + "," + extra + "}"
	}
	header := `{"alg":"RS256","kid":"rs-dup","typ":"at+jwt"}`
	aud := `"aud":"` + testAudience + `"`
	good := signRaw(t, rs, header, claimsJSON(aud+`,"sub":"alice"`))
	expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), good)), "alice")
	for name, tok := range map[string]string{
		"two subs":            signRaw(t, rs, header, claimsJSON(aud+`,"sub":"alice","sub":"mallory"`)),
		"two subs, escaped":   signRaw(t, rs, header, claimsJSON(aud+`,"sub":"alice","s\u0075b":"mallory"`)),
		"two auds":            signRaw(t, rs, header, claimsJSON(`"aud":"https://other.example.test/mcp",`+aud+`,"sub":"alice"`)),
		"two kids":            signRaw(t, rs, `{"alg":"RS256","kid":"other","kid":"rs-dup","typ":"at+jwt"}`, claimsJSON(aud+`,"sub":"alice"`)),
		"invalid UTF-8":       signRaw(t, rs, header, claimsJSON(aud+`,"sub":"al`+"\xff"+`ice"`)),
		"lone surrogate":      signRaw(t, rs, header, claimsJSON(aud+`,"sub":"\ud800"`)),
		"trailing data":       signRaw(t, rs, header, claimsJSON(aud+`,"sub":"alice"`)+`{}`),
		"two typs in header":  signRaw(t, rs, `{"alg":"RS256","kid":"rs-dup","typ":"at+jwt","typ":"id_token+jwt"}`, claimsJSON(aud+`,"sub":"alice"`)),
		"two exps, last past": signRaw(t, rs, header, claimsJSON(aud+`,"sub":"alice","exp":1`)),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			expectRefused(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), tok)), 401, -32600, "1", invalidToken(notStrict))
		})
	}
}

// TestIntrospectionIdentity: introspection answers follow the rules of
// JWT claims: a sub of another type, an empty one, or an answer naming
// neither a sub nor a client is refused 401 invalid_token; a client binds
// as itself, never as a subject.
func TestIntrospectionIdentity(t *testing.T) {
	t.Parallel()
	exp := time.Now().Add(time.Hour).Unix()
	base := func(extra map[string]any) map[string]any {
		m := map[string]any{"active": true, "aud": testAudience, "exp": exp}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	answers := map[string]map[string]any{
		"numeric-sub":       base(map[string]any{"sub": 12345}),
		"other-numeric-sub": base(map[string]any{"sub": 67890}),
		"empty-sub":         base(map[string]any{"sub": "", "client_id": "c"}),
		"nobody":            base(nil),
		"numeric-client":    base(map[string]any{"client_id": 5}),
		"client-alice":      base(map[string]any{"client_id": "alice"}),
		"user-alice":        base(map[string]any{"sub": "alice", "client_id": "c"}),
	}
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(answers[r.PostFormValue("token")])
	}))
	t.Cleanup(as.Close)
	in, err := auth.NewIntrospection(as.URL, rsID, rsSecret, testAudience, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := serveMCP(t, in)
	for token, desc := range map[string]string{
		"numeric-sub":       badSubject,
		"other-numeric-sub": badSubject,
		"empty-sub":         badSubject,
		"nobody":            noIdentity,
		"numeric-client":    badClient,
	} {
		expectRefused(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), token)), 401, -32600, "1", invalidToken(desc))
		_, err := in.Introspect(context.Background(), token)
		var ae *wymcp.AuthError
		if !errors.As(err, &ae) || ae.Code != wymcp.AuthInvalidToken || ae.Description != desc {
			t.Errorf("Introspect(%s) = %v, want invalid_token %q", token, err, desc)
		}
	}
	expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "client-alice")), "client alice")
	expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "user-alice")), "alice")
	p, err := in.Introspect(context.Background(), "client-alice")
	if err != nil || p.Subject != "" || p.ClientID != "alice" {
		t.Errorf("client-alice: %+v, %v; want subject \"\", client alice", p, err)
	}
}

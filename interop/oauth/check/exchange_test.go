package check

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// The RFC 8693 token-exchange grant of server.mjs, over plain HTTP: what
// the library's upstream.TokenExchange relies on (its own end-to-end test
// is upstream/credentials_oauth_e2e_test.go).

const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
)

type exchangeResponse struct {
	AccessToken     string `json:"access_token"`
	IssuedTokenType string `json:"issued_token_type"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int64  `json:"expires_in"`
	Scope           string `json:"scope"`
	Error           string `json:"error"`
}

// exchange posts a token exchange of subject as the exchange client, with
// the extra parameters (each a name and a value; "" deletes a default).
func exchange(t *testing.T, info mcptest.AuthServer, subject string, extra ...string) (int, exchangeResponse) {
	t.Helper()
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {tokenTypeAccess},
		"requested_token_type": {tokenTypeAccess},
		"resource":             {audB},
	}
	id, secret := info.ExchangeClientID, info.ExchangeClientSecret
	for i := 0; i+1 < len(extra); i += 2 {
		switch name, value := extra[i], extra[i+1]; {
		case name == "client":
			id, secret = value, info.ClientSecret
		case name == "secret":
			secret = value
		case value == "":
			form.Del(name)
		default:
			form.Set(name, value)
		}
	}
	var out exchangeResponse
	status := postForm(t, info.TokenEndpoint, id, secret, form, &out)
	return status, out
}

// actOf returns the act claim's sub, and the nested act's sub if any.
func actOf(t *testing.T, raw map[string]any) (string, string) {
	t.Helper()
	act, ok := raw["act"].(map[string]any)
	if !ok {
		t.Fatalf("no act claim in %v", raw)
	}
	sub, _ := act["sub"].(string)
	var nested string
	if inner, ok := act["act"].(map[string]any); ok {
		nested, _ = inner["sub"].(string)
	}
	return sub, nested
}

func TestTokenExchange(t *testing.T) {
	skipUnlessEnabled(t)
	info, _ := startServer(t, "OAUTH_QUIET=1")
	if info.ExchangeClientID != "wymcp-exchange" || info.ExchangeClientSecret == "" {
		t.Fatalf("exchange client %q", info.ExchangeClientID)
	}
	var keys struct{ Keys []jwk }
	getJSON(t, info.JWKSURI, &keys)

	caller := mustToken(t, info, info.ClientID, info.ClientSecret, audA, "tools:echo")

	t.Run("jwt subject", func(t *testing.T) {
		before := time.Now().Unix()
		status, tr := exchange(t, info, caller.AccessToken, "scope", "tools:echo tools:add tools:unknown")
		if status != http.StatusOK {
			t.Fatalf("%d %s", status, tr.Error)
		}
		if tr.IssuedTokenType != tokenTypeAccess || tr.TokenType != "Bearer" || tr.ExpiresIn != info.TokenTTL || tr.Scope != "tools:echo tools:add" {
			t.Errorf("response %+v", tr)
		}
		h, c, raw := decodeJWT(t, tr.AccessToken)
		if h.Alg != info.JWTAlg || h.Kid != info.JWTKid || h.Typ != "at+jwt" {
			t.Errorf("header %+v", h)
		}
		if c.Sub != info.ClientID || c.Aud != audB || c.ClientID != info.ExchangeClientID || c.Iss != info.Issuer ||
			c.Scope != "tools:echo tools:add" || c.Jti == "" || c.Iat < before-5 || c.Exp-c.Iat != info.TokenTTL {
			t.Errorf("claims %+v", c)
		}
		if sub, nested := actOf(t, raw); sub != info.ExchangeClientID || nested != "" {
			t.Errorf("act %q, nested %q", sub, nested)
		}
		verifyJWS(t, tr.AccessToken, keys.Keys)
		t.Logf("exchanged token claims %v", raw)

		// Exchanged again: the earlier actor nests inside the new act.
		status, tr2 := exchange(t, info, tr.AccessToken, "resource", "", "audience", audA)
		if status != http.StatusOK {
			t.Fatalf("%d %s", status, tr2.Error)
		}
		_, c2, raw2 := decodeJWT(t, tr2.AccessToken)
		if c2.Sub != info.ClientID || c2.Aud != audA || c2.Scope != "" || tr2.Scope != "" {
			t.Errorf("claims %+v, response scope %q", c2, tr2.Scope)
		}
		if sub, nested := actOf(t, raw2); sub != info.ExchangeClientID || nested != info.ExchangeClientID {
			t.Errorf("act %q, nested %q", sub, nested)
		}
	})

	t.Run("opaque subject", func(t *testing.T) {
		opaque := mustToken(t, info, info.OpaqueClientID, info.OpaqueClientSecret, audA, "tools:echo")
		status, tr := exchange(t, info, opaque.AccessToken)
		if status != http.StatusOK {
			t.Fatalf("%d %s", status, tr.Error)
		}
		_, c, raw := decodeJWT(t, tr.AccessToken)
		if c.Sub != info.OpaqueClientID || c.Aud != audB {
			t.Errorf("claims %+v", c)
		}
		if sub, _ := actOf(t, raw); sub != info.ExchangeClientID {
			t.Errorf("act %q", sub)
		}
		// Revoked: no longer exchangeable.
		if status := postForm(t, info.RevocationEndpoint, info.OpaqueClientID, info.OpaqueClientSecret, url.Values{"token": {opaque.AccessToken}}, nil); status != http.StatusOK {
			t.Fatalf("revocation: %d", status)
		}
		if status, tr := exchange(t, info, opaque.AccessToken); status != http.StatusBadRequest || tr.Error != "invalid_grant" {
			t.Errorf("revoked subject: %d %+v", status, tr)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		parts := strings.Split(caller.AccessToken, ".")
		forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"admin","iss":"`+info.Issuer+`","exp":4102444800}`)) + "." + parts[2]
		otherKid := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"at+jwt","kid":"someone-else"}`)) + "." + parts[1] + "." + parts[2]
		notAT := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT","kid":"`+info.JWTKid+`"}`)) + "." + parts[1] + "." + parts[2]
		for _, tc := range []struct {
			name   string
			extra  []string
			status int
			error  string
		}{
			{"forged claims", []string{"subject_token", forged}, 400, "invalid_grant"},
			{"unknown kid", []string{"subject_token", otherKid}, 400, "invalid_grant"},
			{"not an access token", []string{"subject_token", notAT}, 400, "invalid_grant"},
			{"garbage", []string{"subject_token", "not-a-token"}, 400, "invalid_grant"},
			{"no subject token", []string{"subject_token", ""}, 400, "invalid_request"},
			{"id token type", []string{"subject_token_type", "urn:ietf:params:oauth:token-type:id_token"}, 400, "invalid_request"},
			{"refresh token requested", []string{"requested_token_type", "urn:ietf:params:oauth:token-type:refresh_token"}, 400, "invalid_request"},
			{"actor token", []string{"actor_token", caller.AccessToken, "actor_token_type", tokenTypeAccess}, 400, "invalid_request"},
			{"no audience", []string{"resource", ""}, 400, "invalid_target"},
			{"foreign resource", []string{"resource", "https://elsewhere.example/mcp"}, 400, "invalid_target"},
			{"resource and audience differ", []string{"audience", audA}, 400, "invalid_target"},
			{"JWT client", []string{"client", info.ClientID}, 400, "invalid_request"},
			{"wrong secret", []string{"secret", "wrong"}, 401, "invalid_client"},
		} {
			status, tr := exchange(t, info, caller.AccessToken, tc.extra...)
			if status != tc.status || tr.Error != tc.error || tr.AccessToken != "" {
				t.Errorf("%s: %d %+v, want %d %s", tc.name, status, tr, tc.status, tc.error)
			}
		}
		// resource and audience naming the same one are accepted.
		if status, tr := exchange(t, info, caller.AccessToken, "audience", audB); status != http.StatusOK {
			t.Errorf("equal resource and audience: %d %+v", status, tr)
		}
		// The exchange client also gets client-credentials tokens of its
		// own: the gateway lists an upstream's tools as itself.
		if status, tr := clientCredentials(t, info, info.ExchangeClientID, info.ExchangeClientSecret, audA, ""); status != http.StatusOK || tr.AccessToken == "" {
			t.Errorf("client credentials by the exchange client: %d %+v", status, tr)
		}
	})
}

// TestTokenExchangeES256Expiry exchanges an ES256-signed subject token,
// then shows that once it has expired it is refused.
func TestTokenExchangeES256Expiry(t *testing.T) {
	skipUnlessEnabled(t)
	info, _ := startServer(t, "OAUTH_JWT_ALG=ES256", "OAUTH_TOKEN_TTL=1", "OAUTH_QUIET=1")
	var keys struct{ Keys []jwk }
	getJSON(t, info.JWKSURI, &keys)
	// A one-second token may expire before it is exchanged (exp = iat + 1,
	// iat rounded down): retry as TestRestrictedServer does.
	for attempt := 1; ; attempt++ {
		asked := time.Now()
		activeUntil := asked.Truncate(time.Second).Add(time.Second)
		caller := mustToken(t, info, info.ClientID, info.ClientSecret, audA, "tools:echo")
		status, tr := exchange(t, info, caller.AccessToken)
		if status == http.StatusOK {
			h, c, _ := decodeJWT(t, tr.AccessToken)
			if h.Alg != "ES256" || c.Sub != info.ClientID || c.Aud != audB {
				t.Errorf("header %+v claims %+v", h, c)
			}
			verifyJWS(t, tr.AccessToken, keys.Keys)
			time.Sleep(2100 * time.Millisecond)
			if status, tr := exchange(t, info, caller.AccessToken); status != http.StatusBadRequest || tr.Error != "invalid_grant" {
				t.Errorf("expired subject token: %d %+v", status, tr)
			}
			return
		}
		if answered := time.Now(); answered.Before(activeUntil) {
			t.Fatalf("exchange refused %v after the token was asked for, before it can have expired: %d %+v", answered.Sub(asked), status, tr)
		} else if attempt == 5 {
			t.Fatalf("the token expired before its exchange five times")
		}
	}
}

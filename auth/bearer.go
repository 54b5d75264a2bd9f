package auth

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/wymcp/wymcp"
)

// maxTokenBytes bounds an access token: the 8 KiB BearerToken documents.
// Real tokens are well under 2 KiB (a JWT with a few claims is ~800
// bytes); a longer one is refused before any parsing, so that no
// authenticator spends work on a blob.
const maxTokenBytes = 8 << 10

// BearerToken returns the access token of r's Authorization header (RFC
// 6750 §2.1: "Bearer", one or more spaces, a token68). The refusals are
// [*wymcp.AuthError]s an authenticator returns as they are:
//
//   - no Authorization header, or another scheme (Basic, DPoP):
//     AuthNoToken (RFC 6750 §3.1: a request without the credentials the
//     server accepts gets a challenge without an error code);
//   - an access_token query parameter (its name percent-decoded, as
//     r.URL.Query() decodes it): AuthInvalidRequest. MCP forbids
//     tokens in the URI (they end up in logs and Referer headers), and
//     this server's metadata says bearer_methods_supported ["header"], so
//     it is refused rather than ignored: a client that sends one learns
//     why, instead of retrying with the same mistake;
//   - two Authorization headers: AuthInvalidRequest (RFC 6750 §3.1: more
//     than one credential makes the request invalid; neither is picked);
//   - an empty token, one with characters outside token68, or one longer
//     than 8 KiB (8192 bytes): AuthInvalidToken. Real tokens are far
//     shorter; a longer one is refused before any parsing, so that no
//     authenticator spends work on a blob.
//
// It is exported for embedders writing their own Authenticator, so that
// every authenticator reads the header by the same rules.
func BearerToken(r *http.Request) (string, error) {
	token, err := bearer(r)
	if err != nil {
		return "", err
	}
	if err := checkToken(token); err != nil {
		return "", err
	}
	return token, nil
}

// bearer is BearerToken without the check of the token's characters,
// which JWT and Introspection make only for a token they have not seen:
// one in their cache passed it before, byte for byte, and the check is a
// pass over every byte, a noticeable share of a cached request's time for
// a JWT (bench/README.md, "Numbers behind the code's comments").
func bearer(r *http.Request) (string, error) {
	if r.URL != nil && tokenInQuery(r.URL.RawQuery) {
		return "", errTokenInQuery
	}
	values := r.Header.Values("Authorization")
	switch len(values) {
	case 0:
		return "", errNoToken
	case 1:
	default:
		return "", errTwoHeaders
	}
	v := values[0]
	// The scheme is case-insensitive (RFC 9110 §11.1).
	const scheme = "bearer"
	if len(v) <= len(scheme) || !strings.EqualFold(v[:len(scheme)], scheme) || (v[len(scheme)] != ' ' && v[len(scheme)] != '\t') {
		if strings.EqualFold(strings.TrimSpace(v), scheme) {
			return "", errMalformed // "Bearer" with no token
		}
		return "", errNoToken
	}
	token := strings.TrimLeft(v[len(scheme):], " \t")
	return strings.TrimRight(token, " \t"), nil
}

// tokenInQuery reports whether a raw query string has a parameter named
// access_token: a name, percent-decoded as url.ParseQuery decodes it
// (so "access%5Ftoken" is one, as r.URL.Query() and r.FormValue see it),
// in a parameter separated by '&' or by the ';' that other servers still
// split at. A name that does not decode is taken as it is.
func tokenInQuery(raw string) bool {
	// Only a percent escape makes "access_token" of other bytes ('+' is
	// a space), so a query with neither is passed over without a scan.
	if !strings.Contains(raw, "access_token") && !strings.Contains(raw, "%") {
		return false
	}
	for raw != "" {
		param := raw
		if i := strings.IndexAny(raw, "&;"); i >= 0 {
			param, raw = raw[:i], raw[i+1:]
		} else {
			raw = ""
		}
		name, _, _ := strings.Cut(param, "=")
		if strings.Contains(name, "%") {
			if decoded, err := url.QueryUnescape(name); err == nil {
				name = decoded
			}
		}
		if name == "access_token" {
			return true
		}
	}
	return false
}

// checkToken refuses an empty token, one longer than maxTokenBytes, and
// one that is not a token68.
func checkToken(token string) error {
	if token == "" || len(token) > maxTokenBytes || !isToken68(token) {
		return errMalformed
	}
	return nil
}

// token68Chars marks the bytes of a token68 before its padding.
var token68Chars = func() (t [256]bool) {
	for _, c := range []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/") {
		t[c] = true
	}
	return t
}()

// isToken68 reports whether s is an RFC 9110 §11.2 token68:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isToken68(s string) bool {
	i := 0
	for i < len(s) && token68Chars[s[i]] {
		i++
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}

// The refusals shared by the authenticators. Their descriptions reach the
// client (error_description): fixed texts that never quote the token.
var (
	errNoToken      = &wymcp.AuthError{Code: wymcp.AuthNoToken}
	errTokenInQuery = &wymcp.AuthError{Code: wymcp.AuthInvalidRequest, Description: "access tokens are accepted in the Authorization header only"}
	errTwoHeaders   = &wymcp.AuthError{Code: wymcp.AuthInvalidRequest, Description: "more than one Authorization header"}
	errMalformed    = &wymcp.AuthError{Code: wymcp.AuthInvalidToken, Description: "malformed bearer token"}
)

// invalid returns an AuthInvalidToken refusal with a fixed description and
// the cause kept for the server.
func invalid(description string, cause error) *wymcp.AuthError {
	return &wymcp.AuthError{Code: wymcp.AuthInvalidToken, Description: description, Err: cause}
}

// unavailable returns an AuthUnavailable refusal: the credential could not
// be checked, through no fault of the client's.
func unavailable(cause error) *wymcp.AuthError {
	return &wymcp.AuthError{Code: wymcp.AuthUnavailable, Err: cause}
}

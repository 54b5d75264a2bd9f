package auth_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
)

// bearerDescriptions are the only error_description texts BearerToken
// gives: fixed words, never the token.
var bearerDescriptions = map[string]bool{
	"": true,
	"access tokens are accepted in the Authorization header only": true,
	"more than one Authorization header":                          true,
	"malformed bearer token":                                      true,
}

// FuzzBearerToken: arbitrary Authorization header values (none, one, or
// several: values is split at each newline, which no real header value
// holds) and query strings. BearerToken never panics, and its answer is
// the one RFC 6750 and its doc comment specify, computed here
// independently: a token in the query is invalid_request whatever the
// headers say, two headers are invalid_request, no header or another
// scheme is no_token, and a returned token is a non-empty token68 of at
// most MaxTokenBytes, exactly the header's value after "Bearer" and its
// blanks. Every refusal is a *wymcp.AuthError with a fixed description.
func FuzzBearerToken(f *testing.F) {
	token := "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
	for _, seed := range []struct {
		none   bool
		values string
		query  string
	}{
		{none: true},
		{values: "Bearer " + token},
		{values: "bearer " + token},
		{values: "BEARER\t\t" + token + " \t"},
		{values: "Bearer abc=="},
		{values: "Bearer a=b"},
		{values: "Bearer =="},
		{values: "Bearer"},
		{values: "Bearer "},
		{values: " Bearer x"},
		{values: "Bearerx"},
		{values: "Bearer x y"},
		{values: "Bearer x,Bearer y"},
		{values: "Bearer \u00e9"},
		{values: "Bearer\u00a0x"},
		{values: "Basic dXNlcjpwYXNz"},
		{values: "DPoP " + token},
		{values: ""},
		{values: "Bearer x\nBearer x"},
		{values: "Bearer x\n"},
		{values: "Bearer " + strings.Repeat("a", auth.MaxTokenBytes)},
		{values: "Bearer " + strings.Repeat("a", auth.MaxTokenBytes+1)},
		{values: "Bearer " + token, query: "access_token=" + token},
		{values: "Bearer " + token, query: "a=1&access_token"},
		{values: "Bearer " + token, query: "a=1;access_token=x"},
		{values: "Bearer " + token, query: "x=access_token"},
		{values: "Bearer " + token, query: "x=access_token%zz"},
		{values: "Bearer " + token, query: "access%5Ftoken=" + token},
		{values: "Bearer " + token, query: "%61ccess_token=" + token},
		{none: true, query: "access_token=" + token},
		{values: "Bearer " + token, query: "session=1&cursor=%2F"},
	} {
		f.Add(seed.none, seed.values, seed.query)
	}
	f.Fuzz(func(t *testing.T, none bool, values, query string) {
		r := &http.Request{Method: http.MethodPost, URL: &url.URL{Path: "/mcp", RawQuery: query}, Header: http.Header{}}
		var sent []string
		if !none {
			sent = strings.Split(values, "\n")
			r.Header["Authorization"] = sent
		}
		got, err := auth.BearerToken(r)
		want, wantCode := bearerModel(sent, query)

		if err == nil {
			if wantCode != 0 {
				t.Fatalf("BearerToken accepted %q (query %q), want %v", got, query, wantCode)
			}
			if got != want {
				t.Fatalf("BearerToken = %q, want %q", got, want)
			}
			if got == "" || len(got) > auth.MaxTokenBytes || !token68(got) {
				t.Fatalf("BearerToken returned %q: not a token68 of 1 to %d bytes", got, auth.MaxTokenBytes)
			}
			return
		}
		if got != "" {
			t.Fatalf("BearerToken returned %q with the error %v", got, err)
		}
		var ae *wymcp.AuthError
		if !errors.As(err, &ae) || ae != err {
			t.Fatalf("BearerToken error %T %v, want a *wymcp.AuthError", err, err)
		}
		switch ae.Code {
		case wymcp.AuthNoToken, wymcp.AuthInvalidRequest, wymcp.AuthInvalidToken:
		default:
			t.Fatalf("BearerToken refused with %v, not a documented code", ae.Code)
		}
		if ae.Code != wantCode {
			t.Fatalf("BearerToken refused %q (query %q) with %v, want %v", sent, query, ae.Code, wantCode)
		}
		if !bearerDescriptions[ae.Description] {
			t.Fatalf("BearerToken's description %q is not one of its fixed texts", ae.Description)
		}
	})
}

// bearerModel is what BearerToken must answer for these header values
// and query, written from RFC 6750 and BearerToken's doc comment: the
// token, or the refusal's code.
func bearerModel(values []string, rawQuery string) (string, wymcp.AuthCode) {
	// A parameter named access_token, its name decoded as the query's
	// reader decodes it (url.ParseQuery: what r.URL.Query() and
	// r.FormValue see), whatever its value, with '&' or ';' between
	// parameters.
	for _, param := range strings.FieldsFunc(rawQuery, func(c rune) bool { return c == '&' || c == ';' }) {
		name, _, _ := strings.Cut(param, "=")
		if q, err := url.ParseQuery(name); err == nil && q.Has("access_token") || name == "access_token" {
			return "", wymcp.AuthInvalidRequest
		}
	}
	switch len(values) {
	case 0:
		return "", wymcp.AuthNoToken
	case 1:
	default:
		return "", wymcp.AuthInvalidRequest
	}
	v := values[0]
	// "Bearer" (any case), then one or more SP or HTAB.
	if len(v) < 7 || !strings.EqualFold(v[:6], "bearer") || (v[6] != ' ' && v[6] != '\t') {
		if strings.EqualFold(strings.TrimSpace(v), "bearer") {
			return "", wymcp.AuthInvalidToken // the scheme without a token
		}
		return "", wymcp.AuthNoToken
	}
	tok := strings.Trim(v[6:], " \t")
	if tok == "" || len(tok) > auth.MaxTokenBytes || !token68(tok) {
		return "", wymcp.AuthInvalidToken
	}
	return tok, 0
}

// token68 reports whether s matches RFC 9110 §11.2's token68:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func token68(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for _, c := range []byte(body) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~+/", c) >= 0:
		default:
			return false
		}
	}
	return true
}

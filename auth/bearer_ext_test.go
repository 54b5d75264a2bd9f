package auth_test

import (
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
)

// TestBearerTokenQuery: an access_token query parameter is refused
// however its name is written, since the query's reader (r.URL.Query(),
// r.FormValue) decodes the names: a percent-encoded name (found by
// FuzzBearerToken: it used to pass, the check looked for the literal
// bytes), a name after a ';'. A value or another name that merely holds
// the words is not a token in the query.
func TestBearerTokenQuery(t *testing.T) {
	t.Parallel()
	const token = "abc.def.ghi"
	for query, refused := range map[string]bool{
		"access_token=x":                         true,
		"access_token":                           true,
		"a=1&access_token=":                      true,
		"access%5Ftoken=x":                       true,
		"access%5ftoken=x":                       true,
		"%61ccess_token=x":                       true,
		"%61%63%63%65%73%73%5F%74%6F%6B%65%6E=x": true,
		"a=1;access_token=x":                     true,
		"access_token=%zz":                       true,
		"":                                       false,
		"x=access_token":                         false,
		"x=access_token%zz":                      false,
		"access_tokens=x":                        false,
		"my_access_token=x":                      false,
		"access+token=x":                         false,
		"access%20token=x":                       false,
		"access_token%zz=x":                      false,
		"cursor=%2F&session=abc":                 false,
	} {
		r := &http.Request{URL: &url.URL{Path: "/mcp", RawQuery: query}, Header: http.Header{"Authorization": {"Bearer " + token}}}
		got, err := auth.BearerToken(r)
		var ae *wymcp.AuthError
		switch {
		case refused && (!errors.As(err, &ae) || ae.Code != wymcp.AuthInvalidRequest):
			t.Errorf("query %q: BearerToken = %q, %v; want invalid_request", query, got, err)
		case !refused && (err != nil || got != token):
			t.Errorf("query %q: BearerToken = %q, %v; want the header's token", query, got, err)
		}
	}
}

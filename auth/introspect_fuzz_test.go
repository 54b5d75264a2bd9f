package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
)

// introspectionDescriptions are the error_description texts of an
// introspection refusal.
var introspectionDescriptions = map[string]bool{
	"the token is not active":                                       true,
	"the token has no expiry":                                       true,
	"the token's expiry (exp) is not a valid time":                  true,
	"the token's start (nbf) is not a valid time":                   true,
	"the token has expired":                                         true,
	"the token is not valid yet":                                    true,
	"the token was issued for another resource":                     true,
	"the token is from another issuer":                              true,
	"the token is not a bearer token":                               true,
	"the token's subject (sub) is not a non-empty string":           true,
	"the token's client (client_id, azp) is not a non-empty string": true,
	"the token names no subject or client (sub, client_id, azp)":    true,
}

// FuzzIntrospectionAnswer: arbitrary introspection answers. The answer
// is handled inside Introspect's call to the endpoint, so the target
// drives Introspect against an endpoint on 127.0.0.1 that answers 200
// with the fuzzed body. Introspect never panics and always answers, and:
//
//   - it accepts only an answer whose active member is exactly JSON true,
//     with an exp (a NumericDate: a non-negative number within the int64
//     seconds, its fraction dropped) after the call began, an nbf (when
//     there is one) not after it ended, an aud that is or contains the audience,
//     an iss (when there is one) equal to the configured issuer, and a
//     token_type (when there is one) of Bearer: each read here from the
//     body with encoding/json and compared as numbers, not times;
//   - an accepted principal is the answer's: expiry, subject (or client
//     id), scopes, and the claims, which hold the whole answer;
//   - a refusal is a *wymcp.AuthError: invalid_token with a fixed
//     description for an answer that fails a check ("not active" when
//     active is not true; "not a valid time" only for an exp or nbf that
//     is not a NumericDate), or unavailable (503) for a body that is not an
//     introspection document;
//   - the same token again gets the same verdict from the cache, without
//     a call, unless the endpoint could not answer.
func FuzzIntrospectionAnswer(f *testing.F) {
	var body atomic.Pointer[[]byte]
	var calls atomic.Int64
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*body.Load())
	}))
	f.Cleanup(endpoint.Close)
	in, err := auth.NewIntrospection(endpoint.URL, rsID, rsSecret, testAudience,
		&auth.IntrospectionOptions{Issuer: testIssuer, Timeout: 5 * time.Second})
	if err != nil {
		f.Fatal(err)
	}

	exp := strconv.FormatInt(time.Now().Add(24*time.Hour).Unix(), 10)
	aud := `"aud":"` + testAudience + `"`
	for _, seed := range []string{
		`{"active":true,"exp":` + exp + `,` + aud + `}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"iss":"` + testIssuer + `","token_type":"bearer","sub":"u","client_id":"c","scope":"a b a","nbf":1}`,
		`{"active":true,"exp":` + exp + `,"aud":["x","` + testAudience + `"],"iss":"","token_type":""}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"extra":{"deep":[1,2.5,"x",null]}}`,
		`{"active":true,"exp":4102444800,` + aud + `,"nbf":4102444800}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"nbf":9223372036854775807}`,
		`{"active":true,"exp":9223372036854775807,` + aud + `}`,
		`{"active":true,"exp":-9223372036854775808,` + aud + `}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"nbf":-9223372036854775808}`,
		`{"active":true,"exp":` + exp + `.5,` + aud + `}`,
		`{"active":true,"exp":` + exp + `.999999999999999999999,` + aud + `,"nbf":1.5}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"nbf":-1}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"nbf":-0.0}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"nbf":1e400}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"nbf":"1"}`,
		`{"active":true,"exp":-0.5,` + aud + `}`,
		`{"active":true,"exp":1e400,` + aud + `}`,
		`{"active":true,"exp":9223372036854775808,` + aud + `}`,
		`{"active":true,"exp":9223372036854775807.5,` + aud + `}`,
		`{"active":true,"exp":9.2233720368547748e18,` + aud + `}`,
		`{"active":true,"exp":[` + exp + `],` + aud + `}`,
		`{"active":true,"exp":1e10,` + aud + `}`,
		`{"active":true,"exp":"` + exp + `",` + aud + `}`,
		`{"active":true,"exp":null,` + aud + `}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"x":1e400}`,
		`{"active":true,` + aud + `}`,
		`{"active":true,"exp":1,` + aud + `}`,
		`{"active":false,"exp":` + exp + `,` + aud + `}`,
		`{"active":"true","exp":` + exp + `,` + aud + `}`,
		`{"active":1,"exp":` + exp + `,` + aud + `}`,
		`{"active":null,"exp":` + exp + `,` + aud + `}`,
		`{"Active":true,"exp":` + exp + `,` + aud + `}`,
		`{"active":true,"active":false,"exp":` + exp + `,` + aud + `}`,
		`{"active":false,"active":true,"exp":` + exp + `,` + aud + `}`,
		`{"exp":` + exp + `,` + aud + `}`,
		`{"active":true,"exp":` + exp + `,"aud":"` + testAudience + `/"}`,
		`{"active":true,"exp":` + exp + `,"aud":["` + testAudience + `/",1]}`,
		`{"active":true,"exp":` + exp + `,"aud":[["` + testAudience + `"]]}`,
		`{"active":true,"exp":` + exp + `,"aud":{"0":"` + testAudience + `"}}`,
		`{"active":true,"exp":` + exp + `}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"iss":"https://evil.example.test"}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"iss":null}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"token_type":"DPoP"}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"token_type":"BEARER"}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"sub":"\ud800"}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"sub":12345}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"sub":""}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"sub":null,"client_id":"c"}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"client_id":7,"azp":"c"}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"azp":"c"}`,
		`{"active":true,"exp":` + exp + `,` + aud + `,"sub":"u","client_id":[]}`,
		`{"active":true,"exp":` + exp + `,` + aud + `} `,
		`{"active":true,"exp":` + exp + `,` + aud + `}{}`,
		`{"active":true}`,
		`{"active":false}`,
		`{}`,
		`[]`,
		`true`,
		``,
		`{"active":true,"exp":` + exp + `,` + aud + `,"pad":"` + strings.Repeat("x", 64<<10) + `"}`,
	} {
		f.Add([]byte(seed))
	}

	var tokens atomic.Int64
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, answer []byte) {
		body.Store(&answer)
		token := "fuzz-" + strconv.FormatInt(tokens.Add(1), 10) // each input its own token: no cache hit
		before := time.Now()
		p, err := in.Introspect(ctx, token)
		after := time.Now()

		var code wymcp.AuthCode
		if err != nil {
			code = checkIntrospectionRefusal(t, p, err, answer)
		} else {
			checkIntrospectionAccepted(t, p, answer, before, after)
		}

		// Again: from the cache, unless the endpoint could not answer or
		// the accepted token expired in between.
		n := calls.Load()
		p2, err2 := in.Introspect(ctx, token)
		if code == wymcp.AuthUnavailable || err == nil && p.Expiry.Before(time.Now().Add(time.Second)) {
			return
		}
		if calls.Load() != n {
			t.Fatalf("a cached answer (%v, %v) was asked for again", p, err)
		}
		if p2 != p || err2 != err {
			t.Fatalf("the cache answered %v, %v; the endpoint %v, %v", p2, err2, p, err)
		}
	})
}

// checkIntrospectionRefusal asserts a refusal's type, code and
// description, and returns its code.
func checkIntrospectionRefusal(t *testing.T, p *wymcp.Principal, err error, answer []byte) wymcp.AuthCode {
	t.Helper()
	if p != nil {
		t.Fatalf("Introspect returned a principal with the error %v", err)
	}
	var ae *wymcp.AuthError
	if !errors.As(err, &ae) || ae != err {
		t.Fatalf("Introspect error %T %v, want a *wymcp.AuthError", err, err)
	}
	switch ae.Code {
	case wymcp.AuthUnavailable:
		if ae.Description != "" {
			t.Fatalf("an unavailable refusal describes itself to the client: %q", ae.Description)
		}
	case wymcp.AuthInvalidToken:
		var m map[string]json.RawMessage
		if json.Unmarshal(answer, &m) != nil {
			t.Fatalf("%v for a body that is not a JSON object: %q", err, answer)
		}
		if !introspectionDescriptions[ae.Description] {
			t.Fatalf("the description %q is not one of the fixed texts", ae.Description)
		}
		if string(m["active"]) != "true" && ae.Description != "the token is not active" {
			t.Fatalf("an answer with active %s refused as %q, want not active", m["active"], ae.Description)
		}
		for name, desc := range map[string]string{"exp": "the token's expiry (exp) is not a valid time", "nbf": "the token's start (nbf) is not a valid time"} {
			if _, ok := numericDate(m[name]); ae.Description == desc && ok {
				t.Fatalf("refused as %q, but %s %s is a NumericDate", desc, name, m[name])
			}
		}
	default:
		t.Fatalf("Introspect refused with %v, want invalid_token or unavailable", ae.Code)
	}
	return ae.Code
}

// checkIntrospectionAccepted asserts that an accepted answer passes every
// check, read independently, and that the principal is the answer's.
func checkIntrospectionAccepted(t *testing.T, p *wymcp.Principal, answer []byte, before, after time.Time) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("accepted %q: %s", answer, fmt.Sprintf(format, args...))
	}
	if p == nil {
		fail("with a nil principal")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(answer, &m); err != nil {
		fail("encoding/json refuses it: %v", err)
	}
	str := func(name string) (string, bool) {
		raw, ok := m[name]
		if !ok || string(raw) == "null" {
			return "", true
		}
		var s string
		return s, json.Unmarshal(raw, &s) == nil
	}
	if string(m["active"]) != "true" {
		fail("active is %s, not true", m["active"])
	}
	exp, ok := numericDate(m["exp"])
	if !ok || string(m["exp"]) == "null" {
		fail("exp %s is not a NumericDate", m["exp"])
	}
	if exp <= before.Unix() {
		fail("exp %d is not after the call began (%d)", exp, before.Unix())
	}
	if raw, ok := m["nbf"]; ok && string(raw) != "null" {
		nbf, ok := numericDate(raw)
		if !ok || nbf > after.Unix() {
			fail("nbf %s is not a NumericDate, or after the call ended (%d)", raw, after.Unix())
		}
	}
	var aud any
	if json.Unmarshal(m["aud"], &aud) != nil {
		fail("aud %s does not decode", m["aud"])
	}
	switch a := aud.(type) {
	case string:
		if a != testAudience {
			fail("aud %q", a)
		}
	case []any:
		if !slices.Contains(a, any(testAudience)) {
			fail("aud %v", a)
		}
	default:
		fail("aud %v", aud)
	}
	if iss, ok := str("iss"); !ok || iss != "" && iss != testIssuer {
		fail("iss %s", m["iss"])
	}
	if typ, ok := str("token_type"); !ok || typ != "" && !strings.EqualFold(typ, "bearer") {
		fail("token_type %s", m["token_type"])
	}

	// The principal is the answer's.
	// An exp past year 9999 is taken as its last second.
	if !p.Expiry.After(before) || p.Expiry.Unix() != min(exp, 253402300799) {
		fail("principal expiry %v for exp %d", p.Expiry, exp)
	}
	var c map[string]any
	if err := json.Unmarshal(answer, &c); err != nil {
		fail("encoding/json refuses it: %v", err)
	}
	checkIdentity(t, p, c)
	scope, _ := str("scope")
	var scopes []string
	for s := range strings.FieldsSeq(scope) {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	if !slices.Equal(p.Scopes, scopes) {
		fail("principal scopes %q, scope %q", p.Scopes, scope)
	}
	if len(p.Claims) != len(m) || p.Claims["active"] != true {
		fail("principal claims %v", p.Claims)
	}
	for name := range m {
		if _, ok := p.Claims[name]; !ok {
			fail("the claims lack %q", name)
		}
	}
}

// numericDate reads an RFC 7519 NumericDate as the oracle of
// FuzzIntrospectionAnswer: its whole seconds, when raw is a JSON number
// that is not negative and is under 2⁶³ (math/big, exactly: an integer of
// up to 19 digits, or any other number's integer part). A missing or
// null member is 0, true.
func numericDate(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, true
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil || strings.HasPrefix(string(raw), `"`) {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		return i, i >= 0
	}
	// Not an integer literal: the bounds are checked on the exact value,
	// the seconds taken from its float64 (as the code under test reads
	// it), which agrees except within a float64's rounding of 2⁶³ and of
	// a fraction just under a whole second.
	f, ok := new(big.Float).SetPrec(256).SetString(n.String())
	if !ok || f.Sign() < 0 || f.Cmp(new(big.Float).SetUint64(1<<63)) >= 0 {
		return 0, false
	}
	g, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || g >= 1<<63 {
		return 0, false
	}
	return int64(g), true
}

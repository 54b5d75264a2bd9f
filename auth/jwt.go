package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/strictjson"
)

// defaultLeeway is the clock skew allowed when exp and nbf are compared
// with the server's clock, unless JWTOptions.Leeway says otherwise: enough
// for NTP-synchronised hosts that disagree by a few seconds, small enough
// that an expired token is not honoured for long.
const defaultLeeway = 30 * time.Second

// maxNumericDate is the last second of year 9999, in Unix seconds: the
// latest time an exp or nbf is taken to name. time.Unix cannot hold every
// int64 (past about 292 billion years it wraps around to the distant
// past), and no token needs more: a later exp is taken as this one, a
// later nbf is not reached.
const maxNumericDate = 253402300799

// JWTOptions configures a [JWT] authenticator. A nil *JWTOptions, and
// every zero field, means the documented default.
type JWTOptions struct {
	// Leeway is the clock skew allowed on exp and nbf; 0 means 30 s;
	// negative means none.
	Leeway time.Duration
	// CacheSize is the number of verified tokens remembered, each until it
	// expires; 0 means 4096; negative turns the cache off, and every
	// request then verifies a signature.
	CacheSize int
}

// JWT authenticates requests that carry a JWT access token (RFC 9068) as
// a bearer token, checking it as an OAuth 2.1 resource server must (OAuth
// 2.1 §5.2; MCP authorization):
//
//   - the signature, with a key of the [JWKS] chosen by the token's kid.
//     The algorithm is pinned to the key: RS256/384/512 and PS256/384/512
//     with RSA keys of 2048 bits or more, ES256 with P-256, ES384 with
//     P-384, and only the JWK's own alg when it names one. "none" and the
//     HMAC algorithms are refused, so a token "signed" with the public key
//     as an HMAC secret is worthless. A crit header is refused (no
//     extension is understood); jku, x5u and jwk headers are ignored.
//   - exp, which must be present, and nbf when present, with Leeway;
//   - iss, equal to the issuer;
//   - aud, which must contain the audience: this server's canonical
//     resource URI (RFC 8707), so a token the authorization server issued
//     for another resource is refused here (the confused-deputy defence
//     MCP requires);
//   - typ, when present: at+jwt (RFC 9068 §4), application/at+jwt, or JWT
//     (which many servers still send); anything else (an ID token's
//     "id_token+jwt", a logout token) is not an access token.
//
// The principal's scopes are the scope claim's space-separated values
// (RFC 9068 §2.2.3) and the scp claim's (an array, or a space-separated
// string as some servers send it); its Subject is sub and its ClientID is
// client_id, else azp. A sub that is present must be a non-empty string;
// a token without one (client credentials) must name its client; a token
// that names neither is refused (docs/design.md §6), as is one whose
// header or claims are not strict JSON (two members of one name, invalid
// UTF-8).
//
// Checking every request's token again is what the stateless protocol
// asks; the signature check is what costs (tens of µs). So a token that
// passed is remembered, by its exact bytes (by their SHA-256 past 4 KiB),
// until its exp (plus the leeway): later requests with the same token cost a map lookup. The
// claims cannot differ between two copies of the same bytes, and iss and
// aud are fixed, so the verdict stands — except that a token verified with
// a key the JWKS has since dropped is checked again (and refused).
//
// A JWT is safe for concurrent use.
type JWT struct {
	issuer, audience string
	keys             *JWKS
	leeway           time.Duration
	parser           *jwt.Parser
	cache            *tokenCache[jwtVerdict]
}

// jwtVerdict is a verified token: its principal, and the key that
// verified it.
type jwtVerdict struct {
	p   *wymcp.Principal
	key *jwk
}

// acceptedAlgs are the JWS algorithms of algKinds, the only ones the
// parser lets through to the key lookup.
var acceptedAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384"}

// NewJWT returns an authenticator of JWT access tokens issued by issuer
// (compared exactly with iss; no trailing-slash normalisation) for
// audience (this server's canonical resource URI, compared exactly with
// the aud values), verified with keys.
//
// It is built on github.com/golang-jwt/jwt/v5 for the JWS parsing,
// signature verification and registered-claim checks, with the key set
// (JWKS) written here on the standard library. Of the two well-kept Go JWT
// libraries it is the one that keeps this library small: it has no
// dependencies of its own and was already in the module graph (through
// the Prometheus client), so choosing it added no module, where
// github.com/lestrrat-go/jwx/v3 would have added ten (its httprc, dsig,
// blackmagic, option, httpcc, segmentio/asm, valyala/fastjson, a secp256k1
// implementation, …) for JWKS fetching we want to bound ourselves anyway.
func NewJWT(issuer, audience string, keys *JWKS, opts *JWTOptions) (*JWT, error) {
	if issuer == "" {
		return nil, errors.New("auth: NewJWT needs the issuer")
	}
	if audience == "" {
		return nil, errors.New("auth: NewJWT needs the audience: this server's resource URI")
	}
	if keys == nil {
		return nil, errors.New("auth: NewJWT needs a JWKS")
	}
	if opts == nil {
		opts = &JWTOptions{}
	}
	leeway := opts.Leeway
	switch {
	case leeway == 0:
		leeway = defaultLeeway
	case leeway < 0:
		leeway = 0
	}
	return &JWT{
		issuer:   issuer,
		audience: audience,
		keys:     keys,
		leeway:   leeway,
		parser: jwt.NewParser(
			jwt.WithValidMethods(acceptedAlgs),
			jwt.WithIssuer(issuer),
			jwt.WithAudience(audience),
			jwt.WithExpirationRequired(),
			jwt.WithLeeway(leeway),
		),
		cache: newTokenCache[jwtVerdict](opts.CacheSize),
	}, nil
}

var (
	_ wymcp.Authenticator = (*JWT)(nil)
	_ wymcp.Readier       = (*JWT)(nil)
)

// Ready reports whether v can verify any token: nil once its JWKS holds a
// key set (see [JWKS.Ready], which it is). A server whose authenticator v
// is answers its readiness probe 503 until then (wymcp.Readier), since
// every call would be answered 503.
func (v *JWT) Ready(ctx context.Context) error { return v.keys.Ready(ctx) }

// Authenticate reads the bearer token of r (see [BearerToken]) and
// verifies it (see [JWT]): it returns the token's principal, or a
// [*wymcp.AuthError]: AuthInvalidToken for a token that fails any check,
// AuthUnavailable when the JWKS could never be fetched. ctx bounds a JWKS
// fetch the check may need.
func (v *JWT) Authenticate(ctx context.Context, r *http.Request) (*wymcp.Principal, error) {
	token, err := bearer(r) // verify checks the token's characters
	if err != nil {
		return nil, err
	}
	return v.verify(ctx, token)
}

// verify checks token (first its syntax, as [BearerToken] does, unless
// the very same token passed before) and returns its principal, or
// Authenticate's refusals.
func (v *JWT) verify(ctx context.Context, token string) (*wymcp.Principal, error) {
	now := time.Now()
	if verdict, ok := v.cache.get(token, now); ok {
		if set := v.keys.current(); set != nil && set.holds(verdict.key) {
			return verdict.p, nil
		}
		v.cache.forget(token)
	}
	if err := checkToken(token); err != nil {
		return nil, err
	}
	if err := strictSegments(token); err != nil {
		return nil, err
	}
	var used *jwk
	parsed, err := v.parser.ParseWithClaims(token, jwt.MapClaims{}, func(t *jwt.Token) (any, error) {
		if typ, ok := t.Header["typ"]; ok {
			s, _ := typ.(string)
			if !accessTokenType(s) {
				return nil, errNotAccessToken
			}
		}
		if _, ok := t.Header["crit"]; ok {
			return nil, errCritical
		}
		var kid string
		if raw, ok := t.Header["kid"]; ok {
			if kid, ok = raw.(string); !ok {
				return nil, errMalformed
			}
		}
		key, err := v.keys.key(ctx, kid, t.Method.Alg())
		if err != nil {
			return nil, err
		}
		used = key
		return key.key, nil
	})
	if err != nil {
		return nil, jwtRefusal(err)
	}
	claims := parsed.Claims.(jwt.MapClaims)
	// golang-jwt makes a time.Time of nbf through int64 and time.Unix,
	// which wrap around past their range: an nbf of 1e300 came out in the
	// distant past and passed. A token valid only after year 9999 is not
	// valid yet.
	if nbf, ok := claims["nbf"].(float64); ok && nbf > maxNumericDate {
		return nil, errNotYetValid
	}
	p, err := principalOf(claims)
	if err != nil {
		return nil, err
	}
	v.cache.put(token, jwtVerdict{p: p, key: used}, p.Expiry.Add(v.leeway))
	return p, nil
}

var (
	errMalformedJWT   = invalid("malformed token", nil)
	errNotYetValid    = invalid("the token is not valid yet", nil)
	errNotAccessToken = invalid("the token is not an access token (typ)", nil)
	errCritical       = invalid("the token has critical header parameters this server does not understand", nil)
)

// accessTokenType reports whether a JWT's typ header names an access
// token; media types are compared case-insensitively (RFC 7515 §4.1.9).
func accessTokenType(typ string) bool {
	switch strings.ToLower(typ) {
	case "at+jwt", "application/at+jwt", "jwt":
		return true
	}
	return false
}

// jwtRefusal turns a failed check into its refusal. The description names
// the check that failed, in fixed words: never the token's own values.
func jwtRefusal(err error) error {
	var ae *wymcp.AuthError
	if errors.As(err, &ae) {
		return ae // the key lookup's or the header checks' own refusal
	}
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return invalid("malformed token", err)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return invalid("invalid token signature or algorithm", err)
	case errors.Is(err, jwt.ErrTokenExpired):
		return invalid("the token has expired", err)
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return invalid("the token is not valid yet", err)
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return invalid("the token was issued for another resource", err)
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return invalid("the token is from another issuer", err)
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return invalid("the token lacks a required claim (exp, iss, aud)", err)
	}
	return invalid("invalid token", err)
}

// principalOf builds the principal of verified claims, or refuses a token
// that does not say who it stands for (see identify).
func principalOf(claims map[string]any) (*wymcp.Principal, error) {
	sub, client, err := identify(claims)
	if err != nil {
		return nil, err
	}
	p := &wymcp.Principal{Subject: sub, ClientID: client, Claims: claims}
	p.Scopes = scopesOf(claims["scope"], claims["scp"])
	if exp, ok := claims["exp"].(float64); ok {
		p.Expiry = time.Unix(int64(exp), 0)
	}
	return p, nil
}

var errNotStrictJSON = invalid("the token's header or claims are not strict JSON (duplicate names, invalid UTF-8)", nil)

// strictSegments refuses a token whose header or payload is not strict
// JSON (internal/strictjson: no two members of one name, valid UTF-8), as
// every JSON wymcp reads must be. golang-jwt decodes them with
// encoding/json, where the last of two sub members wins: a token would
// then say one thing to this server and another to a reader that keeps
// the first (docs/design.md §6). The segments are decoded as golang-jwt
// decodes them (unpadded base64url); one that does not decode is
// malformed.
func strictSegments(token string) error {
	header, rest, ok := strings.Cut(token, ".")
	payload, _, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 {
		return errMalformedJWT
	}
	for _, seg := range [2]string{header, payload} {
		raw, err := base64.RawURLEncoding.DecodeString(seg)
		if err != nil {
			return errMalformedJWT
		}
		if !strictjson.Valid(raw) {
			return errNotStrictJSON
		}
	}
	return nil
}

// scopesOf reads the scopes of a scope claim (a space-separated string,
// RFC 8693 §4.2 and RFC 9068 §2.2.3) and of an scp claim (an array of
// strings, or a space-separated string), each scope once. Values of other
// types grant nothing.
func scopesOf(values ...any) []string {
	var scopes []string
	add := func(s string) {
		if s != "" && !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	for _, v := range values {
		switch v := v.(type) {
		case string:
			for s := range strings.FieldsSeq(v) {
				add(s)
			}
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					add(s)
				}
			}
		}
	}
	return scopes
}

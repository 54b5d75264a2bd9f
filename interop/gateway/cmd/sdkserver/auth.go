package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

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

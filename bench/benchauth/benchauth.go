// Package benchauth is the bench's authorization server in miniature: an
// RSA key, its JWK Set, and RS256 access tokens signed with it, on the
// standard library. The harness signs the token the load generator sends;
// the wymcp-auth server verifies it against the JWK Set, exactly as it
// would verify a token from a real authorization server (oidc-provider
// signs RS256 by default).
package benchauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"time"
)

// The issuer and audience of the bench's tokens. The audience is the
// resource URI the server is configured with; it is compared as a string,
// so it need not be where the server listens.
const (
	Issuer   = "https://as.bench.wymcp.test"
	Audience = "https://mcp.bench.wymcp.test/mcp"
	// JWKSEnv names the environment variable that points the wymcp-auth
	// server at the JWK Set file.
	JWKSEnv = "WYMCP_BENCH_JWKS"
	// Scope is the scope of the bench's tokens.
	Scope = "tools:echo"
)

// Key is a signing key: RS256 (2048-bit RSA) or ES256 (P-256).
type Key struct {
	rsa *rsa.PrivateKey
	ec  *ecdsa.PrivateKey
	alg string
	kid string
}

// NewKey makes an RS256 key, the algorithm authorization servers sign
// with by default.
func NewKey() (*Key, error) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	return &Key{rsa: priv, alg: "RS256", kid: "bench-rs256"}, nil
}

// NewECKey makes an ES256 key.
func NewECKey() (*Key, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &Key{ec: priv, alg: "ES256", kid: "bench-es256"}, nil
}

// JWKS returns the key's public JWK Set document.
func (k *Key) JWKS() []byte {
	b64 := base64.RawURLEncoding.EncodeToString
	jwk := map[string]any{"kid": k.kid, "alg": k.alg, "use": "sig"}
	if k.rsa != nil {
		jwk["kty"], jwk["n"], jwk["e"] = "RSA", b64(k.rsa.N.Bytes()), b64(big.NewInt(int64(k.rsa.E)).Bytes())
	} else {
		jwk["kty"], jwk["crv"] = "EC", "P-256"
		jwk["x"], jwk["y"] = b64(k.ec.X.FillBytes(make([]byte, 32))), b64(k.ec.Y.FillBytes(make([]byte, 32)))
	}
	doc, _ := json.Marshal(map[string]any{"keys": []any{jwk}})
	return doc
}

// Token returns an at+jwt access token for Audience from Issuer, with
// Scope, valid for ttl.
func (k *Key) Token(ttl time.Duration) (string, error) {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	now := time.Now()
	input := enc(map[string]any{"alg": k.alg, "typ": "at+jwt", "kid": k.kid}) + "." + enc(map[string]any{
		"iss": Issuer, "aud": Audience, "sub": "loadgen", "client_id": "loadgen", "scope": Scope,
		"iat": now.Unix(), "exp": now.Add(ttl).Unix(),
	})
	sum := sha256.Sum256([]byte(input))
	var sig []byte
	if k.rsa != nil {
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k.rsa, crypto.SHA256, sum[:]); err != nil {
			return "", err
		}
	} else {
		r, s, err := ecdsa.Sign(rand.Reader, k.ec, sum[:])
		if err != nil {
			return "", err
		}
		// RFC 7518 §3.4: r and s, 32 bytes each.
		sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

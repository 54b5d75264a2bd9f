package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/wymcp/wymcp/internal/strictjson"
)

// minRSABits is the smallest RSA modulus a JWK may have: NIST has
// disallowed smaller keys for signatures since 2013, and RFC 7518 §3.3
// requires 2048 bits for RS256.
const minRSABits = 2048

// keyKind is what a public key can verify.
type keyKind uint8

const (
	kindRSA  keyKind = iota + 1 // RS256/384/512, PS256/384/512
	kindP256                    // ES256
	kindP384                    // ES384
)

// algKinds pins each accepted JWS algorithm to the one kind of key that
// may verify it (RFC 7518 §3.1). HMAC algorithms are absent: a resource
// server holds no shared secret, and accepting HS256 is how a public RSA
// key, used as an HMAC secret, forges tokens (the "key confusion"
// attack). "none" is absent too. EdDSA is left out: neither RFC 9068 nor
// the authorization servers MCP deployments use issue it today.
var algKinds = map[string]keyKind{
	"RS256": kindRSA, "RS384": kindRSA, "RS512": kindRSA,
	"PS256": kindRSA, "PS384": kindRSA, "PS512": kindRSA,
	"ES256": kindP256, "ES384": kindP384,
}

// jwk is one verification key of a set.
type jwk struct {
	kid  string
	alg  string // the JWK's own alg member; "" when it names none
	kind keyKind
	key  any // *rsa.PublicKey or *ecdsa.PublicKey
	// material identifies the key's value, so that a refreshed set keeps
	// the same *jwk for an unchanged key (and tokens verified with it stay
	// cached) while a changed or dropped one is told apart.
	material string
}

// verifies reports whether k may verify a token signed with alg: the
// algorithm's key kind must be k's, and a JWK that names its algorithm
// (RFC 7517 §4.4) is used for that one only.
func (k *jwk) verifies(alg string) bool {
	kind, ok := algKinds[alg]
	return ok && kind == k.kind && (k.alg == "" || k.alg == alg)
}

// rawJWK holds the members of a JWK that matter here (RFC 7517 §4,
// RFC 7518 §6).
type rawJWK struct {
	Kty    string   `json:"kty"`
	Kid    string   `json:"kid"`
	Alg    string   `json:"alg"`
	Use    string   `json:"use"`
	KeyOps []string `json:"key_ops"`
	N      string   `json:"n"`
	E      string   `json:"e"`
	Crv    string   `json:"crv"`
	X      string   `json:"x"`
	Y      string   `json:"y"`
	D      string   `json:"d"`
}

// parseKeySet reads a JWK Set document (RFC 7517 §5). Keys this server
// cannot or must not verify with are skipped, not refused, since a set
// legitimately holds encryption keys and key types of other servers'
// choosing: symmetric ("oct") keys, use "enc", key_ops without "verify",
// unknown key types and curves, algorithms outside algKinds, RSA keys
// under 2048 bits. A key with private members is refused along with the
// whole set: someone published a private key, and nothing signed with it
// can be trusted. More than maxKeys keys is refused too.
func parseKeySet(doc []byte, maxKeys int) (map[string][]*jwk, int, error) {
	var set struct {
		Keys []rawJWK `json:"keys"`
	}
	if err := strictjson.Unmarshal(doc, &set); err != nil {
		return nil, 0, fmt.Errorf("JWKS is not a JWK Set document: %w", err)
	}
	if set.Keys == nil {
		return nil, 0, errors.New(`JWKS has no "keys" array`)
	}
	if len(set.Keys) > maxKeys {
		return nil, 0, fmt.Errorf("JWKS holds %d keys, more than the %d allowed", len(set.Keys), maxKeys)
	}
	byKid := map[string][]*jwk{}
	n := 0
	for i := range set.Keys {
		raw := &set.Keys[i]
		if raw.D != "" {
			return nil, 0, fmt.Errorf("JWKS key %q holds a private key", raw.Kid)
		}
		if (raw.Use != "" && raw.Use != "sig") || (raw.KeyOps != nil && !slices.Contains(raw.KeyOps, "verify")) {
			continue
		}
		k, err := parseKey(raw)
		if err != nil || k == nil {
			continue // a key we do not verify with; see above
		}
		byKid[k.kid] = append(byKid[k.kid], k)
		n++
	}
	return byKid, n, nil
}

// parseKey returns the verification key of raw, nil for a key type this
// server does not verify with.
func parseKey(raw *rawJWK) (*jwk, error) {
	if raw.Alg != "" {
		if _, ok := algKinds[raw.Alg]; !ok {
			return nil, nil
		}
	}
	k := &jwk{kid: raw.Kid, alg: raw.Alg}
	switch raw.Kty {
	case "RSA":
		n, err := b64Int(raw.N)
		if err != nil {
			return nil, err
		}
		e, err := b64Int(raw.E)
		if err != nil {
			return nil, err
		}
		if n.BitLen() < minRSABits {
			return nil, fmt.Errorf("RSA key of %d bits", n.BitLen())
		}
		// Public exponents are small odd numbers (65537 nearly always);
		// crypto/rsa refuses others when verifying anyway.
		if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0 {
			return nil, errors.New("bad RSA exponent")
		}
		k.kind, k.key = kindRSA, &rsa.PublicKey{N: n, E: int(e.Int64())}
		k.material = "RSA:" + raw.N + ":" + raw.E
	case "EC":
		var curve elliptic.Curve
		switch raw.Crv {
		case "P-256":
			curve, k.kind = elliptic.P256(), kindP256
		case "P-384":
			curve, k.kind = elliptic.P384(), kindP384
		default:
			return nil, nil
		}
		size := (curve.Params().BitSize + 7) / 8
		x, err1 := base64.RawURLEncoding.DecodeString(raw.X)
		y, err2 := base64.RawURLEncoding.DecodeString(raw.Y)
		if err1 != nil || err2 != nil || len(x) != size || len(y) != size {
			return nil, errors.New("bad EC coordinates")
		}
		// ParseUncompressedPublicKey checks that the point is on the
		// curve: an off-curve point is an invalid-curve attack.
		point := append(append([]byte{4}, x...), y...)
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, point)
		if err != nil {
			return nil, err
		}
		k.key = pub
		k.material = "EC:" + raw.Crv + ":" + raw.X + ":" + raw.Y
	default:
		return nil, nil // "oct" (HMAC), "OKP" and others
	}
	if raw.Alg != "" && algKinds[raw.Alg] != k.kind {
		return nil, nil // a JWK whose alg does not fit its own key
	}
	return k, nil
}

// b64Int decodes a base64url (no padding) big-endian unsigned integer.
func b64Int(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, errors.New("bad base64url integer")
	}
	return new(big.Int).SetBytes(b), nil
}

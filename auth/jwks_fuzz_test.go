package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
)

// FuzzParseJWKS: arbitrary JWK Set documents. ParseJWKS never panics, and
// what it keeps is exactly what a model written here from RFC 7517/7518
// and parseKeySet's doc comment keeps, key for key, the documents read
// with encoding/json:
//
//   - a set of more than defaultMaxJWKSKeys keys, or one holding a private
//     key (a non-empty "d"), is refused whole;
//   - a key is kept when its use is sig (or absent), its key_ops (when
//     present) include verify, and it is RSA with a modulus of at least
//     2048 bits and a small odd exponent, or EC on P-256 or P-384 with
//     coordinates of the curve's size that are on the curve (checked here
//     with math/big, and by crypto/ecdh); and its alg, when it names one,
//     is one the key's type may verify (RS*/PS* for RSA, ES256 for P-256,
//     ES384 for P-384);
//   - every kept key is filed under its kid, verifies exactly the
//     algorithms of its pairing, and is a public key the standard
//     library accepts;
//   - ParseJWKS succeeds exactly when parseKeySet keeps at least one key.
//
// A kept key need not have a kid: the doc comment of keySet.find lets a
// set's one key for an algorithm verify tokens without kid.
func FuzzParseJWKS(f *testing.F) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		f.Fatal(err)
	}
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	enc := base64.RawURLEncoding.EncodeToString
	n, e := enc(rsaKey.N.Bytes()), "AQAB"
	coords := func(k *ecdsa.PrivateKey) (string, string) {
		size := (k.Curve.Params().BitSize + 7) / 8
		return enc(k.X.FillBytes(make([]byte, size))), enc(k.Y.FillBytes(make([]byte, size)))
	}
	x256, y256 := coords(p256)
	x384, y384 := coords(p384)
	offCurve := enc(make([]byte, 32))
	keys := func(members ...string) string { return `{"keys":[` + strings.Join(members, ",") + `]}` }
	rsaJWK := func(extra string) string {
		return `{"kty":"RSA","kid":"r","n":"` + n + `","e":"` + e + `"` + extra + `}`
	}
	ecJWK := func(crv, x, y, extra string) string {
		return `{"kty":"EC","kid":"e","crv":"` + crv + `","x":"` + x + `","y":"` + y + `"` + extra + `}`
	}
	many := make([]string, defaultMaxJWKSKeys+1)
	for i := range many {
		many[i] = `{"kty":"oct"}`
	}
	valid := keys(rsaJWK(`,"alg":"RS256","use":"sig"`), ecJWK("P-256", x256, y256, `,"alg":"ES256"`), ecJWK("P-384", x384, y384, ""))
	if _, n, err := parseKeySet([]byte(valid), defaultMaxJWKSKeys); n != 3 || err != nil {
		f.Fatalf("the valid seed: %d keys, %v", n, err)
	}
	for _, doc := range []string{
		valid,
		keys(rsaJWK(`,"alg":"PS512","key_ops":["verify"]`)),
		keys(rsaJWK(`,"alg":"ES256"`)),
		keys(rsaJWK(`,"alg":"HS256"`)),
		keys(rsaJWK(`,"use":"enc"`)),
		keys(rsaJWK(`,"key_ops":["encrypt"]`)),
		keys(rsaJWK(`,"key_ops":null,"use":null`)),
		keys(rsaJWK(`,"d":"AQAB"`)),
		keys(rsaJWK(`,"d":""`)),
		keys(`{"kty":"RSA","n":"` + n + `","e":"AQAB"}`),
		keys(`{"kty":"RSA","kid":"small","n":"` + enc(rsaKey.N.Bytes()[:128]) + `","e":"AQAB"}`),
		keys(`{"kty":"RSA","kid":"even","n":"` + n + `","e":"AQAA"}`),
		keys(`{"kty":"RSA","kid":"big-e","n":"` + n + `","e":"` + enc(big.NewInt(1<<31+1).Bytes()) + `"}`),
		keys(`{"kty":"RSA","kid":"padded","n":"` + n + `=","e":"AQAB"}`),
		keys(`{"kty":"RSA","kid":"std","n":"` + strings.NewReplacer("-", "+", "_", "/").Replace(n) + `","e":"AQAB"}`),
		keys(`{"kty":"RSA","kid":"zeros","n":"AAAA` + n + `","e":"AAAAAQAB"}`),
		keys(ecJWK("P-256", x384, y384, "")),
		keys(ecJWK("P-384", x256, y256, `,"alg":"ES256"`)),
		keys(ecJWK("P-256", x256, y256, `,"alg":"ES384"`)),
		keys(ecJWK("P-256", offCurve, offCurve, "")),
		keys(ecJWK("P-256", x256, x256, "")),
		keys(ecJWK("P-256", enc(elliptic.P256().Params().P.Bytes()), y256, "")),
		keys(ecJWK("P-521", "AA", "AA", "")),
		keys(`{"kty":"oct","kid":"h","k":"c2VjcmV0"}`, `{"kty":"OKP","crv":"Ed25519","x":"AA"}`),
		keys(rsaJWK(""), rsaJWK(""), ecJWK("P-256", x256, y256, `,"kid":"r"`)),
		keys(many...),
		keys(many[1:]...),
		`{"keys":[],"keys":[]}`,
		`{"keys":null}`,
		`{"keys":[null]}`,
		`{"keys":[1]}`,
		`{"keys":[{"kty":"RSA","kid":5}]}`,
		`{"Keys":[` + rsaJWK("") + `],"keys":[]}`,
		`{"keys":[{"KTY":"RSA","kty":"EC"}]}`,
		`{}`,
		`[]`,
		``,
		`{"keys":[` + rsaJWK("") + `]} x`,
	} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		set, perr := ParseJWKS(doc)
		byKid, n, err := parseKeySet(doc, defaultMaxJWKSKeys)
		if (perr == nil) != (err == nil && n > 0) {
			t.Fatalf("ParseJWKS: %v; parseKeySet: %d keys, %v", perr, n, err)
		}
		if err != nil {
			return
		}
		if set != nil && len(set.current().byKid) != len(byKid) {
			t.Fatalf("ParseJWKS keeps %d kids, parseKeySet %d", len(set.current().byKid), len(byKid))
		}

		// What was kept.
		var got []string
		for kid, ks := range byKid {
			for _, k := range ks {
				if k.kid != kid {
					t.Fatalf("key of kid %q filed under %q", k.kid, kid)
				}
				checkKept(t, k)
				got = append(got, k.kid+"|"+k.alg+"|"+k.material)
			}
		}
		if len(got) != n || n > defaultMaxJWKSKeys {
			t.Fatalf("parseKeySet counts %d keys, holds %d (at most %d)", n, len(got), defaultMaxJWKSKeys)
		}

		// What the model keeps, from the document as encoding/json reads
		// it (names compared exactly: the map, not a struct, whose field
		// matching would fold case).
		var top map[string]json.RawMessage
		if err := json.Unmarshal(doc, &top); err != nil {
			t.Fatalf("parseKeySet read a document encoding/json refuses: %v", err)
		}
		var entries []any
		if err := json.Unmarshal(top["keys"], &entries); err != nil || entries == nil {
			t.Fatalf("parseKeySet read a set without a keys array: %s", top["keys"])
		}
		if len(entries) > defaultMaxJWKSKeys {
			t.Fatalf("a set of %d keys was read", len(entries))
		}
		var want []string
		for _, entry := range entries {
			m, _ := entry.(map[string]any)
			if d, _ := m["d"].(string); d != "" {
				t.Fatalf("a set with a private key was read: %s", doc)
			}
			if id, ok := modelKey(m); ok {
				want = append(want, id)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("kept %q, the model keeps %q", got, want)
		}
	})
}

// checkKept re-checks a kept key with the standard library and its
// algorithm pairing.
func checkKept(t *testing.T, k *jwk) {
	t.Helper()
	switch pub := k.key.(type) {
	case *rsa.PublicKey:
		if k.kind != kindRSA || pub.N.BitLen() < minRSABits || pub.E < 3 || pub.E%2 == 0 {
			t.Fatalf("kept RSA key: kind %d, %d bits, e %d", k.kind, pub.N.BitLen(), pub.E)
		}
	case *ecdsa.PublicKey:
		want := map[keyKind]elliptic.Curve{kindP256: elliptic.P256(), kindP384: elliptic.P384()}[k.kind]
		if want == nil || pub.Curve != want {
			t.Fatalf("kept EC key: kind %d on %v", k.kind, pub.Curve.Params().Name)
		}
		if _, err := pub.ECDH(); err != nil {
			t.Fatalf("kept EC key crypto/ecdh refuses: %v", err)
		}
	default:
		t.Fatalf("kept a key of type %T", k.key)
	}
	if k.alg != "" && algKinds[k.alg] != k.kind {
		t.Fatalf("kept a %d key naming alg %q", k.kind, k.alg)
	}
	pairs := map[keyKind][]string{
		kindRSA:  {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"},
		kindP256: {"ES256"},
		kindP384: {"ES384"},
	}
	for _, alg := range []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "HS256", "none", "EdDSA", ""} {
		want := slices.Contains(pairs[k.kind], alg) && (k.alg == "" || k.alg == alg)
		if k.verifies(alg) != want {
			t.Fatalf("key (kind %d, alg %q) verifies %s: %v", k.kind, k.alg, alg, !want)
		}
	}
}

// modelKey decides, from RFC 7517/7518 and the documented skips, whether
// a JWK (as encoding/json decodes it) is a verification key to keep, and
// returns its kid, alg and value.
func modelKey(m map[string]any) (string, bool) {
	str := func(name string) string { s, _ := m[name].(string); return s }
	if use := str("use"); use != "" && use != "sig" {
		return "", false
	}
	if ops, ok := m["key_ops"].([]any); ok && !slices.Contains(ops, any("verify")) {
		return "", false
	}
	alg := str("alg")
	id := func(material string) string { return str("kid") + "|" + alg + "|" + material }
	switch str("kty") {
	case "RSA":
		if alg != "" && !slices.Contains([]string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}, alg) {
			return "", false
		}
		nb, err1 := base64.RawURLEncoding.DecodeString(str("n"))
		eb, err2 := base64.RawURLEncoding.DecodeString(str("e"))
		if err1 != nil || err2 != nil || len(nb) == 0 || len(eb) == 0 {
			return "", false
		}
		n, e := new(big.Int).SetBytes(nb), new(big.Int).SetBytes(eb)
		if n.BitLen() < 2048 || e.Cmp(big.NewInt(3)) < 0 || e.Cmp(big.NewInt(1<<31-1)) > 0 || e.Bit(0) == 0 {
			return "", false
		}
		return id(fmt.Sprintf("RSA:%s:%s", str("n"), str("e"))), true
	case "EC":
		var curve elliptic.Curve
		switch str("crv") {
		case "P-256":
			curve = elliptic.P256()
			if alg != "" && alg != "ES256" {
				return "", false
			}
		case "P-384":
			curve = elliptic.P384()
			if alg != "" && alg != "ES384" {
				return "", false
			}
		default:
			return "", false
		}
		params := curve.Params()
		size := (params.BitSize + 7) / 8
		xb, err1 := base64.RawURLEncoding.DecodeString(str("x"))
		yb, err2 := base64.RawURLEncoding.DecodeString(str("y"))
		if err1 != nil || err2 != nil || len(xb) != size || len(yb) != size {
			return "", false
		}
		x, y := new(big.Int).SetBytes(xb), new(big.Int).SetBytes(yb)
		if x.Cmp(params.P) >= 0 || y.Cmp(params.P) >= 0 {
			return "", false
		}
		// y² = x³ - 3x + b (mod p): the short Weierstrass form of the
		// NIST curves.
		lhs := new(big.Int).Mul(y, y)
		lhs.Mod(lhs, params.P)
		rhs := new(big.Int).Mul(x, x)
		rhs.Mul(rhs, x)
		rhs.Sub(rhs, new(big.Int).Mul(big.NewInt(3), x))
		rhs.Add(rhs, params.B)
		rhs.Mod(rhs, params.P)
		if lhs.Cmp(rhs) != 0 {
			return "", false
		}
		return id(fmt.Sprintf("EC:%s:%s:%s", str("crv"), str("x"), str("y"))), true
	}
	return "", false
}

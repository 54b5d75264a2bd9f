package auth_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
)

// The fuzz targets' keys must be the same in every process of a fuzzing
// run: the coordinator signs the seed tokens and its workers verify them.
// crypto/rand-made keys differ per process (and Go 1.26's key generation
// ignores a caller's reader), so they are derived here from fixed seeds:
// test keys, worthless outside this file.
var fuzzKeys = sync.OnceValue(func() struct {
	rsa  *rsa.PrivateKey
	p256 *ecdsa.PrivateKey
	p384 *ecdsa.PrivateKey
} {
	k := struct {
		rsa  *rsa.PrivateKey
		p256 *ecdsa.PrivateKey
		p384 *ecdsa.PrivateKey
	}{rsa: deterministicRSA("wymcp auth fuzz RSA")}
	k.p256 = deterministicEC(elliptic.P256(), "wymcp auth fuzz P-256")
	k.p384 = deterministicEC(elliptic.P384(), "wymcp auth fuzz P-384")
	return k
})

// deterministicRSA returns a 2048-bit RSA key (e = 65537) whose primes are
// drawn from a ChaCha8 stream seeded with label.
func deterministicRSA(label string) *rsa.PrivateKey {
	rng := rand.NewChaCha8(sha256.Sum256([]byte(label)))
	e := big.NewInt(65537)
	one := big.NewInt(1)
	prime := func() *big.Int {
		buf := make([]byte, 128)
		for {
			_, _ = rng.Read(buf)
			buf[0] |= 0xc0 // two top bits: the product has 2048 bits
			buf[len(buf)-1] |= 1
			p := new(big.Int).SetBytes(buf)
			if p.ProbablyPrime(20) && new(big.Int).GCD(nil, nil, e, new(big.Int).Sub(p, one)).Cmp(one) == 0 {
				return p
			}
		}
	}
	p, q := prime(), prime()
	phi := new(big.Int).Mul(new(big.Int).Sub(p, one), new(big.Int).Sub(q, one))
	key := &rsa.PrivateKey{
		PublicKey: rsa.PublicKey{N: new(big.Int).Mul(p, q), E: 65537},
		D:         new(big.Int).ModInverse(e, phi),
		Primes:    []*big.Int{p, q},
	}
	key.Precompute()
	if err := key.Validate(); err != nil {
		panic(err)
	}
	return key
}

// deterministicEC returns the key on curve whose scalar is a hash of label.
func deterministicEC(curve elliptic.Curve, label string) *ecdsa.PrivateKey {
	size := (curve.Params().BitSize + 7) / 8
	h := sha256.Sum256([]byte(label))
	d := bytes.Repeat(h[:], 2)[:size]
	d[0] &= 0x7f // below the order
	key, err := ecdsa.ParseRawPrivateKey(curve, d)
	if err != nil {
		panic(err)
	}
	return key
}

// fuzzJWK is a key of the fuzz targets' JWKS, with the algorithms its JWK
// lets it verify.
type fuzzJWK struct {
	kid  string
	algs []string
	pub  any
}

// fuzzJWKS is the fixed set FuzzJWTVerify verifies against: an RSA key
// that names RS256, the same RSA key under another kid without alg (so
// any RS* and PS*), a P-256 and a P-384 key, and a symmetric key the
// parser must skip.
func fuzzJWKS() ([]byte, []fuzzJWK) {
	k := fuzzKeys()
	rsaPub := map[string]any{"kty": "RSA", "n": b64(k.rsa.N.Bytes()), "e": "AQAB"}
	ec := func(key *ecdsa.PrivateKey, crv string) map[string]any {
		size := (key.Curve.Params().BitSize + 7) / 8
		return map[string]any{"kty": "EC", "crv": crv,
			"x": b64(key.X.FillBytes(make([]byte, size))), "y": b64(key.Y.FillBytes(make([]byte, size)))}
	}
	with := func(m map[string]any, kv ...string) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	doc, err := json.Marshal(map[string]any{"keys": []any{
		with(rsaPub, "kid", "rs", "alg", "RS256", "use", "sig"),
		with(rsaPub, "kid", "rs-any"),
		with(ec(k.p256, "P-256"), "kid", "es", "alg", "ES256"),
		with(ec(k.p384, "P-384"), "kid", "es384"),
		map[string]any{"kty": "oct", "kid": "hmac", "k": b64([]byte("fuzz-secret"))},
	}})
	if err != nil {
		panic(err)
	}
	return doc, []fuzzJWK{
		{kid: "rs", algs: []string{"RS256"}, pub: &k.rsa.PublicKey},
		{kid: "rs-any", algs: []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}, pub: &k.rsa.PublicKey},
		{kid: "es", algs: []string{"ES256"}, pub: &k.p256.PublicKey},
		{kid: "es384", algs: []string{"ES384"}, pub: &k.p384.PublicKey},
	}
}

// Fixed claims, so that a seed's signing input is the same bytes in every
// process: exp far ahead, in 2100.
const (
	fuzzIat = 1700000000
	fuzzExp = 4102444800
)

func fuzzClaims(edit func(jwt.MapClaims)) jwt.MapClaims {
	c := jwt.MapClaims{"iss": testIssuer, "aud": testAudience, "sub": "user-42", "client_id": "mcp-client",
		"iat": fuzzIat, "exp": fuzzExp, "scope": "tools:echo"}
	if edit != nil {
		edit(c)
	}
	return c
}

// fuzzSign signs claims with key under alg; header entries are set (nil
// deletes one).
func fuzzSign(alg string, key any, c jwt.MapClaims, header map[string]any) string {
	tok := jwt.NewWithClaims(jwt.GetSigningMethod(alg), c)
	tok.Header["typ"] = "at+jwt"
	for h, v := range header {
		if v == nil {
			delete(tok.Header, h)
		} else {
			tok.Header[h] = v
		}
	}
	s, err := tok.SignedString(key)
	if err != nil {
		panic(err)
	}
	return s
}

// jwtDescriptions are the error_description texts a JWT refusal may
// carry: fixed words, never the token's own values.
var jwtDescriptions = map[string]bool{
	"malformed bearer token":                           true,
	"malformed token":                                  true,
	"invalid token":                                    true,
	"invalid token signature or algorithm":             true,
	"the token has expired":                            true,
	"the token is not valid yet":                       true,
	"the token was issued for another resource":        true,
	"the token is from another issuer":                 true,
	"the token lacks a required claim (exp, iss, aud)": true,
	"the token is not an access token (typ)":           true,
	"the token has critical header parameters this server does not understand":          true,
	"the token's signing key is unknown":                                                true,
	"the token's header or claims are not strict JSON (duplicate names, invalid UTF-8)": true,
	"the token's subject (sub) is not a non-empty string":                               true,
	"the token's client (client_id, azp) is not a non-empty string":                     true,
	"the token names no subject or client (sub, client_id, azp)":                        true,
}

// FuzzJWTVerify: arbitrary token strings against a JWT verifier with a
// fixed in-memory JWKS (ParseJWKS: no network). Verify never panics, and:
//
//   - it accepts only what the test's own keys signed: the signing input
//     of an accepted token is one the test signed, its signature verifies
//     with crypto/rsa or crypto/ecdsa directly under a key of the set that
//     allows the header's alg, and that alg is one of RS/PS/ES (never
//     none, never HMAC);
//   - an accepted token's claims, read here with encoding/json, pass the
//     checks themselves: iss, aud naming the audience, exp present and
//     not past (with the leeway), nbf not ahead, typ an access token's,
//     no crit; the principal is the one the claims name;
//   - a refusal is a *wymcp.AuthError, invalid_token (or invalid_request),
//     with one of the fixed descriptions;
//   - the same token twice gets the same verdict (the second from the
//     verified-token cache when the first passed).
func FuzzJWTVerify(f *testing.F) {
	doc, keys := fuzzJWKS()
	set, err := auth.ParseJWKS(doc)
	if err != nil {
		f.Fatal(err)
	}
	v, err := auth.NewJWT(testIssuer, testAudience, set, nil)
	if err != nil {
		f.Fatal(err)
	}
	k := fuzzKeys()

	// Every token the test signs with its keys, valid or not, and its
	// signing input: only these may ever be accepted.
	signed := map[string]bool{}
	seed := func(tok string) {
		if i := strings.LastIndexByte(tok, '.'); i > 0 {
			signed[tok[:i]] = true
		}
		f.Add(tok)
	}
	rsHdr := map[string]any{"kid": "rs"}
	valid := fuzzSign("RS256", k.rsa, fuzzClaims(nil), rsHdr)
	ctx := context.Background()
	for _, tok := range []string{
		valid,
		fuzzSign("PS256", k.rsa, fuzzClaims(nil), map[string]any{"kid": "rs-any"}),
		fuzzSign("RS512", k.rsa, fuzzClaims(nil), map[string]any{"kid": "rs-any", "typ": "JWT"}),
		fuzzSign("ES256", k.p256, fuzzClaims(nil), map[string]any{"kid": "es"}),
		fuzzSign("ES256", k.p256, fuzzClaims(nil), map[string]any{"typ": nil}), // no kid: the one P-256 key
		fuzzSign("ES384", k.p384, fuzzClaims(func(c jwt.MapClaims) { c["aud"] = []string{"x", testAudience} }), map[string]any{"kid": "es384"}),
		fuzzSign("RS256", k.rsa, fuzzClaims(func(c jwt.MapClaims) { c["scp"] = []string{"a", "b"}; delete(c, "sub") }), rsHdr),
	} {
		// The valid seeds pass, or the target would explore refusals only.
		if _, err := v.Verify(ctx, tok); err != nil {
			f.Fatalf("a valid seed is refused: %v", err)
		}
		seed(tok)
	}
	// Signed by the test's keys, and refused for their claims or header.
	for _, tok := range []string{
		fuzzSign("RS256", k.rsa, fuzzClaims(func(c jwt.MapClaims) { c["exp"] = 1600000000 }), rsHdr),
		fuzzSign("RS256", k.rsa, fuzzClaims(func(c jwt.MapClaims) { delete(c, "exp") }), rsHdr),
		fuzzSign("RS256", k.rsa, fuzzClaims(func(c jwt.MapClaims) { c["exp"] = "4102444800" }), rsHdr),
		fuzzSign("RS256", k.rsa, fuzzClaims(func(c jwt.MapClaims) { c["exp"] = 1e300 }), rsHdr),
		fuzzSign("RS256", k.rsa, fuzzClaims(func(c jwt.MapClaims) { c["nbf"] = 4000000000 }), rsHdr),
		fuzzSign("RS256", k.rsa, fuzzClaims(func(c jwt.MapClaims) { c["nbf"] = 1e300 }), rsHdr),
		fuzzSign("RS256", k.rsa, fuzzClaims(func(c jwt.MapClaims) { c["nbf"] = 9223372000000000000 }), rsHdr),
		fuzzSign("ES256", k.p256, fuzzClaims(func(c jwt.MapClaims) { c["nbf"] = 1e19 }), map[string]any{"kid": "es"}),
		fuzzSign("RS256", k.rsa, fuzzClaims(func(c jwt.MapClaims) { c["exp"] = 9223372000000000000 }), rsHdr),
		fuzzSign("RS256", k.rsa, fuzzClaims(func(c jwt.MapClaims) { c["aud"] = testAudience + "/" }), rsHdr),
		fuzzSign("RS256", k.rsa, fuzzClaims(func(c jwt.MapClaims) { delete(c, "aud") }), rsHdr),
		fuzzSign("RS256", k.rsa, fuzzClaims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example.test" }), rsHdr),
		fuzzSign("RS256", k.rsa, fuzzClaims(nil), map[string]any{"kid": "rs", "typ": "dpop+jwt"}),
		fuzzSign("RS256", k.rsa, fuzzClaims(nil), map[string]any{"kid": "rs", "crit": []string{"exp"}}),
		fuzzSign("RS256", k.rsa, fuzzClaims(nil), map[string]any{"kid": 7}),
		fuzzSign("RS256", k.rsa, fuzzClaims(nil), map[string]any{"kid": "es"}),     // RSA under the EC key's kid
		fuzzSign("PS256", k.rsa, fuzzClaims(nil), rsHdr),                           // the JWK names RS256
		fuzzSign("ES384", k.p384, fuzzClaims(nil), map[string]any{"kid": "es"}),    // not the P-256 key
		fuzzSign("ES256", k.p256, fuzzClaims(nil), map[string]any{"kid": "es384"}), // not the P-384 key
		fuzzSign("RS256", k.rsa, fuzzClaims(nil), map[string]any{"kid": nil}),      // two RSA keys: no kid names neither
	} {
		if _, err := v.Verify(ctx, tok); err == nil {
			f.Fatalf("an invalid seed is accepted: %q", tok)
		}
		seed(tok)
	}

	// Not signed by the test's keys.
	pub, err := x509.MarshalPKIXPublicKey(&k.rsa.PublicKey)
	if err != nil {
		f.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	parts := strings.Split(valid, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	for _, tok := range []string{
		fuzzSign("none", jwt.UnsafeAllowNoneSignatureType, fuzzClaims(nil), rsHdr),
		fuzzSign("none", jwt.UnsafeAllowNoneSignatureType, fuzzClaims(nil), rsHdr) + parts[2],
		fuzzSign("HS256", pubPEM, fuzzClaims(nil), rsHdr), // the public key as an HMAC secret
		fuzzSign("HS256", k.rsa.N.Bytes(), fuzzClaims(nil), rsHdr),
		fuzzSign("HS256", []byte("fuzz-secret"), fuzzClaims(nil), map[string]any{"kid": "hmac"}),
		b64([]byte(`{"alg":"none","kid":"rs"}`)) + "." + parts[1] + ".",
		b64([]byte(`{"alg":"RS256","alg":"none","kid":"rs"}`)) + "." + parts[1] + "." + parts[2],
		b64([]byte(`{"alg":"RS256","kid":"rs"}`)) + "." + parts[1] + "." + parts[2],
		parts[0] + "." + b64(bytes.Replace(payload, []byte("tools:echo"), []byte("tools:root"), 1)) + "." + parts[2],
		valid[:len(valid)-1],
		valid[:len(valid)/2],
		valid + ".",
		valid + "." + parts[2],
		parts[0] + ".." + parts[1] + "." + parts[2],
		parts[0] + "." + parts[1],
		parts[0] + "=." + parts[1] + "." + parts[2],
		strings.ReplaceAll(valid, "-", "+"),
		valid + "==",
		"..",
		"a.b.c",
		"",
		" " + valid,
		parts[0] + "." + strings.Repeat("A", auth.MaxTokenBytes-len(parts[0])-len(parts[2])-2) + "." + parts[2],
		parts[0] + "." + strings.Repeat("A", auth.MaxTokenBytes) + "." + parts[2],
		b64(bytes.Repeat([]byte("["), 5000)) + "." + parts[1] + "." + parts[2],
	} {
		f.Add(tok)
	}

	f.Fuzz(func(t *testing.T, token string) {
		before := time.Now()
		p, err := v.Verify(ctx, token)
		p2, err2 := v.Verify(ctx, token)
		if (err == nil) != (err2 == nil) || p != p2 && (p == nil || p2 == nil || p.Subject != p2.Subject || !p.Expiry.Equal(p2.Expiry)) {
			t.Fatalf("the same token twice: %v, %v then %v, %v", p, err, p2, err2)
		}
		if err != nil {
			if p != nil {
				t.Fatalf("Verify returned a principal with the error %v", err)
			}
			var ae *wymcp.AuthError
			if !errors.As(err, &ae) || ae != err {
				t.Fatalf("Verify error %T %v, want a *wymcp.AuthError", err, err)
			}
			if ae.Code != wymcp.AuthInvalidToken && ae.Code != wymcp.AuthInvalidRequest {
				t.Fatalf("Verify refused with %v, want invalid_token or invalid_request", ae.Code)
			}
			if !jwtDescriptions[ae.Description] {
				t.Fatalf("Verify's description %q is not one of the fixed texts", ae.Description)
			}
			return
		}
		if p == nil {
			t.Fatal("Verify accepted with a nil principal")
		}
		checkAccepted(t, token, p, keys, signed, before)
	})
}

// checkAccepted asserts that an accepted token was signed by the test's
// keys and that its claims pass every check, read independently.
func checkAccepted(t *testing.T, token string, p *wymcp.Principal, keys []fuzzJWK, signed map[string]bool, now time.Time) {
	t.Helper()
	if len(token) > auth.MaxTokenBytes || !token68(token) {
		t.Fatalf("accepted a token that is not a token68 of at most MaxTokenBytes: %q", token)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("accepted a token of %d parts", len(parts))
	}
	input := parts[0] + "." + parts[1]
	if !signed[input] {
		t.Fatalf("accepted a token the test never signed: %q", token)
	}
	var header map[string]any
	rawHeader, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || json.Unmarshal(rawHeader, &header) != nil {
		t.Fatalf("accepted a token whose header does not decode: %q", token)
	}
	alg, _ := header["alg"].(string)
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatalf("accepted a token whose signature does not decode: %q", token)
	}
	kid, hasKid := header["kid"]
	if _, ok := kid.(string); hasKid && !ok {
		t.Fatalf("accepted a token whose kid is %T", kid)
	}
	verified := false
	for _, k := range keys {
		if (kid == nil || kid == "" || kid == k.kid) && slices.Contains(k.algs, alg) && verifyJWS(alg, k.pub, input, sig) {
			verified = true
		}
	}
	if !verified {
		t.Fatalf("accepted a token (alg %q, kid %v) no key of the set verifies with the standard library: %q", alg, kid, token)
	}
	if typ, ok := header["typ"]; ok {
		if s, _ := typ.(string); !slices.Contains([]string{"at+jwt", "application/at+jwt", "jwt"}, strings.ToLower(s)) {
			t.Fatalf("accepted a token of typ %v", typ)
		}
	}
	if _, ok := header["crit"]; ok {
		t.Fatalf("accepted a token with crit")
	}

	var c map[string]any
	rawClaims, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(rawClaims, &c) != nil {
		t.Fatalf("accepted a token whose claims do not decode: %q", token)
	}
	if c["iss"] != testIssuer {
		t.Fatalf("accepted iss %v", c["iss"])
	}
	switch aud := c["aud"].(type) {
	case string:
		if aud != testAudience {
			t.Fatalf("accepted aud %q", aud)
		}
	case []any:
		if !slices.Contains(aud, any(testAudience)) {
			t.Fatalf("accepted aud %v", aud)
		}
	default:
		t.Fatalf("accepted aud %v", c["aud"])
	}
	// exp and nbf are compared as the numbers they are (seconds), not
	// through time.Time, which cannot hold every float64.
	leeway := auth.DefaultLeeway.Seconds()
	exp, ok := c["exp"].(float64)
	if !ok || exp+leeway < float64(now.Unix()) {
		t.Fatalf("accepted exp %v", c["exp"])
	}
	if nbf, ok := c["nbf"]; ok {
		if n, isNum := nbf.(float64); !isNum || n-leeway > float64(time.Now().Unix()+1) {
			t.Fatalf("accepted nbf %v", nbf)
		}
	}
	if !p.Expiry.Equal(time.Unix(int64(exp), 0)) {
		t.Fatalf("principal expiry %v, exp %v", p.Expiry, exp)
	}
	checkIdentity(t, p, c)
}

// checkIdentity asserts that an accepted principal says who it is as its
// claims do: Subject is a sub that is a non-empty string, or "" with no
// sub (or a null one); ClientID is client_id, else azp; and a principal
// without a Subject has a ClientID.
func checkIdentity(t *testing.T, p *wymcp.Principal, c map[string]any) {
	t.Helper()
	sub, hasSub := c["sub"]
	switch s, _ := sub.(string); {
	case hasSub && sub != nil && (s == "" || p.Subject != s):
		t.Fatalf("accepted sub %#v as subject %q", sub, p.Subject)
	case (!hasSub || sub == nil) && p.Subject != "":
		t.Fatalf("subject %q without a sub", p.Subject)
	}
	client, _ := c["client_id"].(string)
	if c["client_id"] == nil {
		client, _ = c["azp"].(string)
	}
	if p.Subject == "" && (p.ClientID == "" || p.ClientID != client) {
		t.Fatalf("accepted a principal without a subject as client %q, claims %v", p.ClientID, c)
	}
	if p.ClientID != "" && p.ClientID != client {
		t.Fatalf("client %q, claims %v", p.ClientID, c)
	}
}

// verifyJWS checks a JWS signature with the standard library alone
// (RFC 7518 §3).
func verifyJWS(alg string, pub any, input string, sig []byte) bool {
	var h crypto.Hash
	switch alg[2:] {
	case "256":
		h = crypto.SHA256
	case "384":
		h = crypto.SHA384
	case "512":
		h = crypto.SHA512
	default:
		return false
	}
	d := h.New()
	d.Write([]byte(input))
	digest := d.Sum(nil)
	switch key := pub.(type) {
	case *rsa.PublicKey:
		switch alg[:2] {
		case "RS":
			return rsa.VerifyPKCS1v15(key, h, digest, sig) == nil
		case "PS":
			return rsa.VerifyPSS(key, h, digest, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto}) == nil
		}
	case *ecdsa.PublicKey:
		size := (key.Curve.Params().BitSize + 7) / 8
		if alg[:2] != "ES" || len(sig) != 2*size {
			return false
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		return ecdsa.Verify(key, digest, r, s)
	}
	return false
}

// Package reqstate seals and opens the requestState of multi-round-trip tool
// calls (SEP-2322), so that the server keeps nothing between rounds: what a
// call must remember travels with the client, which cannot read it, change
// it, or carry it to another call.
//
// # Why sealed, and bound
//
// A requestState passes through the client, so the spec (basic/patterns/mrtr,
// "Server Requirements") makes it attacker-controlled input: a server MUST
// protect its integrity and reject state that fails verification, and SHOULD
// bind it to the authenticated principal, a short expiry and the originating
// request. Here every state is sealed with AES-256-GCM (an AEAD: confidential
// and tamper-evident in one primitive, from the standard library), and the
// binding is the AEAD's additional data, recomputed from the retry: the tool's
// name, a SHA-256 of the call's arguments in canonical JSON and the caller's
// subject. A state presented on another tool, with other arguments or by
// another principal therefore fails to open exactly as a tampered one does;
// nothing of the binding is stored in it. The expiry is inside the sealed
// payload.
//
// # The key ring
//
// A [Ring] holds one or more 32-byte secrets, newest first. New states are
// sealed with the newest; a state sealed with any key of the ring opens. To
// rotate, put a new key in front and drop the oldest once a TTL has passed
// since (states sealed with it have expired by then). Replicas behind one
// load balancer share the ring and so serve any round of any call.
//
// Each secret is stretched with HKDF-SHA256 into the AES key and a 4-byte key
// id, each under its own label: the id, sent in clear, picks the key without
// trial decryption and tells nothing of the key; the labels keep the AES key
// apart from any other use of the same secret.
//
// # The format
//
// A state is the unpadded base64url (RFC 4648 §5) encoding of
//
//	version (1 byte, 1) | key id (4) | nonce (12) | ciphertext | GCM tag (16)
//
// where the plaintext is the JSON of [State] with the expiry, and the
// additional data is the version, the key id and the binding. The nonce is
// random (crypto/cipher's NewGCMWithRandomNonce): NIST SP 800-38D bounds a
// key to 2³² such seals, far past what a rotation period sees.
package reqstate

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/goccy/go-json/jsontext"

	"github.com/wymcp/wymcp/internal/strictjson"
)

// KeySize is the size of each secret of a ring: an AES-256 key.
const KeySize = 32

// version is the format's first byte; a state of any other version is refused.
const version = 1

// Sizes of the format's parts.
const (
	idSize     = 4
	headerSize = 1 + idSize
	nonceSize  = 12
	tagSize    = 16
)

// HKDF labels: one per derived value, so that the AES key and the key id
// drawn from one secret are unrelated.
const (
	labelKey = "wymcp requestState v1 AES-256-GCM key"
	labelID  = "wymcp requestState v1 key id"
)

// ErrInvalid is Open's one error. Every failure — not base64, an unknown
// version or key, a tag that does not verify (tampered, sealed under a key
// no longer in the ring, or for another tool, other arguments or another
// principal), a payload that does not decode, an expiry passed — is this
// error, so that nothing tells a client which check it failed.
var ErrInvalid = errors.New("reqstate: invalid requestState")

// State is what one call carries from round to round.
type State struct {
	// CallID identifies the call across its rounds: random, made in its
	// first round. It is for telemetry (never the state itself on a span).
	CallID string `json:"c"`
	// Round is the round that sealed the state: 1 for the first call.
	Round int `json:"r"`
	// Answers are the client's answers received so far, by input key, as
	// sent: a handler re-runs from the top in every round and finds them.
	Answers map[string]jsontext.Value `json:"a,omitempty"`
	// Memory holds the values the handler asked to keep, by key, as JSON.
	Memory map[string]jsontext.Value `json:"m,omitempty"`
}

// payload is State as sealed: with its expiry, in Unix nanoseconds.
type payload struct {
	State
	Expires int64 `json:"e"`
}

// Binding is what a state is bound to: recomputed from each retry and
// authenticated with the state, never stored in it.
type Binding struct {
	// Tool is the name of the tool called.
	Tool string
	// Arguments is params.arguments as sent (nil when absent, which means
	// {}); it is bound by the SHA-256 of its canonical form, so a client
	// that re-encodes the same arguments (another member order, other
	// white space) still presents a valid state.
	Arguments []byte
	// Subject is the authenticated caller's key, "" when auth is off.
	Subject string
	// Client is the OAuth client the caller's token was issued to, ""
	// when unknown or auth is off: a state minted through one client of a
	// user is not another client's to continue (docs/auth.md).
	Client string
}

// key is one secret of the ring, ready to use.
type key struct {
	id   [idSize]byte
	aead cipher.AEAD
}

// Ring seals with its newest key and opens with any of its keys. It is safe
// for concurrent use.
type Ring struct {
	keys []key
	ttl  time.Duration
}

// NewRing returns the ring of secrets, newest first, each [KeySize] bytes.
// A state stays valid for ttl after it is sealed (ttl > 0).
func NewRing(secrets [][]byte, ttl time.Duration) (*Ring, error) {
	if len(secrets) == 0 {
		return nil, errors.New("reqstate: the key ring is empty")
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("reqstate: the state TTL %v is not positive", ttl)
	}
	r := &Ring{keys: make([]key, len(secrets)), ttl: ttl}
	for i, s := range secrets {
		if len(s) != KeySize {
			return nil, fmt.Errorf("reqstate: key %d is %d bytes; each key must be %d bytes (AES-256)", i, len(s), KeySize)
		}
		k, err := derive(s)
		if err != nil {
			return nil, err
		}
		for j := range i {
			if r.keys[j].id == k.id {
				return nil, fmt.Errorf("reqstate: keys %d and %d are the same key", j, i)
			}
		}
		r.keys[i] = k
	}
	return r, nil
}

// derive stretches a secret into its AES-256-GCM and its key id.
func derive(secret []byte) (key, error) {
	var k key
	aesKey, err := hkdf.Key(sha256.New, secret, nil, labelKey, KeySize)
	if err != nil {
		return k, err
	}
	id, err := hkdf.Key(sha256.New, secret, nil, labelID, idSize)
	if err != nil {
		return k, err
	}
	copy(k.id[:], id)
	block, err := aes.NewCipher(aesKey)
	if err != nil {
		return k, err
	}
	if k.aead, err = cipher.NewGCMWithRandomNonce(block); err != nil {
		return k, err
	}
	return k, nil
}

// Seal returns s sealed under the newest key and bound to b, valid for the
// ring's TTL from now.
func (r *Ring) Seal(b Binding, s *State) (string, error) {
	plain, err := strictjson.Marshal(payload{State: *s, Expires: time.Now().Add(r.ttl).UnixNano()})
	if err != nil {
		return "", fmt.Errorf("reqstate: encoding the state: %w", err)
	}
	k := &r.keys[0]
	header := [headerSize]byte{version}
	copy(header[1:], k.id[:])
	ad, err := additionalData(header, b)
	if err != nil {
		return "", err
	}
	out := make([]byte, headerSize, headerSize+nonceSize+len(plain)+tagSize)
	copy(out, header[:])
	out = k.aead.Seal(out, nil, plain, ad)
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// Open returns the state token holds if it was sealed by a key of the ring
// for b and has not expired; any failure is [ErrInvalid].
func (r *Ring) Open(b Binding, token string) (*State, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) < headerSize+nonceSize+tagSize || raw[0] != version {
		return nil, ErrInvalid
	}
	var header [headerSize]byte
	copy(header[:], raw)
	k := r.key(header[1:])
	if k == nil {
		return nil, ErrInvalid
	}
	ad, err := additionalData(header, b)
	if err != nil {
		return nil, ErrInvalid
	}
	plain, err := k.aead.Open(nil, nil, raw[headerSize:], ad)
	if err != nil {
		return nil, ErrInvalid
	}
	var p payload
	if err := strictjson.Unmarshal(plain, &p); err != nil {
		return nil, ErrInvalid
	}
	if time.Now().UnixNano() >= p.Expires {
		return nil, ErrInvalid
	}
	return &p.State, nil
}

// key returns the ring's key with id, nil when none has it.
func (r *Ring) key(id []byte) *key {
	for i := range r.keys {
		if subtle.ConstantTimeCompare(r.keys[i].id[:], id) == 1 {
			return &r.keys[i]
		}
	}
	return nil
}

// additionalData is what the tag authenticates besides the ciphertext: the
// header, then the binding with each variable part length-prefixed, so that
// no two bindings encode alike ("ab"+"c" is not "a"+"bc").
func additionalData(header [headerSize]byte, b Binding) ([]byte, error) {
	args := b.Arguments
	if len(args) == 0 {
		args = []byte("{}")
	}
	canonical, err := strictjson.Canonical(args)
	if err != nil {
		return nil, fmt.Errorf("reqstate: the arguments are not JSON: %w", err)
	}
	digest := sha256.Sum256(canonical)
	ad := make([]byte, 0, headerSize+4+len(b.Tool)+len(digest)+4+len(b.Subject)+4+len(b.Client))
	ad = append(ad, header[:]...)
	ad = binary.BigEndian.AppendUint32(ad, uint32(len(b.Tool)))
	ad = append(ad, b.Tool...)
	ad = append(ad, digest[:]...)
	ad = binary.BigEndian.AppendUint32(ad, uint32(len(b.Subject)))
	ad = append(ad, b.Subject...)
	ad = binary.BigEndian.AppendUint32(ad, uint32(len(b.Client)))
	ad = append(ad, b.Client...)
	return ad, nil
}

package reqstate

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goccy/go-json/jsontext"
)

func secret(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func ring(t *testing.T, ttl time.Duration, secrets ...[]byte) *Ring {
	t.Helper()
	r, err := NewRing(secrets, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	bound = Binding{Tool: "book", Arguments: []byte(`{"city":"Paris","nights":2}`), Subject: "alice"}
	state = &State{
		CallID:  "0123456789abcdef0123456789abcdef",
		Round:   2,
		Answers: map[string]jsontext.Value{"confirm": jsontext.Value(`{"action":"accept","content":{"secret-answer":true}}`)},
		Memory:  map[string]jsontext.Value{"quote": jsontext.Value(`{"price":120}`)},
	}
)

// TestRoundTrip: a sealed state opens, under the same binding, to the same
// state; each seal differs (random nonce); nothing of it shows in clear.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	r := ring(t, time.Minute, secret(1))
	a, err := r.Seal(bound, state)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := r.Seal(bound, state)
	if a == b {
		t.Error("two seals of one state are equal: the nonce is not fresh")
	}
	got, err := r.Open(bound, a)
	if err != nil {
		t.Fatal(err)
	}
	if got.CallID != state.CallID || got.Round != state.Round ||
		string(got.Answers["confirm"]) != string(state.Answers["confirm"]) || string(got.Memory["quote"]) != string(state.Memory["quote"]) {
		t.Errorf("opened %+v, want %+v", got, state)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(a)
	for _, clear := range []string{"secret-answer", "price", "confirm", state.CallID, "alice", "book"} {
		if bytes.Contains(raw, []byte(clear)) {
			t.Errorf("%q shows in the sealed state", clear)
		}
	}
}

// TestBinding: the state opens only for the tool, the arguments (by
// meaning, not bytes) and the subject it was sealed for.
func TestBinding(t *testing.T) {
	t.Parallel()
	r := ring(t, time.Minute, secret(1))
	tok, err := r.Seal(bound, state)
	if err != nil {
		t.Fatal(err)
	}
	same := []Binding{
		{Tool: "book", Arguments: []byte(` { "nights" : 2.0, "city": "Par\u0069s" } `), Subject: "alice"},
	}
	for _, b := range same {
		if _, err := r.Open(b, tok); err != nil {
			t.Errorf("%+v: %v", b, err)
		}
	}
	other := map[string]Binding{
		"other tool":      {Tool: "book2", Arguments: bound.Arguments, Subject: "alice"},
		"other arguments": {Tool: "book", Arguments: []byte(`{"city":"Paris","nights":3}`), Subject: "alice"},
		"no arguments":    {Tool: "book", Subject: "alice"},
		"other subject":   {Tool: "book", Arguments: bound.Arguments, Subject: "mallory"},
		"no subject":      {Tool: "book", Arguments: bound.Arguments},
		"shifted bytes":   {Tool: "bookalice", Arguments: bound.Arguments},
		// The same user through another OAuth client (issue 38).
		"other client":       {Tool: "book", Arguments: bound.Arguments, Subject: "alice", Client: "other"},
		"subject and client": {Tool: "book", Arguments: bound.Arguments, Subject: "alic", Client: "e"},
	}
	for name, b := range other {
		if _, err := r.Open(b, tok); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	// Absent arguments are {} for both sides.
	empty := Binding{Tool: "t"}
	tok, _ = r.Seal(empty, state)
	if _, err := r.Open(Binding{Tool: "t", Arguments: []byte(`{}`)}, tok); err != nil {
		t.Errorf("absent and {} arguments differ: %v", err)
	}
}

// TestTampered: changing, cutting or extending any part of a state makes
// it invalid.
func TestTampered(t *testing.T) {
	t.Parallel()
	r := ring(t, time.Minute, secret(1))
	tok, err := r.Seal(bound, state)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	for i := range raw {
		flipped := bytes.Clone(raw)
		flipped[i] ^= 0x01
		if _, err := r.Open(bound, base64.RawURLEncoding.EncodeToString(flipped)); !errors.Is(err, ErrInvalid) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	for name, bad := range map[string]string{
		"suffix":       tok + "-TAMPERED",
		"truncated":    tok[:len(tok)-1],
		"cut to head":  tok[:8],
		"empty":        "",
		"not base64":   "!!!!" + tok,
		"padded":       tok + "==",
		"std alphabet": strings.NewReplacer("-", "+", "_", "/").Replace(tok) + "+/",
	} {
		if _, err := r.Open(bound, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

// TestRotation: a ring opens states of every key it holds and seals with
// its first; a state of a key it no longer holds, or never held, is
// refused.
func TestRotation(t *testing.T) {
	t.Parallel()
	old := ring(t, time.Minute, secret(1))
	rotated := ring(t, time.Minute, secret(2), secret(1))
	retired := ring(t, time.Minute, secret(2))
	foreign := ring(t, time.Minute, secret(3))

	fromOld, _ := old.Seal(bound, state)
	if _, err := rotated.Open(bound, fromOld); err != nil {
		t.Errorf("a rotated ring refuses its older key's state: %v", err)
	}
	if _, err := retired.Open(bound, fromOld); !errors.Is(err, ErrInvalid) {
		t.Errorf("a retired key's state opens: %v", err)
	}
	if _, err := foreign.Open(bound, fromOld); !errors.Is(err, ErrInvalid) {
		t.Errorf("a foreign key's state opens: %v", err)
	}
	fromRotated, _ := rotated.Seal(bound, state)
	if _, err := retired.Open(bound, fromRotated); err != nil {
		t.Errorf("a rotated ring does not seal with its newest key: %v", err)
	}
	if _, err := old.Open(bound, fromRotated); !errors.Is(err, ErrInvalid) {
		t.Errorf("the old ring opens the newest key's state: %v", err)
	}
}

// TestExpiry: a state opens until its TTL has passed, and not after. The
// clock is the synctest bubble's: it moves only by the sleeps, so the state
// is opened exactly 1ns before its TTL, then exactly at it.
func TestExpiry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := ring(t, 5*time.Minute, secret(1))
		tok, err := r.Seal(bound, state)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(5*time.Minute - time.Nanosecond)
		if _, err := r.Open(bound, tok); err != nil {
			t.Errorf("just before the TTL: %v", err)
		}
		time.Sleep(time.Nanosecond)
		if _, err := r.Open(bound, tok); !errors.Is(err, ErrInvalid) {
			t.Errorf("at the TTL: %v, want ErrInvalid", err)
		}
	})
}

// TestNewRing: bad rings fail construction with the reason.
func TestNewRing(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		secrets [][]byte
		ttl     time.Duration
		want    string
	}{
		"empty":     {nil, time.Minute, "empty"},
		"short key": {[][]byte{secret(1), make([]byte, 16)}, time.Minute, "key 1 is 16 bytes"},
		"long key":  {[][]byte{make([]byte, 33)}, time.Minute, "key 0 is 33 bytes"},
		"same key":  {[][]byte{secret(1), secret(2), secret(1)}, time.Minute, "keys 0 and 2 are the same"},
		"zero TTL":  {[][]byte{secret(1)}, 0, "not positive"},
	}
	for name, tc := range cases {
		if _, err := NewRing(tc.secrets, tc.ttl); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

func BenchmarkSealOpen(b *testing.B) {
	r, _ := NewRing([][]byte{secret(1)}, time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		tok, err := r.Seal(bound, state)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Open(bound, tok); err != nil {
			b.Fatal(err)
		}
	}
}

package reqstate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goccy/go-json/jsontext"

	"github.com/wymcp/wymcp/internal/strictjson"
)

// sealedByTest is a state the fuzz target sealed itself, by CallID: the
// binding it was sealed for, and whether it may open at all (not sealed
// by a foreign ring, not expired at the target's clock).
type sealedByTest struct {
	b     Binding
	s     State
	opens bool
}

// bubbleStart is the clock of a synctest bubble as it starts (see
// testing/synctest).
var bubbleStart = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// sealUntil seals s for b under r's newest key as [Ring.Seal] does, but to
// expire at expires rather than at the ring's TTL from now. It builds the
// format of the package doc from the ring's key: the fuzz target's seeds
// must be made before any synctest bubble exists, at clocks of its choice.
func sealUntil(tb testing.TB, r *Ring, b Binding, s *State, expires time.Time) string {
	tb.Helper()
	plain, err := strictjson.Marshal(payload{State: *s, Expires: expires.UnixNano()})
	if err != nil {
		tb.Fatal(err)
	}
	k := &r.keys[0]
	header := [headerSize]byte{version}
	copy(header[1:], k.id[:])
	ad, err := additionalData(header, b)
	if err != nil {
		tb.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(k.aead.Seal(header[:], nil, plain, ad))
}

// FuzzOpenState: arbitrary requestState strings and bindings (tool,
// arguments, subject) against a ring of two keys at a fixed clock: each
// input runs in its own synctest bubble, whose clock starts at the same
// instant and moves only when the target sleeps, first to the fixed clock.
// Open never panics, and:
//
//   - its one error is ErrInvalid;
//   - only a state the test sealed with a key of the ring opens (its
//     CallID names the seal and its content is the seal's), under a
//     binding with the seal's tool and subject and arguments of the same
//     canonical form, and so the same meaning as encoding/json decodes
//     them; a state of a foreign ring, or one expired at the clock, never
//     opens; a seed sealed to open does, under its binding;
//   - once the clock has passed every seal's TTL, nothing opens;
//   - a state sealed here for the input's binding opens under it, to the
//     same state, and not under another tool, subject or arguments, nor
//     once expired.
//
// The ring's keys and the clock are fixed, so the states the coordinator
// seals as seeds open in its workers just as in it, and the corpus the
// target has grown keeps its meaning.
func FuzzOpenState(f *testing.F) {
	at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	const ttl = 5 * time.Minute
	newRing := func(secrets ...[]byte) *Ring {
		r, err := NewRing(secrets, ttl)
		if err != nil {
			f.Fatal(err)
		}
		return r
	}
	r := newRing(secret(2), secret(1)) // rotated: opens the states of both
	older := newRing(secret(1))
	foreign := newRing(secret(3))

	bindings := []Binding{
		bound,
		{Tool: "book"},
		{Tool: "book", Arguments: []byte(`{}`), Subject: "alice"},
		{Tool: "t", Arguments: []byte(`[1,2.0,"x",{"b":null,"a":true}]`), Subject: "bob"},
		{Tool: "n", Arguments: []byte(`{"n":12345678901234567890}`)},
		{Tool: "", Arguments: []byte(`"s"`), Subject: ""},
	}
	seals := map[string]sealedByTest{}
	seeds := map[string]string{} // the CallID of each token sealed here
	n := 0
	seal := func(ring *Ring, when time.Time, b Binding, opens bool) string {
		n++
		s := State{CallID: "seal-" + strconv.Itoa(n), Round: n,
			Answers: map[string]jsontext.Value{"q": jsontext.Value(`{"action":"accept","content":{"n":` + strconv.Itoa(n) + `}}`)}}
		tok := sealUntil(f, ring, b, &s, when.Add(ring.ttl))
		seals[s.CallID] = sealedByTest{b: b, s: s, opens: opens}
		seeds[tok] = s.CallID
		return tok
	}
	latest := at.Add(time.Minute) // no seal is later
	for _, b := range bindings {
		for _, tok := range []string{
			seal(r, at.Add(-time.Minute), b, true),
			seal(older, at, b, true),              // the ring's older key
			seal(r, latest, b, true),              // sealed "after" the clock: valid longer
			seal(r, at.Add(-ttl+1), b, true),      // its last nanosecond
			seal(r, at.Add(-ttl), b, false),       // expired at the clock
			seal(r, at.Add(-time.Hour), b, false), // long expired
			seal(foreign, at, b, false),
		} {
			f.Add(tok, b.Tool, string(b.Arguments), b.Subject)
			// Near-valid: the same state under neighbouring bindings.
			f.Add(tok, b.Tool+"x", string(b.Arguments), b.Subject)
			f.Add(tok, b.Tool, string(b.Arguments)+" ", b.Subject)
			f.Add(tok, b.Tool, `{"city":"Paris","nights":2.0}`, b.Subject)
			f.Add(tok, b.Tool, string(b.Arguments), b.Subject+"\x00")
			f.Add(tok, b.Tool+b.Subject, string(b.Arguments), "")
			f.Add(tok[:len(tok)-1], b.Tool, string(b.Arguments), b.Subject)
			f.Add(tok+"A", b.Tool, string(b.Arguments), b.Subject)
		}
	}
	f.Add("", "", "", "")
	f.Add("AQ", "t", "{}", "")
	f.Add("!!!", "t", "{", "")

	f.Fuzz(func(t *testing.T, token, tool, args, subject string) {
		b := Binding{Tool: tool, Subject: subject}
		if args != "" {
			b.Arguments = []byte(args)
		}
		synctest.Test(t, func(t *testing.T) {
			time.Sleep(at.Sub(bubbleStart))
			if now := time.Now(); !now.Equal(at) {
				t.Fatalf("the clock is %v, want %v: does the bubble start at %v?", now, at, bubbleStart)
			}
			got, err := r.Open(b, token)
			if err != nil {
				if err != ErrInvalid || got != nil {
					t.Fatalf("Open = %v, %v; a failure is ErrInvalid alone", got, err)
				}
				// The seeds open at the clock exactly when they should, or
				// the target would explore refusals only.
				if id, ok := seeds[token]; ok {
					if s := seals[id]; s.opens && s.b.Tool == tool && string(s.b.Arguments) == args && s.b.Subject == subject {
						t.Fatalf("seed %s: Open = %v, want it to open", id, err)
					}
				}
			} else {
				s, ok := seals[got.CallID]
				switch {
				case !ok:
					t.Fatalf("opened a state the test never sealed: %+v", got)
				case !s.opens:
					t.Fatalf("opened %s, sealed by a foreign ring or expired", got.CallID)
				case !reflect.DeepEqual(*got, s.s):
					t.Fatalf("opened %+v, sealed %+v", *got, s.s)
				}
				checkSameBinding(t, s.b, b)
			}

			// A state sealed now for this binding opens under it alone.
			mine := &State{CallID: "fuzz", Round: 1, Memory: map[string]jsontext.Value{"k": jsontext.Value(`"v"`)}}
			tok, err := r.Seal(b, mine)
			if err != nil {
				if strictjson.Valid(argsOrEmpty(b)) {
					t.Fatalf("Seal refused the JSON arguments %q: %v", args, err)
				}
			} else {
				if st, err := r.Open(b, tok); err != nil || !reflect.DeepEqual(st, mine) {
					t.Fatalf("a state sealed for %+v opens under it as %+v, %v", b, st, err)
				}
				for name, other := range map[string]Binding{
					"another tool":      {Tool: tool + "x", Arguments: b.Arguments, Subject: subject},
					"another subject":   {Tool: tool, Arguments: b.Arguments, Subject: subject + "x"},
					"shifted":           {Tool: tool + subject, Arguments: b.Arguments},
					"shifted back":      {Tool: "", Arguments: b.Arguments, Subject: tool + subject},
					"other arguments":   {Tool: tool, Arguments: []byte(`{"wymcp fuzz":[` + string(argsOrEmpty(b)) + `]}`), Subject: subject},
					"arguments wrapped": {Tool: tool, Arguments: append(append([]byte("["), argsOrEmpty(b)...), ']'), Subject: subject},
				} {
					if other.Tool == tool && other.Subject == subject {
						continue // "shifted" with an empty subject is the binding itself
					}
					if _, err := r.Open(other, tok); err == nil {
						t.Fatalf("a state sealed for %+v opens under %s %+v", b, name, other)
					}
				}
			}

			time.Sleep(latest.Add(ttl).Sub(at)) // past every seal's TTL
			if st, err := r.Open(b, token); err == nil {
				t.Fatalf("opened %s after every seal's TTL", st.CallID)
			}
			if tok != "" {
				if _, err := r.Open(b, tok); err == nil {
					t.Fatal("a state opens once its TTL has passed")
				}
			}
		})
	})
}

// argsOrEmpty is a binding's arguments, {} when absent.
func argsOrEmpty(b Binding) []byte {
	if len(b.Arguments) == 0 {
		return []byte(`{}`)
	}
	return b.Arguments
}

// checkSameBinding asserts that a state sealed for sealed opened under a
// binding of the same tool, subject and arguments: the same canonical
// form, and the same value as encoding/json decodes it.
func checkSameBinding(t *testing.T, sealed, opened Binding) {
	t.Helper()
	if sealed.Tool != opened.Tool || sealed.Subject != opened.Subject {
		t.Fatalf("a state sealed for %+v opened under %+v", sealed, opened)
	}
	c1, err1 := strictjson.Canonical(argsOrEmpty(sealed))
	c2, err2 := strictjson.Canonical(argsOrEmpty(opened))
	if err1 != nil || err2 != nil || !bytes.Equal(c1, c2) {
		t.Fatalf("a state sealed for arguments %s opened under %q", sealed.Arguments, opened.Arguments)
	}
	var v1, v2 any
	if json.Unmarshal(argsOrEmpty(sealed), &v1) != nil || json.Unmarshal(argsOrEmpty(opened), &v2) != nil || !reflect.DeepEqual(v1, v2) {
		t.Fatalf("a state sealed for arguments %s opened under %q, another value", sealed.Arguments, opened.Arguments)
	}
}

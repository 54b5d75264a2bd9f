package upstream

import (
	"fmt"
	"testing"
)

// One caller holding slots with hung calls leaves the others their
// share: the flood stops at the reserve, and each newcomer finds room.
func TestSharesFlood(t *testing.T) {
	s := newShares(256)
	flood := 0
	for range 300 {
		if ok, _ := s.take("mallory"); ok {
			flood++
		}
	}
	if flood >= 256 || flood < 128 {
		t.Fatalf("one caller took %d of 256 slots", flood)
	}
	ok, share := s.take("mallory")
	if ok || !share {
		t.Fatalf("the flood's next call: ok %v, share %v; want a fair-share refusal", ok, share)
	}
	for i := range 20 {
		if ok, _ := s.take(fmt.Sprintf("victim-%d", i)); !ok {
			t.Fatalf("victim %d refused while one caller floods", i)
		}
	}
	// Each victim may keep calling within its share.
	for range 5 {
		if ok, _ := s.take("victim-0"); !ok {
			t.Fatal("a victim's further call was refused within its share")
		}
	}
}

// A caller alone may use the upstream up to its reserve and, once it
// gives slots back, again; slots come back when the calls end.
func TestSharesAloneAndPut(t *testing.T) {
	s := newShares(8)
	got := 0
	for range 8 {
		if ok, _ := s.take("a"); ok {
			got++
		}
	}
	if got != 6 {
		t.Fatalf("a caller alone took %d of 8, want 6 (a reserve of 2 kept)", got)
	}
	if ok, _ := s.take("b"); !ok {
		t.Fatal("newcomer refused")
	}
	for range got {
		s.put("a")
	}
	s.put("b")
	if s.used != 0 || len(s.byWho) != 0 {
		t.Fatalf("used %d, holders %v after every put", s.used, s.byWho)
	}
}

// Callers that cannot be told apart share the slots as before: every
// slot, then busy.
func TestSharesAnonymous(t *testing.T) {
	s := newShares(4)
	for range 4 {
		if ok, _ := s.take(""); !ok {
			t.Fatal("anonymous refused with slots free")
		}
	}
	if ok, share := s.take(""); ok || share {
		t.Fatalf("full: ok %v share %v, want busy", ok, share)
	}
}

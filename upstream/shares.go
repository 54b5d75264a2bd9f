package upstream

import "sync"

// shares are an upstream's in-flight slots, shared fairly among its
// callers (docs/design.md §10b): a caller takes a slot freely while more
// than a reserve of them are free; past that, only while it holds less
// than a fair share, the slots divided among the callers holding some
// and one more, the newcomer the reserve is kept for, and never the
// last free slot, which only a caller holding none takes. So one caller
// alone may use most of the upstream, callers that flood it cannot take
// the last slots from the others, and a newcomer finds room.
type shares struct {
	size    int
	reserve int

	mu     sync.Mutex
	used   int
	byWho  map[string]int
	anyone int // calls of callers the gateway cannot tell apart
}

func newShares(size int) *shares {
	return &shares{size: size, reserve: max(size/4, 1), byWho: make(map[string]int)}
}

// take reserves a slot for a call of who ("" for a caller that cannot be
// told apart, who takes slots as before fair shares: while any is free).
// busy reports a refusal because every slot is taken, share one because
// the caller holds its fair share while few are free.
func (s *shares) take(who string) (ok, share bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used >= s.size {
		return false, false
	}
	if who != "" && s.size-s.used <= s.reserve {
		holders := len(s.byWho)
		held := s.byWho[who]
		if held == 0 {
			holders++
		}
		// The last free slot is a newcomer's: otherwise a second caller
		// flooding takes the reserve whole, and no other finds room.
		if held >= max(s.size/(holders+1), 1) || (held > 0 && s.size-s.used <= 1) {
			return false, true
		}
	}
	s.used++
	if who == "" {
		s.anyone++
	} else {
		s.byWho[who]++
	}
	return true, false
}

// put gives back a slot take reserved for who.
func (s *shares) put(who string) {
	s.mu.Lock()
	s.used--
	if who == "" {
		s.anyone--
	} else if n := s.byWho[who]; n <= 1 {
		delete(s.byWho, who)
	} else {
		s.byWho[who] = n - 1
	}
	s.mu.Unlock()
}

// held returns the slots who holds, for the refusal's wording.
func (s *shares) held(who string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byWho[who]
}

package upstream

import (
	"testing"
	"time"
)

// Finding 6 (low): the half-open state lets more than one call through.
// A call let through while the circuit was closed, and still running when
// it opened, ends with an outcome that says nothing of the upstream (its
// client went away, or the upstream's 401/404/too-large): release then
// clears probing although that call was not the probe, and a second call
// goes through beside the probe. §10: "then one call goes through".
func TestRedteamBreakerOneProbe(t *testing.T) {
	b := breaker{threshold: 1, cooldown: time.Second}
	now := time.Now()
	if ok, _, _ := b.allow(now); !ok { // A: a slow call, let through while closed
		t.Fatal("closed circuit refused A")
	}
	if ok, _, _ := b.allow(now); !ok { // B fails: the circuit opens
		t.Fatal("closed circuit refused B")
	}
	b.record(true, false, now)
	later := now.Add(2 * time.Second)
	if ok, _, _ := b.allow(later); !ok { // C: the one half-open probe
		t.Fatal("no probe after the cooldown")
	}
	b.release(false) // A ends: its client went away
	if ok, _, _ := b.allow(later); ok {
		t.Fatal("a second call went through while the probe is out")
	}
}

// Finding 6b (low): a stale success closes an open circuit. A call let
// through while the circuit was closed, which succeeds after others opened
// the circuit, closes it for everyone although no probe was made.
func TestRedteamBreakerStaleSuccess(t *testing.T) {
	b := breaker{threshold: 2, cooldown: time.Minute}
	now := time.Now()
	b.allow(now) // A, slow
	for range 2 {
		b.allow(now)
		b.record(true, false, now)
	}
	if ok, _, _ := b.allow(now); ok {
		t.Fatal("the circuit did not open")
	}
	b.record(false, false, now) // A, let through before the failures, succeeds
	if ok, _, _ := b.allow(now); ok {
		t.Fatal("a success of a call from before the circuit opened closed it without a probe")
	}
}

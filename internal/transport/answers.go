package transport

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wymcp/wymcp/internal/toolrun"
)

// An answer is held in memory from when its tool returns until its last
// byte has gone to the connection: for a client that does not read, until
// the write deadline ends the connection. However many clients stop
// reading, the answers held at once stay within one byte budget shared by
// the calls of the server, in the spirit of the body budget (body.go;
// docs/design.md §3, stage 7):
//
//   - A tools/call is admitted against the budget before its tool runs, by
//     a reservation: the charge of its tool's recent answers (answerSizes),
//     or coldShare of the budget while the tool has answered nothing yet.
//     A call the budget cannot take waits a little for answers to be
//     written (answerWait; a cold call, for its tool's first answer to say
//     what a call of it holds: waitFor), then is refused: 503 with
//     Retry-After and -32603 with its id, its tool never run.
//   - When the answer exists, the call is charged its real size, whatever
//     it reserved: an answer larger than its reservation is still written
//     (its tool ran, and may have done what cannot be undone). The charge
//     is given back when the call ends: the answer written, or its
//     connection gone.
//   - An answer under chunkingThreshold is not charged: net/http copies it
//     into the connection's own buffer and the handler returns, so it is
//     bounded as connections are. A call of a tool whose answers are small
//     is admitted whatever the budget holds, and a flood of large answers
//     never turns away the small calls of everyone else.
//
// Bytes held are at most the budget plus, for each call admitted, what its
// answer exceeds its reservation by. A tool whose answers are no larger
// than its recent ones exceeds nothing; a cold tool's calls, at most
// coldShare of them at once, each exceed by their answer less a coldShare
// of the budget, unless one asks its client first (waitFor); and a call admitted when nothing is held is admitted whatever
// it reserves, so that one answer larger than the budget is still served,
// alone.

// coldShare: a call of a tool that has not answered yet reserves
// 1/coldShare of the budget, so that at most coldShare such calls run at
// once, whatever their answers turn out to be.
const coldShare = 16

// answerWait is how long a call the budget cannot take waits for room
// before it is refused: about the time an answer takes to be written to a
// client that reads, and the Retry-After of the refusal.
const answerWait = time.Second

// answerCharge is what an answer of n bytes takes from the budget.
func answerCharge(n int) int64 {
	if n < chunkingThreshold {
		return 0
	}
	return int64(n)
}

// answerBudget is the byte budget of the answers held for their clients.
type answerBudget struct {
	// limit is the budget in bytes; 0 means no bound (nothing is charged).
	limit int64
	held  atomic.Int64
	// sizes is each tool's estimate, by name (answerSizes).
	sizes answerSizes
	// waiters counts the calls waiting for room; changed is closed, and
	// replaced, when room may have been made while one waits.
	waiters atomic.Int32
	mu      sync.Mutex
	changed chan struct{}
	// wait is answerWait (tests shorten it).
	wait time.Duration
	// stopped ends every wait: the server stops admitting (stop).
	stopped atomic.Bool
}

func newAnswerBudget(limit int64) *answerBudget {
	return &answerBudget{limit: limit, changed: make(chan struct{}), wait: answerWait}
}

// reservation is what a call of the tool named name reserves, and whether
// the tool is cold (has answered nothing yet).
func (b *answerBudget) reservation(name string) (r int64, cold bool) {
	if est, ok := b.sizes.estimate(name); ok {
		return est, false
	}
	return max(b.limit/coldShare, 1), true
}

// admit reserves room for a call of t before it runs, waiting for room as
// the package comment says. It returns the bytes reserved, which the call
// gives back when it ends (release), or false when the call is refused.
func (b *answerBudget) admit(ctx context.Context, t *toolrun.Tool) (int64, bool) {
	if b.limit == 0 {
		return 0, true
	}
	if r, _ := b.reservation(t.Name()); r == 0 || b.take(r) {
		return r, true
	}
	return b.waitFor(ctx, t)
}

// hold reserves r bytes for a listen stream's life (listen.go), at once or
// not at all: a stream is cheap to open again, and waiting for room would
// hold its request for nothing. It returns what it took, which the stream
// gives back with adjust(held, 0), and false when the budget had no room;
// with no bound it takes nothing.
func (b *answerBudget) hold(r int64) (held int64, ok bool) {
	if b.limit == 0 {
		return 0, true
	}
	if !b.take(r) {
		return 0, false
	}
	return r, true
}

// take reserves r bytes if the budget has room for them, or holds nothing
// at all: one answer larger than the whole budget is still served, alone.
func (b *answerBudget) take(r int64) bool {
	for {
		held := b.held.Load()
		if held > 0 && held+r > b.limit {
			return false
		}
		if b.held.CompareAndSwap(held, held+r) {
			return true
		}
	}
}

// waitFor waits until the budget takes a call of t: for answerWait, or
// while its tool is cold, until the tool's first answer says what its
// calls hold (at most its deadline, by which the watchdog has answered its
// first calls). A cold tool whose call asks its client for input (asked),
// or whose first calls outlive the wait, is taken as one of small answers
// until one answers: a call waiting for a person must not hold up every
// other first call of its tool.
func (b *answerBudget) waitFor(ctx context.Context, t *toolrun.Tool) (int64, bool) {
	b.waiters.Add(1)
	defer b.waiters.Add(-1)
	start := time.Now()
	timer := time.NewTimer(b.wait)
	defer timer.Stop()
	for {
		b.mu.Lock()
		changed := b.changed
		b.mu.Unlock()
		r, cold := b.reservation(t.Name())
		if r == 0 || b.take(r) {
			return r, true
		}
		if b.stopped.Load() {
			return 0, false
		}
		select {
		case <-changed:
		case <-timer.C:
			if !cold {
				return 0, false
			}
			if left := max(t.Deadline(), b.wait) - time.Since(start); left > 0 {
				timer.Reset(left)
				continue
			}
			b.sizes.seed(t.Name())
		case <-ctx.Done():
			return 0, false
		}
	}
}

// stop ends the waits of the calls waiting for room, and every later one:
// a server that stops admitting answers them now rather than when room is
// made (drain.go).
func (b *answerBudget) stop() {
	b.stopped.Store(true)
	b.broadcast()
}

// asked records that a call of the tool named name asks its client for
// input: a cold tool is then taken as one of small answers (waitFor).
func (b *answerBudget) asked(name string) {
	if b.limit != 0 && b.sizes.seed(name) {
		b.wake()
	}
}

// adjust moves a call's charge from held to now (a reservation becoming the
// answer's real charge, or the charge given back: now 0).
func (b *answerBudget) adjust(held, now int64) {
	if held == now {
		return
	}
	b.held.Add(now - held)
	if now < held {
		b.wake()
	}
}

// wake tells the calls waiting for room that some may have been made.
func (b *answerBudget) wake() {
	if b.waiters.Load() != 0 {
		b.broadcast()
	}
}

// broadcast wakes every call waiting for room.
func (b *answerBudget) broadcast() {
	b.mu.Lock()
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// observe records the charge of an answer of the tool named name; the
// first one of a cold tool wakes the calls waiting to learn it.
func (b *answerBudget) observe(name string, charge int64) {
	if b.limit == 0 {
		return
	}
	if b.sizes.observe(name, charge) {
		b.wake()
	}
}

// answerSizes is the estimate of each tool's answer charge, by tool name
// (so that a gateway's tools, rebuilt when their upstream's list changes,
// keep theirs): the largest recent charge, which a smaller answer lowers by
// a sixteenth of the way, so that a tool whose answers are large now and
// then is still reserved for the large ones.
type answerSizes struct{ m sync.Map } // string → *atomic.Int64

// estimate returns the tool's estimate, false when it has none yet.
func (s *answerSizes) estimate(name string) (int64, bool) {
	v, ok := s.m.Load(name)
	if !ok {
		return 0, false
	}
	return v.(*atomic.Int64).Load(), true
}

// observe folds one answer's charge into the tool's estimate; it reports
// whether it is the tool's first.
func (s *answerSizes) observe(name string, charge int64) bool {
	v, ok := s.m.Load(name)
	if !ok {
		fresh := new(atomic.Int64)
		fresh.Store(charge)
		if v, ok = s.m.LoadOrStore(name, fresh); !ok {
			return true
		}
	}
	est := v.(*atomic.Int64)
	for {
		old := est.Load()
		next := max(charge, old-(old-charge)/16)
		if next == old || est.CompareAndSwap(old, next) {
			return false
		}
	}
}

// seed gives a tool that has none an estimate of nothing; it reports
// whether the tool had none.
func (s *answerSizes) seed(name string) bool {
	if _, ok := s.m.Load(name); ok {
		return false
	}
	_, loaded := s.m.LoadOrStore(name, new(atomic.Int64))
	return !loaded
}

// keep forgets the estimates of tools no longer in set.
func (s *answerSizes) keep(set *toolrun.Set) {
	names := map[string]bool{}
	for _, t := range set.Tools() {
		names[t.Name()] = true
	}
	s.m.Range(func(k, _ any) bool {
		if !names[k.(string)] {
			s.m.Delete(k)
		}
		return true
	})
}

// rejAnswerBudget answers a call that the answer budget could not take.
var rejAnswerBudget = reject(StageOverload, http.StatusServiceUnavailable, errBusy).with("Retry-After", retryAfterSeconds)

package actors

import "time"

// pooledDispatcher runs mailboxes on a pool of parked goroutines instead of
// protoactor's default `go fn()` per idle→busy transition. A reused
// goroutine keeps its grown stack, so the stack growth the default
// dispatcher paid per burst is gone and the round trip is shorter
// (bench/README.md, "Numbers behind the code's comments").
//
// Workers are not bounded: a mailbox that blocks (a tool that sleeps) holds
// its goroutine, and every other mailbox must still get one. The in-flight
// bound of the HTTP front is what bounds them.
type pooledDispatcher struct {
	work       chan func()
	throughput int
	idle       time.Duration
}

func newPooledDispatcher(throughput int, idle time.Duration) *pooledDispatcher {
	return &pooledDispatcher{work: make(chan func()), throughput: throughput, idle: idle}
}

// Schedule hands fn to a parked worker, or starts one.
func (d *pooledDispatcher) Schedule(fn func()) {
	select {
	case d.work <- fn:
	default:
		go d.worker(fn)
	}
}

// Throughput is how many messages a mailbox runs before yielding.
func (d *pooledDispatcher) Throughput() int { return d.throughput }

// worker runs fn, then whatever is handed to it, and ends after one to
// two idle periods without work. The timer is not reset per message (a
// timer-heap update on every call); a tick that finds the worker was busy
// since the last one just starts another period.
func (d *pooledDispatcher) worker(fn func()) {
	fn()
	timer := time.NewTimer(d.idle)
	defer timer.Stop()
	busy := false
	for {
		select {
		case fn := <-d.work:
			fn()
			busy = true
		case <-timer.C:
			if !busy {
				return
			}
			busy = false
			timer.Reset(d.idle)
		}
	}
}

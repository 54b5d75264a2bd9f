package actors

import (
	"sync"
	"sync/atomic"
	"time"
)

// watchdogTick is how often the watchdog looks for overdue calls: an
// overdue call is answered between deadlineGrace and deadlineGrace +
// watchdogTick past its deadline.
const watchdogTick = 100 * time.Millisecond

// watchdog answers for tools that ignore their deadline (docs/design.md §4:
// nothing holds a reply forever). A tool that honours its context answers by
// itself; one that does not is answered for deadlineGrace past its deadline,
// and its own answer, when it comes, is dropped.
//
// One goroutine watches every call, instead of a timer per call: the calls
// in flight are intrusive lists (Call.prev/next, no allocation), one per
// shard (see shards.go), each entered and left under its own mutex, and all
// scanned every watchdogTick. The goroutine sleeps without a ticker only
// once a scan finds every list empty, and only the first call after that
// wakes it: under load, when the lists empty and fill between every two
// calls, waking it each time would cost a context switch per call, and
// the tail under load grew by an order of magnitude (bench/README.md,
// "Where the time goes").
type watchdog struct {
	shards []watchShard
	// sleeping: run waits on wake. Set by run, cleared by the one watch
	// that wakes it (see sleep for why no call can be missed).
	sleeping atomic.Bool
	wake     chan struct{}
	done     chan struct{}
	// overdue answers a call the watchdog gave up on.
	overdue func(*Call)
	// fault is told of a panic in overdue.
	fault func(any)
	stop  sync.Once
}

type watchShard struct {
	mu   sync.Mutex
	head *Call
	_    cacheLinePad
}

// newWatchdog starts a watchdog of shards shards (a power of two, as
// shardCount gives, and at most 256: Call.shard is a byte) and its
// goroutine; close stops it.
func newWatchdog(shards int, overdue func(*Call), fault func(any)) *watchdog {
	w := &watchdog{shards: make([]watchShard, shards), wake: make(chan struct{}, 1), done: make(chan struct{}), overdue: overdue, fault: fault}
	w.sleeping.Store(true)
	go w.run()
	return w
}

// watch adds c, due at c's tool deadline plus the grace. The sweep, not
// watch, adds the grace: once per sweep instead of once per call.
func (w *watchdog) watch(c *Call) {
	c.shard = uint8(pickShard(len(w.shards)))
	s := &w.shards[c.shard]
	s.mu.Lock()
	c.prev, c.next = nil, s.head
	if s.head != nil {
		s.head.prev = c
	}
	s.head = c
	c.watched = true
	s.mu.Unlock()
	// A load first: under load the flag stays false, and its cache line
	// is only read.
	if w.sleeping.Load() && w.sleeping.CompareAndSwap(true, false) {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// forget removes c, when its call is answered or abandoned.
func (w *watchdog) forget(c *Call) {
	s := &w.shards[c.shard]
	s.mu.Lock()
	s.unlink(c)
	s.mu.Unlock()
}

// unlink removes c from the list; mu is held.
func (s *watchShard) unlink(c *Call) {
	if !c.watched {
		return
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		s.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	}
	c.prev, c.next, c.watched = nil, nil, false
}

func (w *watchdog) run() {
	for {
		select {
		case <-w.wake:
		case <-w.done:
			return
		}
		t := time.NewTicker(watchdogTick)
		for {
			select {
			case <-t.C:
			case <-w.done:
				t.Stop()
				return
			}
			if !w.sweep(time.Now()) && w.sleep() {
				break
			}
		}
		t.Stop()
	}
}

// sleep marks the watchdog sleeping, after a sweep found nothing to watch,
// and reports whether it may sleep. A call watched meanwhile either sees the
// mark and wakes the goroutine, or was linked before the mark, and then the
// second look finds it: the mark is set before that look, and a watch links
// before it reads the mark.
func (w *watchdog) sleep() bool {
	w.sleeping.Store(true)
	if !w.anyWatched() {
		return true
	}
	// Keep ticking, unless a watch has already cleared the mark: its wake
	// is on the channel, and run will take it at once.
	return !w.sleeping.CompareAndSwap(true, false)
}

func (w *watchdog) anyWatched() bool {
	for i := range w.shards {
		s := &w.shards[i]
		s.mu.Lock()
		found := s.head != nil
		s.mu.Unlock()
		if found {
			return true
		}
	}
	return false
}

// sweep answers every call due by now and reports whether calls remain.
func (w *watchdog) sweep(now time.Time) bool {
	var late []*Call
	more := false
	// A call is due once its deadline is deadlineGrace past: a deadline
	// at or before lastOverdue.
	lastOverdue := now.Add(-deadlineGrace)
	for i := range w.shards {
		s := &w.shards[i]
		s.mu.Lock()
		for c := s.head; c != nil; {
			next := c.next
			if !lastOverdue.Before(c.tctx.deadline) {
				s.unlink(c)
				late = append(late, c)
			}
			c = next
		}
		more = more || s.head != nil
		s.mu.Unlock()
	}
	for _, c := range late {
		w.answer(c)
	}
	return more
}

// takeAll removes every call watched and returns them: the calls a
// shutdown cuts short (System.Cut).
func (w *watchdog) takeAll() []*Call {
	var all []*Call
	for i := range w.shards {
		s := &w.shards[i]
		s.mu.Lock()
		for c := s.head; c != nil; {
			next := c.next
			s.unlink(c)
			all = append(all, c)
			c = next
		}
		s.mu.Unlock()
	}
	return all
}

// answer runs overdue for c. A panic there would end the process from a
// goroutine no strategy watches, so it is logged by the caller's hook and
// dropped: the requester still has its own context to leave by.
func (w *watchdog) answer(c *Call) {
	defer func() {
		if r := recover(); r != nil && w.fault != nil {
			w.fault(r)
		}
	}()
	w.overdue(c)
}

// close stops the goroutine.
func (w *watchdog) close() { w.stop.Do(func() { close(w.done) }) }

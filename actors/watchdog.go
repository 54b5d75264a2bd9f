package actors

import (
	"sync"
	"time"
)

// watchdogTick is how often the watchdog looks for overdue calls: an
// overdue call is answered between deadlineGrace and deadlineGrace +
// watchdogTick past its deadline.
const watchdogTick = 100 * time.Millisecond

// watchdog answers for tools that ignore their deadline (DESIGN §4: nothing
// holds a reply forever). A tool that honours its context answers by
// itself; one that does not is answered for deadlineGrace past its deadline,
// and its own answer, when it comes, is dropped.
//
// One goroutine watches every call, instead of a timer per call: the calls
// in flight are an intrusive list (Call.prev/next, no allocation), entered
// and left under one mutex, and scanned every watchdogTick. The goroutine
// sleeps without a ticker only once a scan finds the list empty, and only
// the first call after that wakes it: under load, when the list empties and
// fills between every two calls, waking it each time would cost a context
// switch per call (measured: the tail at 256 connections grew tenfold).
type watchdog struct {
	mu       sync.Mutex
	head     *Call
	sleeping bool // run waits on wake; mu guards it
	wake     chan struct{}
	done     chan struct{}
	// overdue answers a call the watchdog gave up on.
	overdue func(*Call)
	// fault is told of a panic in overdue.
	fault func(any)
	stop  sync.Once
}

func newWatchdog(overdue func(*Call), fault func(any)) *watchdog {
	w := &watchdog{sleeping: true, wake: make(chan struct{}, 1), done: make(chan struct{}), overdue: overdue, fault: fault}
	go w.run()
	return w
}

// watch adds c, due at c's tool deadline plus the grace.
func (w *watchdog) watch(c *Call) {
	c.due = c.tctx.deadline.Add(deadlineGrace)
	w.mu.Lock()
	c.prev, c.next = nil, w.head
	if w.head != nil {
		w.head.prev = c
	}
	w.head = c
	c.watched = true
	wake := w.sleeping
	w.sleeping = false
	w.mu.Unlock()
	if wake {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// forget removes c, when its call is answered or abandoned.
func (w *watchdog) forget(c *Call) {
	w.mu.Lock()
	w.unlink(c)
	w.mu.Unlock()
}

// unlink removes c from the list; mu is held.
func (w *watchdog) unlink(c *Call) {
	if !c.watched {
		return
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		w.head = c.next
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
			if !w.sweep(time.Now()) {
				break
			}
		}
		t.Stop()
	}
}

// sweep answers every call due by now and reports whether calls remain;
// when none do, the watchdog is marked sleeping in the same critical
// section, so a call watched after it wakes the goroutine again.
func (w *watchdog) sweep(now time.Time) bool {
	var late []*Call
	w.mu.Lock()
	for c := w.head; c != nil; {
		next := c.next
		if !now.Before(c.due) {
			w.unlink(c)
			late = append(late, c)
		}
		c = next
	}
	more := w.head != nil
	w.sleeping = !more
	w.mu.Unlock()
	for _, c := range late {
		w.answer(c)
	}
	return more
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

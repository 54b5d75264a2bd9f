package upstream

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// defaultCallerIdle is how long a caller's session or child may go
// unused before it is ended (Options.PerCaller, docs/design.md §10d).
const defaultCallerIdle = 5 * time.Minute

const defaultMaxCallers = 64

// callerPool keeps one T per caller (Options.PerCaller): a 2025-era
// upstream's session (callerSessions) or a child (callerConns). At most
// max callers have one; a new caller takes the place of the longest idle
// with no call in flight, and one unused for idle is ended. How a T
// is made, opened and ended, and what a failed open answers, are the
// user's (callerHooks); the bookkeeping is the pool's alone.
type callerPool[T any] struct {
	max  int
	idle time.Duration
	h    callerHooks[T]

	// mu guards the entries' bookkeeping, and whatever of T its user
	// says it does.
	mu     sync.Mutex
	by     map[string]*callerEntry[T]
	closed bool
	stop   chan struct{}
}

// callerHooks are what a callerPool's user decides.
type callerHooks[T any] struct {
	value func(key string) T
	// open makes v usable, in a goroutine of its own; ctx is the first
	// call's, whose deadline open must not take (the T outlives it).
	open func(ctx context.Context, v T) error
	// end ends v once its open is over (err is open's failure).
	end func(v T, err error)
	// failed is what a call finding the open failed answers.
	failed func(err error) error
}

// callerEntry is one caller's T and its bookkeeping.
type callerEntry[T any] struct {
	v        T
	inflight int
	last     time.Time
	ready    chan struct{} // closed once its first open is over
	err      error         // the first open's failure
}

func newCallerPool[T any](max int, idle time.Duration, h callerHooks[T]) *callerPool[T] {
	p := &callerPool[T]{max: orDefault(max, defaultMaxCallers), idle: orDefault(idle, defaultCallerIdle), h: h, by: map[string]*callerEntry[T]{}, stop: make(chan struct{})}
	go p.reap()
	return p
}

// get returns the caller's entry, opening it if it has none (the call
// waits for its open, within its own deadline), counted in flight until
// release.
func (p *callerPool[T]) get(ctx context.Context, key string) (*callerEntry[T], error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, &failure{kind: kindClosed}
	}
	e := p.by[key]
	if e == nil {
		if len(p.by) >= p.max && !p.evictLocked() {
			p.mu.Unlock()
			return nil, &failure{kind: kindCallers, detail: fmt.Sprint(p.max)}
		}
		e = &callerEntry[T]{v: p.h.value(key), ready: make(chan struct{})}
		p.by[key] = e
		go func() {
			e.err = p.h.open(ctx, e.v)
			close(e.ready)
		}()
	}
	e.inflight++
	e.last = time.Now()
	p.mu.Unlock()
	select {
	case <-e.ready:
	case <-ctx.Done():
		p.release(e)
		return nil, ctx.Err()
	}
	if e.err != nil {
		p.release(e)
		p.mu.Lock()
		if p.by[key] == e {
			delete(p.by, key)
			go p.end(e)
		}
		p.mu.Unlock()
		return nil, p.h.failed(e.err)
	}
	return e, nil
}

func (p *callerPool[T]) release(e *callerEntry[T]) {
	p.mu.Lock()
	e.inflight--
	e.last = time.Now()
	p.mu.Unlock()
}

// end ends e once its open is over.
func (p *callerPool[T]) end(e *callerEntry[T]) {
	<-e.ready
	p.h.end(e.v, e.err)
}

// evictLocked ends the longest idle caller's entry that has no call in
// flight; false when every one has.
func (p *callerPool[T]) evictLocked() bool {
	var (
		key  string
		idle *callerEntry[T]
	)
	for k, e := range p.by {
		if e.inflight == 0 && (idle == nil || e.last.Before(idle.last)) {
			key, idle = k, e
		}
	}
	if idle == nil {
		return false
	}
	delete(p.by, key)
	go p.end(idle)
	return true
}

// reap ends the entries idle for p.idle with no call in flight.
func (p *callerPool[T]) reap() {
	t := time.NewTicker(max(p.idle/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			p.mu.Lock()
			for k, e := range p.by {
				if e.inflight == 0 && now.Sub(e.last) >= p.idle {
					delete(p.by, k)
					go p.end(e)
				}
			}
			p.mu.Unlock()
		}
	}
}

// close ends every caller's entry, and returns once all are ended;
// false when the pool was closed already.
func (p *callerPool[T]) close() bool {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return false
	}
	p.closed = true
	close(p.stop)
	all := make([]*callerEntry[T], 0, len(p.by))
	for _, e := range p.by {
		all = append(all, e)
	}
	p.by = nil
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.end(e)
		}()
	}
	wg.Wait()
	return true
}

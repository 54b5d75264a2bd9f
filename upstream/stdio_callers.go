package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// callerConns gives each caller a child of its own (Options.PerCaller):
// a stateful server (a memory, a browser, a shell's working directory)
// then never mixes two callers' state. The gateway's own requests
// (listing, probes) and calls whose caller cannot be told go to the shared
// child, the one Connect starts. At most max callers have a child; a new
// one takes the place of the longest idle, and a child idle for
// callerIdle is stopped.
type callerConns struct {
	c      *client
	shared *stdioConn
	spec   childSpec // callerTag not yet replaced
	max    int

	mu     sync.Mutex
	by     map[string]*callerConn
	closed bool
	stop   chan struct{}
}

// callerConn is one caller's child.
type callerConn struct {
	s        *stdioConn
	inflight int
	last     time.Time
	ready    chan struct{} // closed once its first start is over
	err      error         // the first start's failure
}

// callerHash is the tag of a caller's child (callerTag): 16 hex digits of
// the SHA-256 of its identity, which may be a file's name and says
// nothing of whom.
func callerHash(key string) string {
	sum := sha256.Sum256([]byte("wymcp caller\x00" + key))
	return hex.EncodeToString(sum[:8])
}

// callerIdle is how long a caller's child may go unused before it is
// stopped; a variable for tests.
var callerIdle = 5 * time.Minute

const defaultMaxCallers = 64

func newCallerConns(c *client, shared *stdioConn, spec childSpec, max int) *callerConns {
	cs := &callerConns{c: c, shared: shared, spec: spec, max: orDefault(max, defaultMaxCallers), by: map[string]*callerConn{}, stop: make(chan struct{})}
	go cs.reap()
	return cs
}

func (cs *callerConns) exchange(ctx context.Context, req *request, session string) (message, string, error) {
	if ch, ok := ctx.Value(handshakeKey{}).(*child); ok {
		return ch.conn.exchange(ctx, req, session)
	}
	key := ""
	if !isOwn(ctx) {
		key = callerKey(ctx)
	}
	if key == "" {
		return cs.shared.exchange(ctx, req, session)
	}
	cc, err := cs.get(ctx, key)
	if err != nil {
		return message{}, "", err
	}
	defer cs.release(cc)
	return cc.s.exchange(ctx, req, session)
}

func (cs *callerConns) post(ctx context.Context, method string, body []byte) error {
	if ch, ok := ctx.Value(handshakeKey{}).(*child); ok {
		return ch.conn.post(ctx, method, body)
	}
	return cs.shared.post(ctx, method, body)
}

// get returns the caller's child, starting it if it has none (the call
// waits for its start, within its own deadline).
func (cs *callerConns) get(ctx context.Context, key string) (*callerConn, error) {
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		return nil, &failure{kind: kindClosed}
	}
	cc := cs.by[key]
	if cc == nil {
		if len(cs.by) >= cs.max && !cs.evictLocked() {
			cs.mu.Unlock()
			return nil, &failure{kind: kindCallers, detail: fmt.Sprint(cs.max)}
		}
		s := &stdioConn{c: cs.c, spec: cs.spec.forCaller(callerHash(key)), sys: cs.shared.sys, answering: make(chan struct{}, maxAnswering),
			first: make(chan error, 1), negotiated: true, perCaller: true}
		s.stderrLog.Interval = cs.shared.stderrLog.Interval
		cc = &callerConn{s: s, ready: make(chan struct{})}
		cs.by[key] = cc
		go func() {
			octx, cancel := context.WithTimeout(own(context.Background()), cs.c.connectTimeout)
			defer cancel()
			cc.err = s.open(octx)
			close(cc.ready)
		}()
	}
	cc.inflight++
	cc.last = time.Now()
	cs.mu.Unlock()
	select {
	case <-cc.ready:
	case <-ctx.Done():
		cs.release(cc)
		return nil, ctx.Err()
	}
	if cc.err != nil {
		cs.release(cc)
		cs.mu.Lock()
		if cs.by[key] == cc {
			delete(cs.by, key)
			go cc.close()
		}
		cs.mu.Unlock()
		return nil, &failure{kind: kindExited, err: cc.err}
	}
	return cc, nil
}

// close stops the caller's child once its start is over.
func (cc *callerConn) close() {
	<-cc.ready
	_ = cc.s.close()
}

func (cs *callerConns) release(cc *callerConn) {
	cs.mu.Lock()
	cc.inflight--
	cc.last = time.Now()
	cs.mu.Unlock()
}

// evictLocked stops the longest idle caller's child that has no call in
// flight; false when every one has.
func (cs *callerConns) evictLocked() bool {
	var (
		key  string
		idle *callerConn
	)
	for k, cc := range cs.by {
		if cc.inflight == 0 && (idle == nil || cc.last.Before(idle.last)) {
			key, idle = k, cc
		}
	}
	if idle == nil {
		return false
	}
	delete(cs.by, key)
	go idle.close()
	return true
}

// reap stops the children idle for callerIdle.
func (cs *callerConns) reap() {
	t := time.NewTicker(max(callerIdle/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-cs.stop:
			return
		case now := <-t.C:
			cs.mu.Lock()
			for k, cc := range cs.by {
				if cc.inflight == 0 && now.Sub(cc.last) >= callerIdle {
					delete(cs.by, k)
					go cc.close()
				}
			}
			cs.mu.Unlock()
		}
	}
}

func (cs *callerConns) close() error {
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		return nil
	}
	cs.closed = true
	close(cs.stop)
	all := make([]*callerConn, 0, len(cs.by))
	for _, cc := range cs.by {
		all = append(all, cc)
	}
	cs.by = nil
	cs.mu.Unlock()
	var wg sync.WaitGroup
	for _, cc := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc.close()
		}()
	}
	wg.Wait()
	return cs.shared.close()
}

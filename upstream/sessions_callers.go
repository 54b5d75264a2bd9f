package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// callerSessions gives each caller an upstream session of its own
// (Options.PerCaller with a URL), for a 2025-era upstream that keeps
// state in its sessions: two callers' calls then never run in one
// session. Only tool calls whose caller can be told take one; the
// gateway's own requests (listing, probes) and the change stream stay in
// the shared session negotiate made. At most max callers have a session;
// a new one takes the place of the longest idle (its session ended with
// DELETE), and a session idle for callerIdle is ended too. A 2026-07-28
// upstream keeps no sessions: PerCaller changes nothing there.
type callerSessions struct {
	c   *client
	max int

	mu     sync.Mutex
	by     map[string]*callerSession
	closed bool
	stop   chan struct{}
}

// callerSession is one caller's upstream session.
type callerSession struct {
	inflight int
	last     time.Time
	ready    chan struct{} // closed once its first handshake is over
	err      error         // the first handshake's failure
	// session and generation, guarded by callerSessions.mu, are as the
	// client's own: generation counts the handshakes, so that of calls
	// that find the session lost at once only one makes a new one.
	session    string
	generation uint64
	renewing   sync.Mutex
}

// sessionKey carries, in a call's context, the caller's session its
// messages go in (exchange, post, cancellation).
type sessionKey struct{}

func newCallerSessions(c *client, max int) *callerSessions {
	cs := &callerSessions{c: c, max: orDefault(max, defaultMaxCallers), by: map[string]*callerSession{}, stop: make(chan struct{})}
	go cs.reap()
	return cs
}

// callerSession returns ctx carrying the caller's own session when the
// upstream takes one (PerCaller, the 2025 era, a caller that can be
// told), and the func to call when the call is over.
func (c *client) callerSession(ctx context.Context) (context.Context, func(), error) {
	if c.sessions == nil || !c.legacy || isOwn(ctx) {
		return ctx, func() {}, nil
	}
	key := callerKey(ctx)
	if key == "" {
		return ctx, func() {}, nil
	}
	s, err := c.sessions.get(ctx, key)
	if err != nil {
		return ctx, func() {}, err
	}
	return context.WithValue(ctx, sessionKey{}, s), func() { c.sessions.release(s) }, nil
}

// sessionOf returns the session a request on ctx goes in, and its
// generation: the caller's own, or the shared one.
func (c *client) sessionOf(ctx context.Context) (*callerSession, uint64, string) {
	if s, ok := ctx.Value(sessionKey{}).(*callerSession); ok {
		c.sessions.mu.Lock()
		defer c.sessions.mu.Unlock()
		return s, s.generation, s.session
	}
	generation, session := c.currentSession()
	return nil, generation, session
}

// get returns the caller's session, making it if it has none (the call
// waits for its handshake, within its own deadline).
func (cs *callerSessions) get(ctx context.Context, key string) (*callerSession, error) {
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		return nil, &failure{kind: kindClosed}
	}
	s := cs.by[key]
	if s == nil {
		if len(cs.by) >= cs.max && !cs.evictLocked() {
			cs.mu.Unlock()
			return nil, &failure{kind: kindCallers, detail: fmt.Sprint(cs.max)}
		}
		s = &callerSession{ready: make(chan struct{})}
		cs.by[key] = s
		// Not the call's deadline: the session outlives the call, and
		// one client going away must not leave it half made.
		hctx := context.WithoutCancel(ctx)
		go func() {
			s.err = cs.open(hctx, s)
			close(s.ready)
		}()
	}
	s.inflight++
	s.last = time.Now()
	cs.mu.Unlock()
	select {
	case <-s.ready:
	case <-ctx.Done():
		cs.release(s)
		return nil, ctx.Err()
	}
	if s.err != nil {
		cs.release(s)
		cs.mu.Lock()
		if cs.by[key] == s {
			delete(cs.by, key)
		}
		cs.mu.Unlock()
		var f *failure
		if !errors.As(s.err, &f) {
			f = &failure{kind: kindSessionLost, err: s.err}
		}
		return nil, f
	}
	return s, nil
}

// open makes s's session: initialize in the revision negotiate settled,
// then notifications/initialized in the new session.
func (cs *callerSessions) open(ctx context.Context, s *callerSession) error {
	c := cs.c
	ctx, cancel := context.WithTimeout(ctx, c.connectTimeout)
	defer cancel()
	got, session, _, err := c.handshakeHTTP(ctx, c.version)
	if err != nil {
		return err
	}
	if got != c.version {
		if session != "" {
			_ = c.deleteSession(session)
		}
		return &failure{kind: kindSessionLost, err: fmt.Errorf("the upstream's session for a caller is in revision %q, not %q", got, c.version)}
	}
	cs.mu.Lock()
	s.session = session
	s.generation++
	cs.mu.Unlock()
	if err := c.post(context.WithValue(ctx, sessionKey{}, s), "", initializedBody); err != nil {
		// Half made: ended, not left to the upstream's own timeout.
		if session != "" {
			_ = c.deleteSession(session)
		}
		return err
	}
	return nil
}

// renew makes a new session for s's calls that found the one of
// generation lost: the first makes it, the others use it.
func (cs *callerSessions) renew(ctx context.Context, s *callerSession, generation uint64) error {
	s.renewing.Lock()
	defer s.renewing.Unlock()
	if _, now, _ := cs.c.sessionOf(context.WithValue(ctx, sessionKey{}, s)); now != generation {
		return nil
	}
	cs.c.log.Info("upstream session of a caller lost; making a new one", "upstream", cs.c.name)
	if err := cs.open(context.WithoutCancel(ctx), s); err != nil {
		return &failure{kind: kindSessionLost, err: err}
	}
	return nil
}

func (cs *callerSessions) release(s *callerSession) {
	cs.mu.Lock()
	s.inflight--
	s.last = time.Now()
	cs.mu.Unlock()
}

// end ends s's session with DELETE once its handshake is over.
func (cs *callerSessions) end(s *callerSession) {
	<-s.ready
	cs.mu.Lock()
	session := s.session
	cs.mu.Unlock()
	if s.err == nil && session != "" {
		_ = cs.c.deleteSession(session)
	}
}

// evictLocked ends the longest idle caller's session that has no call in
// flight; false when every one has.
func (cs *callerSessions) evictLocked() bool {
	var (
		key  string
		idle *callerSession
	)
	for k, s := range cs.by {
		if s.inflight == 0 && (idle == nil || s.last.Before(idle.last)) {
			key, idle = k, s
		}
	}
	if idle == nil {
		return false
	}
	delete(cs.by, key)
	go cs.end(idle)
	return true
}

// reap ends the sessions idle for callerIdle.
func (cs *callerSessions) reap() {
	t := time.NewTicker(max(callerIdle/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-cs.stop:
			return
		case now := <-t.C:
			cs.mu.Lock()
			for k, s := range cs.by {
				if s.inflight == 0 && now.Sub(s.last) >= callerIdle {
					delete(cs.by, k)
					go cs.end(s)
				}
			}
			cs.mu.Unlock()
		}
	}
}

// close ends every caller's session.
func (cs *callerSessions) close() {
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		return
	}
	cs.closed = true
	close(cs.stop)
	all := make([]*callerSession, 0, len(cs.by))
	for _, s := range cs.by {
		all = append(all, s)
	}
	cs.by = nil
	cs.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs.end(s)
		}()
	}
	wg.Wait()
}

// deleteSession ends a 2025-era upstream's session (DELETE), within
// connectTimeout. Best effort: a server that keeps no sessions, or has
// forgotten this one, answers what it will.
func (c *client) deleteSession(session string) error {
	ctx, cancel := context.WithTimeout(own(context.Background()), c.connectTimeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return err
	}
	hreq.Header.Set("Mcp-Session-Id", session)
	hreq.Header.Set("Mcp-Protocol-Version", c.version)
	if c.creds != nil {
		if err := c.creds.apply(ctx, hreq.Header); err != nil {
			return err
		}
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

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
// DELETE), and a session idle for five minutes is ended too. A 2026-07-28
// upstream keeps no sessions: PerCaller changes nothing there.
type callerSessions struct {
	c *client
	*callerPool[*callerSession]
}

// callerSession is one caller's upstream session.
type callerSession struct {
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

func newCallerSessions(c *client, max int, idle time.Duration) *callerSessions {
	cs := &callerSessions{c: c}
	cs.callerPool = newCallerPool(max, idle, callerHooks[*callerSession]{
		value: func(string) *callerSession { return &callerSession{} },
		// Not the call's deadline: the session outlives the call, and
		// one client going away must not leave it half made.
		open: func(ctx context.Context, s *callerSession) error { return cs.open(context.WithoutCancel(ctx), s) },
		end:  cs.end,
		failed: func(err error) error {
			var f *failure
			if !errors.As(err, &f) {
				f = &failure{kind: kindSessionLost, err: err}
			}
			return f
		},
	})
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
	e, err := c.sessions.get(ctx, key)
	if err != nil {
		return ctx, func() {}, err
	}
	return context.WithValue(ctx, sessionKey{}, e.v), func() { c.sessions.release(e) }, nil
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

// end ends s's session with DELETE, if its handshake made one.
func (cs *callerSessions) end(s *callerSession, err error) {
	cs.mu.Lock()
	session := s.session
	cs.mu.Unlock()
	if err == nil && session != "" {
		_ = cs.c.deleteSession(session)
	}
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

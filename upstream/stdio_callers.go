package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// callerConns gives each caller a child of its own (Options.PerCaller):
// a stateful server (a memory, a browser, a shell's working directory)
// then never mixes two callers' state. The gateway's own requests
// (listing, probes) and calls whose caller cannot be told go to the shared
// child, the one Connect starts. At most max callers have a child; a new
// one takes the place of the longest idle, and a child idle for five
// minutes is stopped.
type callerConns struct {
	shared *stdioConn
	*callerPool[*stdioConn]
}

// callerHash is the tag of a caller's child (callerTag): 16 hex digits of
// the SHA-256 of its identity, which may be a file's name and says
// nothing of whom.
func callerHash(key string) string {
	sum := sha256.Sum256([]byte("wymcp caller\x00" + key))
	return hex.EncodeToString(sum[:8])
}

func newCallerConns(c *client, shared *stdioConn, spec childSpec, max int, idle time.Duration) *callerConns {
	return &callerConns{shared: shared, callerPool: newCallerPool(max, idle, callerHooks[*stdioConn]{
		// spec has callerTag not yet replaced.
		value: func(key string) *stdioConn {
			s := &stdioConn{c: c, spec: spec.forCaller(callerHash(key)), sys: shared.sys, answering: make(chan struct{}, maxAnswering),
				first: make(chan error, 1), negotiated: true, perCaller: true}
			s.stderrLog.Interval = shared.stderrLog.Interval
			return s
		},
		// Not the call's deadline: the child outlives the call.
		open: func(_ context.Context, s *stdioConn) error {
			ctx, cancel := context.WithTimeout(own(context.Background()), c.connectTimeout)
			defer cancel()
			return s.open(ctx)
		},
		end:    func(s *stdioConn, _ error) { _ = s.close() },
		failed: func(err error) error { return &failure{kind: kindExited, err: err} },
	})}
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
	e, err := cs.get(ctx, key)
	if err != nil {
		return message{}, "", err
	}
	defer cs.release(e)
	return e.v.exchange(ctx, req, session)
}

func (cs *callerConns) post(ctx context.Context, method string, body []byte) error {
	if ch, ok := ctx.Value(handshakeKey{}).(*child); ok {
		return ch.conn.post(ctx, method, body)
	}
	return cs.shared.post(ctx, method, body)
}

// close stops every caller's child, then the shared one (once).
func (cs *callerConns) close() error {
	if !cs.callerPool.close() {
		return nil
	}
	return cs.shared.close()
}

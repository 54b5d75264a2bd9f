package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The stop on SIGTERM: the drain of docs/design.md §6a, with the parts
// that need the listener and the connections, which the library cannot
// own (a wymcp.Server is a handler). The timeline, with D = -drain-delay
// and T = -shutdown-timeout:
//
//	t = 0      The server is a lame duck: /readyz answers 503 and every
//	           answer carries "Connection: close" (the MCP endpoint sets it
//	           when it writes an answer's headers, so a call admitted
//	           earlier and answered now closes its connection too).
//	           By default the listener closes now: new connections are
//	           refused, and a proxy resends a refused call elsewhere,
//	           since nothing was sent. With -drain-accept it stays open.
//	t < D      Each keep-alive connection carries at most one more call,
//	           then net/http closes it after the answer; an idle one is
//	           closed by its peer (nginx's upstream keepalive_timeout, 3 s
//	           in deploy/nginx/wymcp.conf, is shorter than D). With the
//	           listener closed, the delay ends early once no connection
//	           is left: there is nothing more to drain.
//	t = D      The listener closes (if still open). Then, within T: wait
//	           until no connection is new or idle (each is closed by its
//	           peer, carries its call, or has been idle for D, longer than
//	           any peer's keep-alive the delay was chosen to outlast); then
//	           http.Server.Shutdown waits for the calls in flight, whose
//	           answers close their connections; then the MCP server stops
//	           its actors. Exit 0.
//	t = D + T  If calls are still running, the MCP server cuts them short
//	           (wymcp.Server.Shutdown): each gets its answer, HTTP 200 and
//	           an isError result saying the server is shutting down, as
//	           its JSON body or its stream's last event, written within
//	           -write-timeout; its tool's context is cancelled. The
//	           handlers of tools that honour it return; closeGrace later
//	           the connections still held by tools that do not are closed,
//	           their answers already sent. Exit 0: every call admitted was
//	           answered.
//
// Exit statuses: 0 for a stop in which every call admitted was answered,
// as above; 1 when serving failed (the listener, or the stop itself); 2
// for a bad command line (main.go). A second SIGTERM or SIGINT ends the
// process at once, killed by that signal (main), whatever is in flight.
//
// Why this order, measured behind nginx with e2e/nginx (deploy/nginx/README.md):
// net/http's Shutdown closes idle connections at once and drops a request
// it reads after it began, so a call already on the wire to an idle
// connection is lost (nginx: "upstream prematurely closed"); it is called
// only once no connection can still deliver a new request. Closing a
// listener resets the connections still in the kernel's accept queue, and
// those may carry a call too: nginx open source never probes /readyz and
// keeps opening one connection per call to a draining replica, so the
// listener closes when that is rarest, at SIGTERM, while nginx still
// reuses its connections. A balancer that routes by readiness (a
// Kubernetes Service) needs the opposite: it still sends new connections
// for a moment after SIGTERM, and they must be served: -drain-accept.

// drainPoll is how often the stop looks at the connections while it waits
// for them: a drain lasts seconds, and a poll costs one pass over them.
const drainPoll = 10 * time.Millisecond

// connTracker follows an http.Server's connections through its ConnState
// hook: their state, and since when they have been new or idle. Outside a
// drain the hook costs a map load and an atomic store per state change
// (two per request), with no lock shared between connections.
type connTracker struct {
	conns    sync.Map // net.Conn → *trackedConn
	count    atomic.Int64
	draining atomic.Bool
	began    atomic.Int64 // the drain's start, Unix nanoseconds
}

type trackedConn struct {
	// since is when the connection was accepted, or, once the drain has
	// begun, when it last turned idle. Stored before state, read after it.
	since atomic.Int64
	state atomic.Int32 // an http.ConnState
}

// track is the http.Server's ConnState hook.
func (t *connTracker) track(c net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		tc := &trackedConn{}
		tc.since.Store(time.Now().UnixNano())
		tc.state.Store(int32(s))
		t.conns.Store(c, tc)
		t.count.Add(1)
	case http.StateHijacked, http.StateClosed:
		if _, ok := t.conns.LoadAndDelete(c); ok {
			t.count.Add(-1)
		}
	default:
		v, ok := t.conns.Load(c)
		if !ok {
			return
		}
		tc := v.(*trackedConn)
		if s == http.StateIdle && t.draining.Load() {
			tc.since.Store(time.Now().UnixNano())
		}
		tc.state.Store(int32(s))
	}
}

// beginDrain marks the start of the drain: from now on the hook records
// when connections turn idle.
func (t *connTracker) beginDrain(now time.Time) {
	t.began.Store(now.UnixNano())
	t.draining.Store(true)
}

// open is the number of connections not yet closed.
func (t *connTracker) open() int64 { return t.count.Load() }

// waiting returns the connections that may still deliver a request, new or
// idle for less than patience, and when the first of them runs out of it.
// A connection idle since before the drain counts as idle since its start.
func (t *connTracker) waiting(now time.Time, patience time.Duration) (n int, next time.Time) {
	began := t.began.Load()
	t.conns.Range(func(_, v any) bool {
		tc := v.(*trackedConn)
		state := http.ConnState(tc.state.Load())
		since := tc.since.Load()
		switch state {
		case http.StateIdle:
			since = max(since, began)
		case http.StateNew:
		default:
			return true
		}
		if until := time.Unix(0, since).Add(patience); until.After(now) {
			if n == 0 || until.Before(next) {
				next = until
			}
			n++
		}
		return true
	})
	return n, next
}

// waitQuiet waits until no connection may still deliver a request (see
// waiting), or ctx ends.
func (t *connTracker) waitQuiet(ctx context.Context, patience time.Duration) {
	for {
		n, _ := t.waiting(time.Now(), patience)
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(drainPoll):
		}
	}
}

// closeGrace is how long, after the calls still running at -shutdown-timeout
// were cut short and answered, the stop waits for their handlers to return
// before it closes their connections: a tool that honours its context
// returns at once, and its handler then ends its answer (a stream's last
// chunk) and closes the connection itself.
const closeGrace = time.Second

// quiesceBound bounds the wait for the accept queue to empty before the
// listener closes (listener_linux.go): http.Server.Serve empties it in
// microseconds unless the machine is starved.
const quiesceBound = time.Second

// closeOnceListener lets the stop close the listener before
// http.Server.Shutdown does, which then gets nil instead of an error; and
// closes it without resetting the connections waiting to be accepted
// (quiesce).
type closeOnceListener struct {
	net.Listener
	once   sync.Once
	err    error
	closed atomic.Bool
}

func (l *closeOnceListener) Close() error {
	l.once.Do(func() {
		quiesce(l.Listener, quiesceBound)
		l.closed.Store(true)
		l.err = l.Listener.Close()
	})
	return l.err
}

// servedUntilClosed reports whether err, from http.Server.Serve, only says
// that the listener was closed by the stop.
func (l *closeOnceListener) servedUntilClosed(err error) bool {
	return errors.Is(err, http.ErrServerClosed) || (l.closed.Load() && errors.Is(err, net.ErrClosed))
}

// drainer is what the stop drains and shuts down: every view of the
// gateway together (gateway.Gateway; a *wymcp.Server is one too).
type drainer interface {
	Drain(context.Context) error
	Shutdown(context.Context) error
	Draining() bool
}

// stopper holds what the stop needs.
type stopper struct {
	hs      *http.Server
	ln      *closeOnceListener
	conns   *connTracker
	srv     drainer
	logger  *slog.Logger
	delay   time.Duration // -drain-delay
	accept  bool          // -drain-accept
	timeout time.Duration // -shutdown-timeout
}

// stop runs the timeline above and returns nil for a clean stop.
func (s *stopper) stop() error {
	began := time.Now()
	s.conns.beginDrain(began)
	// The library's lame duck: readiness and Connection: close. The
	// Server has no DrainDelay of its own here, so this returns at once;
	// the delay is timed below, where the connections can be watched.
	_ = s.srv.Drain(context.Background())
	listener := "closed"
	if s.accept {
		listener = "accepting until the delay ends"
	} else {
		_ = s.ln.Close()
	}
	s.logger.Info("draining", "delay", s.delay, "listener", listener, "connections", s.conns.open(), "shutdown_timeout", s.timeout)

	s.waitDelay(began)
	_ = s.ln.Close()

	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	s.conns.waitQuiet(ctx, s.delay)
	quiet := time.Since(began)
	if err := s.finish(ctx); err != nil {
		return err
	}
	s.logger.Info("drained", "quiet_after", quiet.Round(time.Millisecond), "took", time.Since(began).Round(time.Millisecond))
	return nil
}

// finish waits until ctx ends for the calls in flight to be answered and
// their handlers to return (http.Server.Shutdown), then stops the MCP
// server. When ctx ends first, the MCP server's Shutdown cuts the calls
// still running short, answering each before it returns; their handlers
// have closeGrace to return, then the connections are closed.
func (s *stopper) finish(ctx context.Context) error {
	hctx, stopWaiting := context.WithCancel(context.Background())
	defer stopWaiting()
	handlers := make(chan error, 1)
	go func() { handlers <- s.hs.Shutdown(hctx) }()
	select {
	case err := <-handlers:
		if err != nil {
			return errors.Join(errors.New("http shutdown"), err)
		}
		// Nothing is in flight: this stops the actors and returns nil.
		_ = s.srv.Shutdown(ctx)
		return nil
	case <-ctx.Done():
	}
	// Past -shutdown-timeout with calls running: ctx has ended, so this
	// answers them (the cut) and returns ctx's error, which says only that.
	_ = s.srv.Shutdown(ctx)
	select {
	case <-handlers:
		return nil
	case <-time.After(closeGrace):
	}
	// Tools that ignore their context hold their handlers; their calls are
	// answered, so their connections may go.
	s.logger.Warn("closing the connections of calls answered as cut short whose tools are still running", "connections", s.conns.open())
	stopWaiting()
	<-handlers
	_ = s.hs.Close()
	return nil
}

// waitDelay waits until the drain delay has passed since began; with the
// listener closed, it ends as soon as no connection is left, since none
// can come any more.
func (s *stopper) waitDelay(began time.Time) {
	end := began.Add(s.delay)
	for {
		left := time.Until(end)
		if left <= 0 || (!s.accept && s.conns.open() == 0) {
			return
		}
		time.Sleep(min(left, drainPoll))
	}
}

// closeWhileDraining adds "Connection: close" to every answer of h once the
// drain has begun: the health endpoints, the mux's own 404s, 405s and
// redirects. Those are written at once, so checking on arrival is checking
// when their headers are written; the MCP endpoint, whose calls may run for
// a minute, sets the header itself when it writes (transport.closeIfDraining).
func closeWhileDraining(srv drainer, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if srv.Draining() {
			w.Header()["Connection"] = []string{"close"}
		}
		h.ServeHTTP(w, r)
	})
}

// healthz is the liveness endpoint: 200 while the process serves HTTP,
// draining included, so that an orchestrator never restarts a server for
// draining. Like /readyz it is outside the MCP request path: no Host
// check, no authentication, no span.
func healthz(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr["Content-Type"] = []string{"text/plain; charset=utf-8"}
	hdr["Cache-Control"] = []string{"no-store"}
	_, _ = w.Write([]byte("ok\n"))
}

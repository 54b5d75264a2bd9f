package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// childActor owns a stdio upstream's child process: it starts it (and
// runs its handshake) when it starts, fails when the child exits, and
// stops the child when it stops. Its supervisor (restarts) restarts it,
// which starts a new child.
type childActor struct{ s *stdioConn }

// childExited tells the actor that a child it started has exited.
type childExited struct{ ch *child }

func (a childActor) Receive(ctx actor.Context) {
	s := a.s
	switch m := ctx.Message().(type) {
	case *actor.Started:
		if err := s.start(ctx.ActorSystem(), ctx.Self()); err != nil {
			panic(err)
		}
	case *childExited:
		s.mu.Lock()
		mine := s.owned == m.ch
		s.mu.Unlock()
		if mine {
			panic(m.ch.why)
		}
	case *actor.Restarting:
		// A child that failed its handshake or stopped answering is
		// killed already; one that exited is gone.
		if ch := s.disown(); ch != nil {
			ch.kill(errors.New("the gateway restarted it"))
			select {
			case <-ch.dead:
			case <-time.After(stopGrace):
				ch.proc.killReaper()
				<-ch.dead
			}
		}
	case *actor.Stopping:
		if ch := s.disown(); ch != nil {
			s.stopChild(ch)
		}
	}
}

// disown takes the actor's child from the calls: none goes to it from now.
func (s *stdioConn) disown() *child {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.owned
	s.owned, s.ready = nil, nil
	return ch
}

// startSupervision spawns the child's actor under its supervisor, in
// s.sys.
func startSupervision(s *stdioConn) *actor.PID {
	s.sup = &restarts{s: s}
	props := actor.PropsFromProducer(func() actor.Actor { return childActor{s: s} }, actor.WithGuardian(s.sup))
	return s.sys.Root.Spawn(props)
}

// newActorSystem is the actor system of a stdio upstream's children.
func newActorSystem() *actor.ActorSystem {
	return actor.NewActorSystemWithConfig(&actor.Config{
		DeadLetterThrottleInterval: time.Second,
		DeadLetterThrottleCount:    3,
		DiagnosticsSerializer:      func(actor.Actor) string { return "" },
		// The supervisor logs what happens to the child itself (restarts).
		LoggerFactory: func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) },
	})
}

// start runs a new child and its handshake: the revision negotiated the
// first time (Connect's), the same one each time after. The child is
// ready, and calls go to it, once the handshake is done.
func (s *stdioConn) start(sys *actor.ActorSystem, self *actor.PID) error {
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		return nil
	}
	ch, out, errOut, err := s.spec.spawn()
	if err != nil {
		return fmt.Errorf("starting %s: %w", s.spec.path, err)
	}
	ch.conn = s
	s.mu.Lock()
	s.owned = ch
	s.mu.Unlock()
	go s.read(ch, out)
	go s.stderr(ch.pidNum, errOut)
	go s.wait(ch, func() { sys.Root.Send(self, &childExited{ch: ch}) })
	ctx, cancel := context.WithTimeout(context.WithValue(own(context.Background()), handshakeKey{}, ch), s.c.connectTimeout)
	defer cancel()
	if err := s.handshake(ctx); err != nil {
		ch.kill(fmt.Errorf("its handshake failed: %w", err))
		<-ch.dead
		return fmt.Errorf("handshake: %w", err)
	}
	s.mu.Lock()
	if s.owned == ch && !s.closing {
		s.ready = ch
		if s.readied != nil {
			close(s.readied)
			s.readied = nil
		}
	}
	if s.starts != nil {
		select {
		case s.starts <- ch.pidNum:
		default:
		}
	}
	s.mu.Unlock()
	go s.health(ch)
	// A new child may list other tools than the last.
	s.tellChanged()
	s.c.log.Info("upstream child started", "upstream", s.c.name, "pid", ch.pidNum, "version", s.c.version)
	s.opened(nil)
	return nil
}

// opened gives Connect the first start's outcome, once; it reports
// whether this was the first.
func (s *stdioConn) opened(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return false
	}
	s.started = true
	s.first <- err
	return true
}

// handshake negotiates with a new child: the first child as Connect does
// an HTTP upstream (negotiate); a restarted one in the revision its
// calls were made in.
func (s *stdioConn) handshake(ctx context.Context) error {
	if !s.negotiated {
		if err := s.c.negotiate(ctx); err != nil {
			return err
		}
		s.negotiated = true
		return nil
	}
	if s.c.legacy {
		return s.c.initialize(ctx, true)
	}
	ok, err := s.c.discover(ctx)
	if !ok && err == nil {
		err = errors.New("it no longer serves the revision its calls are in")
	}
	return err
}

// wait waits for the child to exit and its output to be read, then fails
// its calls in flight (they see dead) and tells the actor.
func (s *stdioConn) wait(ch *child, tell func()) {
	err := ch.proc.wait()
	close(ch.exited)
	// Its output is read to its end first, so that an answer it wrote
	// before it exited is the answer (the reaper ends every process that
	// could hold the pipe; the bound is for one that escaped it).
	select {
	case <-ch.readDone:
	case <-time.After(time.Second):
	}
	ch.killOnce.Do(func() {
		if err == nil {
			err = errors.New("it exited")
		}
		ch.why = fmt.Errorf("its process ended: %w", err)
	})
	ch.stdin.Close()
	s.mu.Lock()
	if s.ready == ch {
		s.ready = nil
		// The supervisor sets when the next start is; until it does,
		// calls are told "in a moment".
		s.retryAt = time.Now()
	}
	s.mu.Unlock()
	close(ch.dead)
	tell()
}

// stopChild stops a child the gateway no longer needs (Close, a reload
// that removed the upstream): its stdin closed, then, each after
// stopGrace, SIGTERM and SIGKILL to its process group.
func (s *stdioConn) stopChild(ch *child) {
	ch.killOnce.Do(func() { ch.why = errors.New("the gateway stopped it") })
	ch.writing <- struct{}{} // no line is being written: the close cuts none
	ch.stdin.Close()
	<-ch.writing
	steps := []func(){ch.proc.terminate, ch.proc.kill, ch.proc.killReaper}
	for _, step := range steps {
		select {
		case <-ch.dead:
			return
		case <-time.After(stopGrace):
		}
		step()
	}
	<-ch.dead
}

// restarts is the supervisor strategy of a stdio upstream's child
// (docs/design.md §10d): each failure restarts it after a wait that
// doubles per failure in a row (restartFirst up to restartMax); past
// restartBudget failures within restartWindow the upstream is down, its
// calls answered at once, and it is tried afresh after downWait.
type restarts struct {
	s     *stdioConn
	mu    sync.Mutex
	fails []time.Time
}

var _ actor.SupervisorStrategy = (*restarts)(nil)

func (r *restarts) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, pid *actor.PID, _ *actor.RestartStatistics, reason, _ any) {
	s := r.s
	why, ok := reason.(error)
	if !ok {
		why = fmt.Errorf("%v", reason)
	}
	now := time.Now()
	r.mu.Lock()
	kept := r.fails[:0]
	for _, t := range r.fails {
		if now.Sub(t) < restartWindow {
			kept = append(kept, t)
		}
	}
	r.fails = append(kept, now)
	n := len(r.fails)
	wait, down := restartFirst<<min(n-1, 30), false
	if wait > restartMax || wait <= 0 {
		wait = restartMax
	}
	if n > restartBudget {
		wait, down = downWait, true
		r.fails = nil
	}
	r.mu.Unlock()

	s.mu.Lock()
	s.ready = nil
	s.retryAt = now.Add(wait)
	closing, early := s.closing, s.restartNow
	s.mu.Unlock()
	if s.opened(why) {
		// Connect's first start failed: Connect says so, and closes.
		return
	}
	if closing {
		return
	}
	if down {
		s.c.log.Error("upstream child down: it failed too often; its tools are answered as unavailable until it is tried again",
			"upstream", s.c.name, "error", why.Error(), "failures", n, "within", restartWindow.String(), "retry_in", wait.String())
	} else {
		s.c.log.Warn("upstream child failed; restarting it", "upstream", s.c.name, "error", why.Error(), "failures", n, "retry_in", wait.String())
	}
	if early == nil {
		time.AfterFunc(wait, func() { sup.RestartChildren(pid) })
		return
	}
	go func() {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-early:
		}
		sup.RestartChildren(pid)
	}()
}

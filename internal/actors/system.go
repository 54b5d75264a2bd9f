package actors

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/wymcp/wymcp/internal/config"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
)

// maxIdleCallWorkers bounds the idle tools/call workers kept for the next
// burst (~850 bytes each).
const maxIdleCallWorkers = 1024

// deadlineGrace is how long past a tool's deadline the front waits before
// answering for a tool that ignores its context (docs/design.md §4: nothing
// holds a reply forever).
const deadlineGrace = time.Second

// methodFunc answers one call. It runs inside an actor; a panic in it is
// contained by the strategy.
type methodFunc func(*Call) Reply

// System is the actor system of one server.
type System struct {
	sys        *actor.ActorSystem
	supervisor *actor.PID
	pools      map[string]*pool
	// workerProps are the props of pool workers, kept for spawnPool.
	workerProps *actor.Props
	calls       *callPool
	watchdog    *watchdog
	tables      *tables
	logger      *slog.Logger
	stopOnce    sync.Once

	// The cut (cut.go): cutting once a shutdown's time is up; cutReply is
	// the answer it gives; late counts the answers being written for
	// calls whose tools still run (the watchdog's and the cut's).
	cutMu    sync.Mutex
	cutting  atomic.Bool
	cutReply Reply
	// cutLegacy is cutReply in the 2025 era's shape.
	cutLegacy Reply
	late      lateWrites
	// taken, when set (by tests, before the first call), is called by the
	// late paths, the watchdog's answer and the cut, with each call they
	// have taken and not yet answered: the moment its requester may
	// return and reuse the request's buffers (Call.Request).
	taken func(*Call)
}

type pool struct {
	pids []*actor.PID
	next atomic.Uint32
}

func (p *pool) pick() *actor.PID {
	return p.pids[int(p.next.Add(1))%len(p.pids)]
}

// New builds the actor system, the supervisor and its method workers, and
// precomputes the server/discover and tools/list answers.
func New(cfg *config.Server) (*System, error) {
	logger := cfg.Logger
	tables, err := precompute(cfg)
	if err != nil {
		return nil, err
	}
	s := &System{logger: logger, pools: map[string]*pool{}}
	s.tables = tables
	s.cutReply = tables.callResult(false, cutOutcome())
	s.cutLegacy = tables.callResult(true, cutOutcome())

	quiet := slog.New(levelFloor{h: logger.Handler(), min: slog.LevelWarn})
	s.sys = actor.NewActorSystemWithConfig(&actor.Config{
		DeadLetterThrottleInterval: time.Second,
		DeadLetterThrottleCount:    3,
		DeadLetterRequestLogging:   false,
		DiagnosticsSerializer:      func(actor.Actor) string { return "" },
		LoggerFactory:              func(*actor.ActorSystem) *slog.Logger { return quiet },
	})
	shrinkRegistry(s.sys)

	// Method workers run on the goroutine that sends to them: the request's
	// own, which would otherwise only wait. For server/discover and
	// tools/list the work is copying bytes; for tools/call it is the tool,
	// which may block, but each call leases a worker of its own (callPool),
	// so a blocked tool holds only its own request. The hand-off to another
	// goroutine cost two context switches per call and made the tail under
	// load (bench/README.md). The supervisor, whose work is spawning and
	// restarting, gets goroutines from a pooled dispatcher.
	inline := actor.NewSynchronizedDispatcher(300)
	dispatcher := newPooledDispatcher(300, 30*time.Second)
	workers := cfg.Workers
	// Every actor has wymcp's mailbox (mailbox.go): it schedules without
	// allocating, and captures a panic's stack for the strategy.
	workerProps := actor.PropsFromProducer(func() actor.Actor { return methodActor{} },
		actor.WithMailbox(newMailbox), actor.WithDispatcher(inline))
	supProps := actor.PropsFromProducer(func() actor.Actor { return supervisorActor{} },
		actor.WithSupervisor(&containment{logger: logger}), actor.WithMailbox(newMailbox), actor.WithDispatcher(dispatcher))
	s.supervisor = s.sys.Root.Spawn(supProps)

	methods := map[string]methodFunc{
		wire.MethodDiscover:  tables.discover,
		wire.MethodToolsList: tables.listTools,
	}
	if cfg.Versions.ServesLegacy() {
		methods[wire.MethodInitialize] = tables.initialize
		methods[wire.MethodPing] = tables.ping
	}
	s.workerProps = workerProps
	for name, fn := range methods {
		if err := s.spawnPool(name, workers, fn); err != nil {
			s.sys.Shutdown()
			return nil, err
		}
	}
	// Call workers are supervised by the same containment strategy, as
	// their guardian: a fault restarts the worker and returns it to the pool.
	s.calls = newCallPool(shardCount(), maxIdleCallWorkers, nil, func(pid *actor.PID) { s.sys.Root.Stop(pid) })
	callTool := methodFunc(tables.callTool)
	callProps := actor.PropsFromProducer(func() actor.Actor { return callActor{fn: callTool, pool: s.calls} },
		actor.WithMailbox(newMailbox), actor.WithDispatcher(inline),
		actor.WithGuardian(&containment{logger: logger, restarted: s.calls.put}))
	s.calls.spawn = func() *actor.PID { return s.sys.Root.Spawn(callProps) }
	// The watchdog's reply settles the call, for Ask when the tool returns
	// at last (its own reply then finds the call settled and is dropped),
	// and goes to call.Late, which writes it now (answerLate). Rare: only
	// tools that ignore their deadline come here.
	// Like the cut's, this answer reads only what the Call owns (its era,
	// its tool): the call is out of the watchdog's lists, so its requester
	// may have returned meanwhile (Call.Request).
	s.watchdog = newWatchdog(shardCount(), func(c *Call) {
		if s.taken != nil {
			s.taken(c)
		}
		s.answerLate(c, s.tables.callResult(c.legacy, c.Tool.DeadlineOutcome()))
	}, s.lateFault)
	return s, nil
}

// lateFault logs a panic while answering for a call whose tool still runs
// (answerLate): nobody else would see it.
func (s *System) lateFault(r any) {
	s.logger.Error("wymcp: answering an overdue call failed", slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
}

// spawnPool has the supervisor start n workers answering method with fn.
func (s *System) spawnPool(method string, n int, fn methodFunc) error {
	res, err := s.sys.Root.RequestFuture(s.supervisor,
		&spawnWorkers{n: n, props: s.workerProps, method: fn}, 10*time.Second).Result()
	if err != nil {
		return fmt.Errorf("wymcp: starting %s workers: %w", method, err)
	}
	s.pools[method] = &pool{pids: res.([]*actor.PID)}
	return nil
}

// HasMethod reports whether method is in the method table of its era:
// server/discover, tools/list and tools/call for a 2026-07-28 request;
// initialize, ping, tools/list and tools/call for a 2025-era one (legacy),
// which only a server serving that era receives.
func (s *System) HasMethod(method string, legacy bool) bool {
	switch method {
	case wire.MethodToolsCall, wire.MethodToolsList:
		return true
	case wire.MethodDiscover:
		return !legacy
	case wire.MethodInitialize, wire.MethodPing:
		return legacy
	}
	return false
}

// Ask has call answered by its method's actor and returns the reply, or
// call.Ctx's error when the client went away first. A tools/call runs in a
// worker of its own, the other methods in their method's pool; both run on
// the calling goroutine. A tool that ignores its deadline is answered for
// by the watchdog, through call.Late, while Ask still waits for it to
// return; so is a call that a shutdown cuts short (Cut). The caller must
// have checked HasMethod.
func (s *System) Ask(call *Call) (Reply, error) {
	parent := call.Ctx
	if call.Request.Method == wire.MethodToolsCall {
		if call.Tool != nil {
			// The tool's deadline bounds its context here, once: the tool
			// runner sees the deadline and sets no timer of its own, and the
			// watchdog answers if the tool ignores it.
			call.tctx.init(call.Ctx, call.Tool.Deadline())
			call.tctx.call = call
			// What a late path answers by is taken now, while Request is
			// certainly this call's (Call.Request).
			call.legacy = s.tables.era(call) != nil
			defer call.tctx.release()
			call.Ctx = &call.tctx
			s.watchdog.watch(call)
			defer s.watchdog.forget(call)
			// Read after watch: a Cut either finds the call watched or has
			// set the flag before this reads it.
			if s.cutting.Load() {
				// The shutdown's time is up (Cut): a call admitted just
				// before is answered as the others were, without its tool.
				call.settle(s.cutFor(call))
				r, _ := call.wait(nil)
				return r, nil
			}
		}
		// The worker runs on this goroutine (see New): Send returns once
		// the tool has, with the call answered.
		s.sys.Root.Send(s.calls.get(), call)
		if err := parent.Err(); err != nil {
			// The client went away while the tool ran: nobody reads.
			return Reply{}, err
		}
	} else {
		s.sys.Root.Send(s.pools[call.Request.Method].pick(), call)
	}
	// Settled by now, unless a restart or a stop raced the message and
	// another goroutine runs the worker's mailbox: then wait waits.
	if r, ok := call.wait(parent.Done()); ok {
		return r, nil
	}
	return Reply{}, parent.Err()
}

// Shutdown stops every actor; a second call does nothing. Calls still
// running lose their actors, so the front must first have drained them
// (wymcp.Server.Shutdown does).
func (s *System) Shutdown(context.Context) {
	s.stopOnce.Do(func() {
		s.watchdog.close()
		s.sys.Shutdown()
	})
}

// spawnWorkers asks the supervisor to start n workers of a method.
type spawnWorkers struct {
	n      int
	props  *actor.Props
	method methodFunc
}

// supervisorActor owns the method workers; its props carry the
// containment strategy that handles their failures.
type supervisorActor struct{}

func (supervisorActor) Receive(c actor.Context) {
	if m, ok := c.Message().(*spawnWorkers); ok {
		pids := make([]*actor.PID, m.n)
		for i := range pids {
			fn := m.method
			pids[i] = c.Spawn(m.props.Clone(actor.WithProducer(func() actor.Actor { return methodActor{fn: fn} })))
		}
		c.Respond(pids)
	}
}

// methodActor is a pool worker of a precomputed method. It is stateless, so
// a restart after a fault loses nothing.
type methodActor struct{ fn methodFunc }

func (a methodActor) Receive(c actor.Context) {
	if call, ok := c.Message().(*Call); ok {
		call.settle(a.fn(call))
	}
}

// callActor runs one tools/call at a time, then returns itself to the
// pool of idle call workers.
type callActor struct {
	fn   methodFunc
	pool *callPool
}

func (a callActor) Receive(c actor.Context) {
	if call, ok := c.Message().(*Call); ok {
		call.settle(a.fn(call))
		a.pool.put(c.Self())
	}
}

// SetTools replaces the tools/list answers with those of set: the lists
// are built first, then published at once, so a tools/list answers from
// the old set or the new one, never a mix. Calls name their tool
// themselves (the front resolves it): a call already resolved runs with
// the tool it named. It reports whether the lists changed: whether some
// caller's tools/list may now answer otherwise (listing.sum).
func (s *System) SetTools(set *toolrun.Set) (changed bool, err error) {
	l, err := s.tables.buildLists(set)
	if err != nil {
		return false, err
	}
	old := s.tables.lists.Swap(l)
	return old == nil || old.sum != l.sum, nil
}

// SetListTTL makes ttl the ttlMs of the tools/list answers, rebuilding
// those of set (the one served now) with it. The lists show the same
// tools, so no listen stream is told (listing.sum leaves the ttl out).
// It is serialized with SetTools by the caller.
func (s *System) SetListTTL(set *toolrun.Set, ttl time.Duration) error {
	old := s.tables.params.ttlMs
	s.tables.params.ttlMs = max(ttl, 0).Milliseconds()
	l, err := s.tables.buildLists(set)
	if err != nil {
		s.tables.params.ttlMs = old
		return err
	}
	s.tables.lists.Store(l)
	return nil
}

// ServerMeta is the result _meta that names the server.
func (s *System) ServerMeta() wire.RawJSON { return s.tables.serverMeta }

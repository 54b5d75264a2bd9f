package actors

import (
	"context"
	"log/slog"
	"runtime/debug"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/wymcp/wymcp/internal/toolrun"
)

// containment is the supervisor strategy of docs/design.md §4. On a child's
// failure it answers the failing call -32603 with its id, records the crash
// reason on the call's span and the log, then restarts the child: a method
// worker, or a tools/call worker, which goes back to its pool. Restarting a
// stateless worker loses nothing and clears whatever the fault may have left
// behind.
//
// Unlike protoactor's OneForOne it keeps no restart statistics: a method
// is never stopped for good, whatever the fault rate, because a server that
// stops answering a method after ten panics turns a bug into an outage.
type containment struct {
	logger *slog.Logger
	// restarted, when set, is told of each restarted child: call workers
	// go back to their pool, since the call they faulted on is answered.
	restarted func(*actor.PID)
}

var _ actor.SupervisorStrategy = (*containment)(nil)

// HandleFailure implements actor.SupervisorStrategy. For a call worker it
// runs on the failing goroutine (the guardian calls it synchronously), where
// a panic would end the process; so it recovers its own, and restarts the
// child whatever happens.
func (s *containment) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, message any) {
	defer func() {
		if r := recover(); r != nil {
			s.logger.Error("wymcp: containment strategy failed", slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
		}
		sup.RestartChildren(child)
		if s.restarted != nil {
			s.restarted(child)
		}
	}()
	fault, ok := reason.(*toolrun.Fault)
	if !ok {
		fault = &toolrun.Fault{Value: reason}
	}
	call, _ := message.(*Call)
	if call == nil {
		if env, ok := message.(*actor.MessageEnvelope); ok {
			call, _ = env.Message.(*Call)
		}
	}
	if call == nil {
		// A fault on a message that carries no request (a lifecycle message):
		// nobody waits for it, but the operator must still see it.
		s.logger.Error("wymcp: contained fault outside a request",
			slog.Any("exception.message", fault.Value), slog.String("exception.stacktrace", string(fault.Stack)))
		return
	}
	// Record before answering: once answered, the request goroutine ends the
	// span, and an event added after End is lost. Deferred, the answer still
	// goes out if recording itself fails.
	defer call.settle(internalError)
	if call.Op != nil {
		call.Op.Fault(context.WithoutCancel(call.Ctx), "supervisor", fault.Value, fault.Stack)
	}
}

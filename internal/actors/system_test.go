package actors

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/wymcp/wymcp/internal/config"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

func newTestSystem(t *testing.T) *System {
	t.Helper()
	set, err := tools.NewSet()
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(&config.Server{
		Info: protocol.Implementation{Name: "t", Version: "1"}, Tools: set, PageSize: 100,
		CacheTTL: time.Minute, Logger: slog.New(slog.DiscardHandler), Workers: 2,
		StateKeys: [][]byte{make([]byte, 32)}, StateTTL: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

func ask(t *testing.T, s *System, method string, id int64) Reply {
	t.Helper()
	req := &wire.Request{ID: wire.NewIntID(id), Method: method}
	a, err := s.Ask(NewCall(context.Background(), req, nil, nil))
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	return a
}

// TestPoolWorkerFaults: a pool worker that panics on every message is
// answered -32603 with each request's id and restarted each time — a
// thousand faults in a row, then the method still answers, and a method in
// another pool was never affected. protoactor's default strategy would have
// stopped the worker after the tenth.
func TestPoolWorkerFaults(t *testing.T) {
	t.Parallel()
	s := newTestSystem(t)
	if err := s.spawnPool("test/panic", 2, func(c *Call) Reply {
		if strings.HasSuffix(c.Request.ID.String(), "7") {
			return Reply{Result: []byte(`{}`)}
		}
		panic(fmt.Errorf("worker exploded on %s", c.Request.ID))
	}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range int64(1000) {
		wg.Go(func() {
			a := ask(t, s, "test/panic", i)
			if i%10 == 7 {
				if a.Err != nil || string(a.Result) != `{}` {
					t.Errorf("id %d: %+v, want a result", i, a)
				}
				return
			}
			if a.Err == nil || a.Err.Code != wire.CodeInternalError || a.Err.Message != "Internal error" || a.Result != nil {
				t.Errorf("id %d: %+v, want -32603 Internal error", i, a)
			}
		})
	}
	wg.Wait()
	if a := ask(t, s, wire.MethodDiscover, 5); a.Err != nil || !strings.Contains(string(a.Result), `"supportedVersions"`) {
		t.Errorf("discover after the storm: %+v", a)
	}
}

// TestStrategyNeverPanics: a failure whose message is not a well-formed
// call (no request) is logged, and the directive still applied; a panic
// inside the strategy would end the process when it runs as a guardian.
func TestStrategyNeverPanics(t *testing.T) {
	t.Parallel()
	s := newTestSystem(t)
	strategy := &containment{stop: true, logger: slog.New(slog.DiscardHandler)}
	sup := &recordingSupervisor{}
	pid := actor.NewPID("local", "x")
	strategy.HandleFailure(s.sys, sup, pid, nil, "boom", &Call{}) // Request is nil
	strategy.HandleFailure(s.sys, sup, pid, nil, "boom", "not a call")
	strategy.HandleFailure(s.sys, sup, pid, nil, nil, nil)
	if sup.stopped != 3 {
		t.Errorf("stopped %d children, want 3", sup.stopped)
	}
}

type recordingSupervisor struct{ stopped, restarted int }

func (r *recordingSupervisor) Children() []*actor.PID             { return nil }
func (r *recordingSupervisor) EscalateFailure(any, any)           {}
func (r *recordingSupervisor) RestartChildren(pids ...*actor.PID) { r.restarted += len(pids) }
func (r *recordingSupervisor) StopChildren(pids ...*actor.PID)    { r.stopped += len(pids) }
func (r *recordingSupervisor) ResumeChildren(...*actor.PID)       {}

// TestAskCancelled: a requester whose context ends while its tool runs
// gets the context's error, not the tool's answer (nothing is written for a
// client that left); the tool, running on the requester's goroutine, sees
// the cancellation. One that ignores it holds its requester until it
// returns (the in-flight bound counts it), and is still not answered.
func TestAskCancelled(t *testing.T) {
	t.Parallel()
	s := newTestSystem(t)
	ctx, cancel := context.WithCancel(context.Background())
	s.callMethod = func(c *Call) Reply {
		cancel()
		<-c.Ctx.Done()
		return Reply{Result: []byte(`{}`)}
	}
	req := &wire.Request{ID: wire.NewIntID(1), Method: wire.MethodToolsCall}
	if _, err := s.Ask(NewCall(ctx, req, nil, nil)); err != context.Canceled {
		t.Errorf("err = %v, want context.Canceled", err)
	}

	// A system of its own: the first one's idle worker keeps the first tool.
	s = newTestSystem(t)
	ctx2, cancel2 := context.WithCancel(context.Background())
	s.callMethod = func(c *Call) Reply {
		cancel2()
		time.Sleep(50 * time.Millisecond) // ignores its context
		return Reply{Result: []byte(`{}`)}
	}
	start := time.Now()
	if _, err := s.Ask(NewCall(ctx2, req, nil, nil)); err != context.Canceled {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("Ask returned after %v, before the tool did", d)
	}
}

func registrySize(s *System) int {
	n := 0
	for _, m := range s.sys.ProcessRegistry.LocalPIDs.LocalPIDs {
		n += m.Count()
	}
	return n
}

// TestCallWorkersReused: sequential calls, faulting or not, reuse one idle
// worker instead of adding actors to the process registry.
func TestCallWorkersReused(t *testing.T) {
	t.Parallel()
	s := newTestSystem(t)
	s.callMethod = func(c *Call) Reply {
		if c.Request.ID.String() == "13" {
			panic("call fault")
		}
		return Reply{Result: []byte(`{}`)}
	}
	// The first call registers the guardian of call workers, for good.
	ask(t, s, wire.MethodToolsCall, 0)
	time.Sleep(50 * time.Millisecond)
	before := registrySize(s)
	for i := range int64(500) {
		a := ask(t, s, wire.MethodToolsCall, i%20)
		if (i%20 == 13) != (a.Code() == wire.CodeInternalError) {
			t.Fatalf("id %d: %+v", i%20, a)
		}
	}
	// A restarted worker returns to the pool once its restart is handled.
	time.Sleep(50 * time.Millisecond)
	if after := registrySize(s); after > before+1 {
		t.Errorf("registry grew from %d to %d entries", before, after)
	}
}

// TestCallPoolBounded: a burst grows the pool; afterwards at most
// maxIdleCallWorkers stay, the rest are stopped.
func TestCallPoolBounded(t *testing.T) {
	t.Parallel()
	s := newTestSystem(t)
	s.calls.maxIdle = 4
	s.calls.shards = make([]callShard, 1) // the bound exactly; TestCallPoolShards has many
	release := make(chan struct{})
	s.callMethod = func(c *Call) Reply { <-release; return Reply{Result: []byte(`{}`)} }
	var wg sync.WaitGroup
	for i := range int64(20) {
		wg.Go(func() { ask(t, s, wire.MethodToolsCall, i) })
	}
	time.Sleep(100 * time.Millisecond)
	close(release)
	wg.Wait()
	time.Sleep(100 * time.Millisecond)
	if idle := s.calls.idleCount(); idle != 4 {
		t.Errorf("idle workers = %d, want 4", s.calls.idleCount())
	}
}

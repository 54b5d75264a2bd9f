package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/wymcp/wymcp/internal/config"
	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// newTestSystem returns a System serving the tools ts, shut down when the
// test ends.
func newTestSystem(t *testing.T, ts ...*toolrun.Tool) *System {
	t.Helper()
	set, err := toolrun.NewSet(ts...)
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
	return askCall(t, s, &Call{Ctx: context.Background(), Request: req})
}

// askCall asks call and returns the reply; the requester must not have
// gone away.
func askCall(t *testing.T, s *System, call *Call) Reply {
	t.Helper()
	a, err := s.Ask(call)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	return a
}

// rawTool is a test tool taking any object, run by fn.
func rawTool(name string, fn func(context.Context, []byte) (*protocol.CallToolResult, error), opts ...toolrun.Option) *toolrun.Tool {
	return toolrun.Must(toolrun.NewRaw(name, "A test tool.", []byte(`{"type":"object"}`), fn, opts...))
}

// toolCall is the Call the front makes for a tools/call of tool numbered
// id, under ctx. A handler does not see the request's id, so the arguments
// carry it too: {"id":id} (argID).
func toolCall(ctx context.Context, tool *toolrun.Tool, id int64) *Call {
	req := &wire.Request{
		ID: wire.NewIntID(id), Method: wire.MethodToolsCall,
		Name:      wire.RawJSON(strconv.Quote(tool.Name())),
		Arguments: wire.RawJSON(`{"id":` + strconv.FormatInt(id, 10) + `}`),
	}
	return &Call{Ctx: ctx, Request: req, Tool: tool}
}

// argID returns the id in a toolCall's arguments.
func argID(args wire.RawJSON) int64 {
	var in struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		panic(err)
	}
	return in.ID
}

// panicsOnEncode is a value whose encoding panics. In a tool's result it
// is a fault past the tool: the tools/call method panics encoding the
// result (callResult), and the containment strategy answers.
type panicsOnEncode struct{}

func (panicsOnEncode) MarshalJSON() ([]byte, error) { panic("encoder exploded") }

// unencodable is a tool result that cannot be encoded.
func unencodable() *protocol.CallToolResult {
	return &protocol.CallToolResult{Content: []protocol.Content{}, StructuredContent: panicsOnEncode{}}
}

// isInternalError reports whether r is the containment strategy's answer.
func isInternalError(r Reply) bool {
	return r.Err != nil && r.Err.Code == wire.CodeInternalError && r.Err.Message == "Internal error" && r.Result == nil
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
			if !isInternalError(a) {
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
// call (no request, no context to record the fault under) or is no call at
// all is logged, and the directive still applied: the child restarted and
// handed back; a call is still answered. A panic inside the strategy would
// end the process when it runs as a guardian.
func TestStrategyNeverPanics(t *testing.T) {
	t.Parallel()
	s := newTestSystem(t)
	handedBack := 0
	strategy := &containment{logger: slog.New(slog.DiscardHandler), restarted: func(*actor.PID) { handedBack++ }}
	sup := &recordingSupervisor{}
	pid := actor.NewPID("local", "x")
	// Recording the fault on its span needs the call's context, nil here.
	malformed := &Call{Op: new(telemetry.Op)}
	strategy.HandleFailure(s.sys, sup, pid, nil, "boom", malformed)
	strategy.HandleFailure(s.sys, sup, pid, nil, "boom", &Call{}) // Request is nil
	strategy.HandleFailure(s.sys, sup, pid, nil, "boom", "not a call")
	strategy.HandleFailure(s.sys, sup, pid, nil, nil, nil)
	if sup.restarted != 4 || sup.stopped != 0 || handedBack != 4 {
		t.Errorf("restarted %d children, stopped %d, handed back %d; want 4, 0, 4", sup.restarted, sup.stopped, handedBack)
	}
	done := make(chan struct{})
	close(done)
	if r, ok := malformed.wait(done); !ok || !isInternalError(r) {
		t.Errorf("the malformed call's reply: %+v %v, want -32603 Internal error", r, ok)
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
	ctx, cancel := context.WithCancel(context.Background())
	seen := make(chan error, 1) // what the honouring tool's context said once done
	honours := rawTool("honours", func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
		cancel()
		<-ctx.Done()
		seen <- ctx.Err()
		return protocol.TextResult("done"), nil
	}, toolrun.WithDeadline(10*time.Second))
	ctx2, cancel2 := context.WithCancel(context.Background())
	ignores := rawTool("ignores", func(context.Context, []byte) (*protocol.CallToolResult, error) {
		cancel2()
		time.Sleep(50 * time.Millisecond) // ignores its context
		return protocol.TextResult("done"), nil
	})
	s := newTestSystem(t, honours, ignores)

	if _, err := s.Ask(toolCall(ctx, honours, 1)); err != context.Canceled {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if err := <-seen; err != context.Canceled {
		t.Errorf("the tool's context ended with %v, want context.Canceled", err)
	}

	start := time.Now()
	if _, err := s.Ask(toolCall(ctx2, ignores, 2)); err != context.Canceled {
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

// TestCallFaultsContained: a fault past the tool (its result cannot be
// encoded) is answered -32603 by the containment strategy, and the worker
// still answers the next call; a panic inside the handler is the tool's
// own to contain, an isError result.
func TestCallFaultsContained(t *testing.T) {
	t.Parallel()
	badResult := rawTool("bad_result", func(context.Context, []byte) (*protocol.CallToolResult, error) {
		return unencodable(), nil
	})
	panics := rawTool("panics", func(context.Context, []byte) (*protocol.CallToolResult, error) {
		panic("handler exploded")
	})
	ok := rawTool("ok", func(context.Context, []byte) (*protocol.CallToolResult, error) {
		return protocol.TextResult("fine"), nil
	})
	s := newTestSystem(t, badResult, panics, ok)
	for i := range int64(3) {
		if a := askCall(t, s, toolCall(context.Background(), badResult, i)); !isInternalError(a) {
			t.Errorf("a result that cannot be encoded: %+v, want -32603 Internal error", a)
		}
		if a := askCall(t, s, toolCall(context.Background(), ok, i)); a.Err != nil || a.ToolError || !strings.Contains(string(a.Result), `"text":"fine"`) {
			t.Errorf("a call after the fault: %+v, want its result", a)
		}
	}
	if a := askCall(t, s, toolCall(context.Background(), panics, 1)); a.Err != nil || !a.ToolError || !strings.Contains(string(a.Result), `"isError":true`) {
		t.Errorf("a panic in the handler: %+v, want an isError result", a)
	}
}

// TestCallWorkersReused: sequential calls, faulting or not, reuse one idle
// worker instead of adding actors to the process registry.
func TestCallWorkersReused(t *testing.T) {
	t.Parallel()
	// Call 13 faults past the tool: its result cannot be encoded.
	flaky := rawTool("flaky", func(_ context.Context, args []byte) (*protocol.CallToolResult, error) {
		if argID(args) == 13 {
			return unencodable(), nil
		}
		return protocol.TextResult("ok"), nil
	})
	s := newTestSystem(t, flaky)
	// The first call registers the guardian of call workers, for good.
	askCall(t, s, toolCall(context.Background(), flaky, 0))
	time.Sleep(50 * time.Millisecond)
	before := registrySize(s)
	for i := range int64(500) {
		a := askCall(t, s, toolCall(context.Background(), flaky, i%20))
		if (i%20 == 13) != isInternalError(a) || (i%20 != 13 && a.Err != nil) {
			t.Fatalf("id %d: %+v", i%20, a)
		}
	}
	// A restarted worker returns to the pool once its restart is handled
	// (however long a loaded machine takes to handle it).
	deadline := time.Now().Add(30 * time.Second)
	for registrySize(s) > before+1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if after := registrySize(s); after > before+1 {
		t.Errorf("registry grew from %d to %d entries", before, after)
	}
}

// TestCallPoolBounded: a burst grows the pool; afterwards at most
// maxIdleCallWorkers stay, the rest are stopped.
func TestCallPoolBounded(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var entered atomic.Int32
	blocks := rawTool("blocks", func(context.Context, []byte) (*protocol.CallToolResult, error) {
		entered.Add(1)
		<-release
		return protocol.TextResult("ok"), nil
	})
	s := newTestSystem(t, blocks)
	s.calls.maxIdle = 4
	s.calls.shards = make([]callShard, 1) // the bound exactly; TestCallPoolShards has many
	var wg sync.WaitGroup
	for i := range int64(20) {
		wg.Go(func() {
			if _, err := s.Ask(toolCall(context.Background(), blocks, i)); err != nil {
				t.Errorf("Ask: %v", err)
			}
		})
	}
	// The burst: all 20 run at once (not after a fixed time, which a
	// loaded machine may spend before they all started).
	deadline := time.Now().Add(30 * time.Second)
	for entered.Load() < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 20 calls running after 30 s", entered.Load())
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	// The workers past the bound are stopped as they come back idle.
	for s.calls.idleCount() != 4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if idle := s.calls.idleCount(); idle != 4 {
		t.Errorf("idle workers = %d, want 4", idle)
	}
}

package actors

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/config"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// The late paths (the watchdog's answer to a call past its deadline, the
// cut) hold a Call that its requester may have returned from: the HTTP edge
// then parses its next request into the same wire.Scratch (Call.Request).
// These tests force that interleaving with System.taken.

const (
	legacyCallBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"stubborn","arguments":{}}}`
	// nextCallBody is the request parsed into the same scratch next: a
	// 2026-07-28 one, whose era a late path must not take for the first's.
	nextCallBody = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"stubborn","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
)

// newLegacySystem is newTestSystem serving the 2025-11-25 revision too.
func newLegacySystem(t *testing.T, ts ...*toolrun.Tool) *System {
	t.Helper()
	set, err := toolrun.NewSet(ts...)
	if err != nil {
		t.Fatal(err)
	}
	versions, err := wire.NewVersions([]string{wire.Version, "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(&config.Server{
		Info: protocol.Implementation{Name: "t", Version: "1"}, Tools: set, PageSize: 100, Versions: versions,
		CacheTTL: time.Minute, Logger: slog.New(slog.DiscardHandler), Workers: 2,
		StateKeys: [][]byte{make([]byte, 32)}, StateTTL: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

// parseInto parses body into sc as the HTTP edge does, a 2025-11-25
// request when legacy.
func parseInto(t *testing.T, sc *wire.Scratch, body string, legacy bool) *wire.Request {
	t.Helper()
	msg, _, perr := wire.ParseInto(sc, []byte(body))
	if perr != nil {
		t.Fatalf("parse: %v", perr)
	}
	req, rerr := wire.ParseRequest(msg)
	if legacy {
		req, rerr = wire.ParseLegacyRequest(msg, "2025-11-25")
	}
	if rerr != nil {
		t.Fatalf("params: %v", rerr)
	}
	return req
}

// latePaths runs the call to the point where a late path has taken it:
// the watchdog, once its deadline is past, or the cut, which the test
// starts. The second returns once the late path is done.
var latePaths = []struct {
	name     string
	deadline time.Duration
	// start begins the late path; done is closed when it has answered.
	start func(s *System, done chan<- struct{})
	// isAnswer reports whether r is this path's answer.
	isAnswer func(r Reply) bool
}{
	{"watchdog", time.Millisecond,
		func(s *System, done chan<- struct{}) {
			overdue := s.watchdog.overdue
			s.watchdog.overdue = func(c *Call) { overdue(c); close(done) }
		},
		func(r Reply) bool { return r.ToolError && strings.Contains(string(r.Result), "timed out") }},
	{"cut", time.Hour,
		func(s *System, done chan<- struct{}) { go func() { s.Cut(); close(done) }() },
		isCutReply},
}

// TestLatePathReusedRequest: a late path has taken a 2025-era call, its
// tool then returns, Ask returns, and the requester parses its next
// request into the same scratch while the late path answers. Run with
// -race: the late path must read nothing of the request (it reads the era
// Ask kept), or the detector reports the parse's writes against its reads.
func TestLatePathReusedRequest(t *testing.T) {
	t.Parallel()
	for _, path := range latePaths {
		t.Run(path.name, func(t *testing.T) {
			t.Parallel()
			toolGo := make(chan struct{})
			started := make(chan struct{})
			tool := rawTool("stubborn", func(context.Context, []byte) (*protocol.CallToolResult, error) {
				close(started)
				<-toolGo // ignores its context
				return protocol.TextResult("own"), nil
			}, toolrun.WithDeadline(path.deadline))
			s := newLegacySystem(t, tool)
			taken, resume, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
			s.taken = func(*Call) { close(taken); <-resume }
			if path.name == "watchdog" {
				path.start(s, done)
			}

			var sc wire.Scratch
			call := &Call{Ctx: context.Background(), Request: parseInto(t, &sc, legacyCallBody, true), Tool: tool, Late: &lateRecorder{}}
			asked := make(chan Reply, 1)
			go func() {
				r, err := s.Ask(call)
				if err != nil {
					t.Errorf("Ask: %v", err)
				}
				asked <- r
			}()
			<-started
			if path.name == "cut" {
				path.start(s, done)
			}
			<-taken
			close(toolGo)
			<-asked
			// The requester has its buffers back: the late path goes on, and
			// the next request is parsed meanwhile, with no order between them.
			close(resume)
			parseInto(t, &sc, nextCallBody, false)
			<-done
		})
	}
}

// TestLatePathAnswersInItsEra: a late path answers a 2025-era call in the
// 2025 shape even when the request it was parsed from says otherwise by
// the time it answers, as the next request parsed into the same buffers
// would: the era is the call's, kept when it was registered. The test
// rewrites the request while the tool still runs (it reads nothing more
// of it), ordered between the requester's reads and the late path's.
func TestLatePathAnswersInItsEra(t *testing.T) {
	t.Parallel()
	for _, path := range latePaths {
		t.Run(path.name, func(t *testing.T) {
			t.Parallel()
			toolGo := make(chan struct{})
			started := make(chan struct{})
			tool := rawTool("stubborn", func(context.Context, []byte) (*protocol.CallToolResult, error) {
				close(started)
				<-toolGo // ignores its context
				return protocol.TextResult("own"), nil
			}, toolrun.WithDeadline(path.deadline))
			s := newLegacySystem(t, tool)
			taken, resume, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
			s.taken = func(*Call) { close(taken); <-resume }
			if path.name == "watchdog" {
				path.start(s, done)
			}
			var sc wire.Scratch
			late := &lateRecorder{}
			call := &Call{Ctx: context.Background(), Request: parseInto(t, &sc, legacyCallBody, true), Tool: tool, Late: late}
			asked := make(chan Reply, 1)
			go func() {
				r, _ := s.Ask(call)
				asked <- r
			}()
			<-started
			if path.name == "cut" {
				path.start(s, done)
			}
			<-taken
			parseInto(t, &sc, nextCallBody, false)
			close(resume)
			<-done
			s.late.wait()
			close(toolGo)
			<-asked
			got := late.got()
			if len(got) != 1 || !path.isAnswer(got[0]) {
				t.Fatalf("late answers %+v, want the %s's one", got, path.name)
			}
			if r := string(got[0].Result); strings.Contains(r, `"resultType"`) || strings.Contains(r, wire.MetaServerInfo) {
				t.Errorf("the %s answered a 2025-era call in the 2026-07-28 shape: %s", path.name, r)
			}
		})
	}
}

// TestToolContextOverGivesNoRequest: a goroutine a tool left running past
// its call gets neither the request nor the call's Round (made then, or
// during the call: it holds slices of the request's body), as outside a
// call: the request's buffers are its requester's to reuse once Ask has
// returned.
func TestToolContextOverGivesNoRequest(t *testing.T) {
	t.Parallel()
	for _, madeDuring := range []bool{false, true} {
		var sc wire.Scratch
		call := &Call{Ctx: context.Background(), Request: parseInto(t, &sc, legacyCallBody, true)}
		call.tctx.init(call.Ctx, time.Minute)
		call.tctx.call = call
		ctx := &call.tctx
		if req, _ := ctx.Value(toolrun.RequestKey{}).(*wire.Request); req != call.Request {
			t.Fatalf("during the call, RequestKey = %p, want the request %p", req, call.Request)
		}
		if madeDuring {
			if r, _ := ctx.Value(toolrun.RoundKey{}).(*toolrun.Round); r == nil {
				t.Fatal("during the call, RoundKey made no Round")
			}
		}
		call.tctx.release()
		if req, _ := ctx.Value(toolrun.RequestKey{}).(*wire.Request); req != nil {
			t.Errorf("made during the call %v: after it, RequestKey = %+v, want nil", madeDuring, req)
		}
		for _, key := range []any{toolrun.RoundKey{}, toolrun.RoundMadeKey{}} {
			if r, _ := ctx.Value(key).(*toolrun.Round); r != nil {
				t.Errorf("made during the call %v: after it, %T gives a Round: %+v", madeDuring, key, r)
			}
		}
	}
}

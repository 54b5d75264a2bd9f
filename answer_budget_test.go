package wymcp_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// bigAnswer is the text a large-answer tool returns: more than the kernel
// buffers for a client that does not read, so that its answer waits in the
// server.
const bigAnswer = 8 << 20

// bigTool answers bigAnswer bytes of text; it counts its runs and signals
// each on ran.
type bigTool struct {
	runs atomic.Int64
	ran  chan struct{}
}

func newBigTool(t testing.TB) (*bigTool, *tools.Tool) {
	t.Helper()
	b := &bigTool{ran: make(chan struct{}, 64)}
	text := strings.Repeat("x", bigAnswer)
	tool, err := tools.NewRaw("big", "Answers 8 MiB of text.", []byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			b.runs.Add(1)
			select {
			case b.ran <- struct{}{}:
			default:
			}
			return &protocol.CallToolResult{Content: []protocol.Content{&protocol.TextContent{Text: text}}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return b, tool
}

// waitRan waits for n runs of the tool after the ones already waited for.
func (b *bigTool) waitRan(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-b.ran:
		case <-time.After(30 * time.Second):
			t.Fatalf("the tool did not run (%d runs)", b.runs.Load())
		}
	}
}

// stalledCall sends a call of name on a connection of its own and never
// reads its answer (a receive buffer of 4 KiB, so that the kernel does not
// take it either). It returns the connection, closed with the test.
func stalledCall(t *testing.T, ep *mcptest.Endpoint, name string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", ep.HostPort())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	req, err := mcptest.ToolCall(name, "{}").Request(context.Background(), ep.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	return conn
}

// expectWhole asserts a call's answer carries the whole text.
func expectWhole(t *testing.T, rep mcptest.Reply) {
	t.Helper()
	res := rep.ExpectResult(t, "1")
	if text, _ := mcptest.ToolText(t, res); len(text) != bigAnswer {
		t.Fatalf("the answer's text is %d bytes, want %d: %.200s", len(text), bigAnswer, text)
	}
}

// expectBudgetRefusal asserts the answer budget's refusal (docs/design.md
// §5): 503, Retry-After, -32603 with the id.
func expectBudgetRefusal(t *testing.T, rep mcptest.Reply) {
	t.Helper()
	rep.ExpectError(t, http.StatusServiceUnavailable, -32603, "1")
	if got := rep.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want 1", got)
	}
}

// callUntilTaken calls name until the answer budget takes the call (the
// stalled connections closed, their answers are given back as the server
// notices), and asserts the answer is whole.
// Bounded by time, not tries: the stalled answers are given back at their
// write deadline, however many refusals come before it.
func callUntilTaken(t *testing.T, ep *mcptest.Endpoint, name string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		rep := ep.Send(t, mcptest.ToolCall(name, "{}"))
		if rep.Status == http.StatusServiceUnavailable {
			continue
		}
		expectWhole(t, rep)
		return
	}
	t.Fatal("the budget took no call again in 30 s after the stalled clients left")
}

// stalledScenario runs the budget's scenario against ep, whose answer
// budget is 20 MiB and whose tool name answers through big: a reading
// client gets the whole answer; two clients that do not read hold 16 MiB,
// so a third call is refused before its tool runs; once they are gone,
// calls are taken again.
func stalledScenario(t *testing.T, ep *mcptest.Endpoint, name string, big *bigTool) {
	expectWhole(t, ep.Send(t, mcptest.ToolCall(name, "{}")))
	big.waitRan(t, 1)
	a := stalledCall(t, ep, name)
	b := stalledCall(t, ep, name)
	big.waitRan(t, 2)
	expectBudgetRefusal(t, ep.Send(t, mcptest.ToolCall(name, "{}")))
	if got := big.runs.Load(); got != 3 {
		t.Fatalf("the refused call ran its tool: %d runs, want 3", got)
	}
	a.Close()
	b.Close()
	callUntilTaken(t, ep, name)
}

// TestAnswerBudgetStalledClients: clients that call a tool with a large
// answer and never read it hold that answer until the write deadline, and
// the server holds at most its answer budget for them: past it, a call is
// refused with 503 before its tool runs (docs/design.md §3, stage 7).
func TestAnswerBudgetStalledClients(t *testing.T) {
	big, tool := newBigTool(t)
	info := protocol.Implementation{Name: "wymcp-test", Version: "0.0.1"}
	srv, err := wymcp.New(info, &wymcp.Options{AnswerBudget: 20 << 20, Logger: slog.New(slog.DiscardHandler)}, tool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	stalledScenario(t, mcptest.Serve(t, srv, info), "big", big)
}

// TestAnswerBudgetGateway: a gateway's answers are its upstream's bytes,
// charged to its own answer budget alike: past it, a call is refused before
// it reaches the upstream.
func TestAnswerBudgetGateway(t *testing.T) {
	big, tool := newBigTool(t)
	originInfo := protocol.Implementation{Name: "origin", Version: "0.0.1"}
	origin, err := wymcp.New(originInfo, &wymcp.Options{Logger: slog.New(slog.DiscardHandler)}, tool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = origin.Shutdown(context.Background()) })
	up, err := upstream.Connect(context.Background(), upstream.Options{Name: "origin", URL: mcptest.Serve(t, origin, originInfo).URL, Prefix: "o_", MaxResponseBytes: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	info := protocol.Implementation{Name: "wymcp-gateway", Version: "0.0.1"}
	gw, err := wymcp.New(info, &wymcp.Options{AnswerBudget: 20 << 20, Logger: slog.New(slog.DiscardHandler)}, up.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Shutdown(context.Background()) })
	stalledScenario(t, mcptest.Serve(t, gw, info), "o_big", big)
}

// TestAnswerBudgetWriteDeadline: a client that does not read its answer
// within the write timeout loses its connection, and the answer's charge
// is given back: with a budget that holds one answer, the next call is
// taken once the stalled one's deadline has passed.
func TestAnswerBudgetWriteDeadline(t *testing.T) {
	big, tool := newBigTool(t)
	info := protocol.Implementation{Name: "wymcp-test", Version: "0.0.1"}
	srv, err := wymcp.New(info, &wymcp.Options{AnswerBudget: 12 << 20, WriteTimeout: 2 * time.Second, Logger: slog.New(slog.DiscardHandler)}, tool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	ep := mcptest.Serve(t, srv, info)
	expectWhole(t, ep.Send(t, mcptest.ToolCall("big", "{}")))
	big.waitRan(t, 1)
	stalledCall(t, ep, "big")
	big.waitRan(t, 1)
	// The budget holds one answer: the next call is taken only when the
	// stalled one's charge is given back, which happens when its handler
	// returns: its write failed at the deadline, and its connection is
	// closed (what the kernel still holds of it is the kernel's).
	callUntilTaken(t, ep, "big")
}

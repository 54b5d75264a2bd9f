package wymcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// cutText is the whole text of the answer to a call that Shutdown cut
// short (drain.go).
const cutText = "The call was cut short: the server is shutting down"

// expectCut asserts the answer to a call cut short: 200, the id, and an
// isError result with the fixed text.
func expectCut(t *testing.T, rep mcptest.Reply, id string) {
	t.Helper()
	res := rep.ExpectResult(t, id)
	if text, isErr := mcptest.ToolText(t, res); !isErr || text != cutText {
		t.Errorf("call %s: %q isError %v, want %q isError true", id, text, isErr, cutText)
	}
}

// TestShutdownCutsCallsInFlight is the shutdown cut (docs/design.md §4):
// when Shutdown's ctx ends with calls still running, every one of them is
// answered before Shutdown returns — 200 with its id and an isError result
// saying the server is shutting down — whether its tool honours its
// context (which ends, with the shutdown as its cause) or ignores it (the
// answer arrives while the tool still runs), and a streamed call gets the
// answer as its stream's last event. A call after that is refused 503.
func TestShutdownCutsCallsInFlight(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 3)
	release := make(chan struct{})
	causes := make(chan error, 2)
	waits := tools.Must(tools.NewRaw("waits", "Reports progress once, then waits for its context.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			tools.ReportProgress(ctx, 1, nil, "waiting")
			started <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return nil, ctx.Err()
		}, tools.WithDeadline(time.Minute)))
	stuck := tools.Must(tools.NewRaw("stuck", "Ignores its context until the test releases it.", []byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			started <- struct{}{}
			<-release
			return protocol.TextResult("released"), nil
		}, tools.WithDeadline(time.Minute)))
	info := protocol.Implementation{Name: "wymcp-cut", Version: "0.0.1"}
	srv, err := wymcp.New(info, &wymcp.Options{Logger: slog.New(slog.DiscardHandler)}, waits, stuck)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		close(release)
		hs.Close()
	})
	ep := &mcptest.Endpoint{URL: hs.URL, HTTP: hs.Client(), Info: info}

	replies := make(chan mcptest.Reply, 2)
	go func() { replies <- ep.Send(t, mcptest.ToolCall("waits", `{}`).WithID(1)) }()
	go func() { replies <- ep.Send(t, mcptest.ToolCall("stuck", `{}`).WithID(2)) }()
	type stream struct {
		status      int
		contentType string
		msgs        []json.RawMessage
	}
	streamed := make(chan stream, 1)
	go func() {
		resp, msgs := ep.SendSSE(t, withProgress(mcptest.ToolCall("waits", `{}`).WithID(3)))
		streamed <- stream{resp.StatusCode, resp.Header.Get("Content-Type"), msgs}
	}()
	for range 3 {
		<-started
	}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want context.DeadlineExceeded", err)
	}
	if took := time.Since(begin); took > 30*time.Second {
		t.Errorf("Shutdown returned %v after it began, want soon after its ctx ended", took)
	}

	// Both JSON calls are answered, the stuck one while its tool still runs.
	byID := map[string]mcptest.Reply{}
	for range 2 {
		select {
		case rep := <-replies:
			byID[string(rep.Msg.ID)] = rep
		case <-time.After(30 * time.Second):
			t.Fatalf("a call in flight at Shutdown has no answer 30 s after Shutdown returned (got %d)", len(byID))
		}
	}
	expectCut(t, byID["1"], "1")
	expectCut(t, byID["2"], "2")

	var st stream
	select {
	case st = <-streamed:
	case <-time.After(30 * time.Second):
		t.Fatal("the streamed call's stream did not end")
	}
	if st.status != 200 || st.contentType != "text/event-stream" || len(st.msgs) != 2 {
		t.Fatalf("stream: %d %q, %d messages (%s), want 200 text/event-stream, a progress notification then the answer", st.status, st.contentType, len(st.msgs), st.msgs)
	}
	if !strings.Contains(string(st.msgs[0]), `"method":"notifications/progress"`) {
		t.Errorf("first event %s, want the progress notification", st.msgs[0])
	}
	var last mcptest.Message
	if err := json.Unmarshal(st.msgs[1], &last); err != nil {
		t.Fatal(err)
	}
	expectCut(t, mcptest.Reply{Status: 200, Header: map[string][]string{"Content-Type": {"application/json"}}, Raw: st.msgs[1], Msg: last, Info: info}, "3")

	for range 2 {
		if cause := <-causes; cause == nil || !strings.Contains(cause.Error(), "shutting down") {
			t.Errorf("a cut tool's context.Cause = %v, want the shutdown", cause)
		}
	}
	rep := ep.Send(t, mcptest.ToolCall("waits", `{}`).WithID(4))
	rep.ExpectError(t, 503, -32603, "4")
	wantHeader(t, rep, "Retry-After", "1")
}

package toolrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type echoOut struct {
	Text string `json:"text"`
}

func echo(_ context.Context, in echoIn) (echoOut, error) { return echoOut(in), nil }

// text returns the single text block of r.
func text(t *testing.T, r *protocol.CallToolResult) string {
	t.Helper()
	if r == nil || len(r.Content) != 1 {
		t.Fatalf("result %+v: want one content block", r)
	}
	tc, ok := r.Content[0].(*protocol.TextContent)
	if !ok {
		t.Fatalf("content %T, want *protocol.TextContent", r.Content[0])
	}
	return tc.Text
}

func TestTypedResult(t *testing.T) {
	t.Parallel()
	tool := toolrun.Must(toolrun.New("echo", "Echoes.", echo))
	out := tool.Call(t.Context(), wire.RawJSON(`{"text":"hi"}`))
	if out.Kind != toolrun.OutcomeOK || out.Result.IsError || out.Fault != nil {
		t.Fatalf("outcome %+v", out)
	}
	if got := text(t, out.Result); got != `{"text":"hi"}` {
		t.Errorf("text %q", got)
	}
	b, err := wire.AppendCallToolResult(nil, out.Result, wire.RawJSON("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":[{"type":"text","text":"{\"text\":\"hi\"}"}],"structuredContent":{"text":"hi"}`; !strings.HasPrefix(string(b), want) {
		t.Errorf("wire\n got %s\nwant %s…", b, want)
	}
}

func TestTypedNilOut(t *testing.T) {
	t.Parallel()
	tool := toolrun.Must(toolrun.New("nil", "Returns nil.", func(context.Context, struct{}) (*echoOut, error) { return nil, nil }))
	out := tool.Call(t.Context(), nil)
	if out.Kind != toolrun.OutcomeToolError || text(t, out.Result) != "Tool nil returned no result" {
		t.Fatalf("outcome %v %q", out.Kind, text(t, out.Result))
	}
	plain := toolrun.Must(toolrun.New("plain", "Returns a string.", func(context.Context, struct{}) (string, error) { return "ok", nil }))
	out = plain.Call(t.Context(), nil)
	if out.Kind != toolrun.OutcomeOK || text(t, out.Result) != `"ok"` || out.Result.StructuredContent != nil {
		t.Fatalf("outcome %v %q %v", out.Kind, text(t, out.Result), out.Result.StructuredContent)
	}
}

func TestTypedDecodeFailure(t *testing.T) {
	t.Parallel()
	tool := toolrun.Must(toolrun.New("when", "d", func(_ context.Context, in struct {
		At time.Time `json:"at"`
	}) (any, error) {
		return in.At, nil
	}))
	out := tool.Call(t.Context(), wire.RawJSON(`{"at":"yesterday"}`))
	if out.Kind != toolrun.OutcomeInvalidArguments || text(t, out.Result) != "Invalid arguments for tool when: at '/at': invalid value" {
		t.Fatalf("outcome %v %q", out.Kind, text(t, out.Result))
	}
}

func TestCallOutcomes(t *testing.T) {
	t.Parallel()
	type row struct {
		name, explanation string
		fn                func(context.Context, []byte) (*protocol.CallToolResult, error)
		opts              []toolrun.Option
		wantKind          toolrun.OutcomeKind
		wantText          string // "" means: not checked
	}
	isErr := protocol.ErrorResult("the tool says no")
	rows := []row{
		{"ok", "a plain result", echoRaw, nil, toolrun.OutcomeOK, "{}"},
		{"tool error", "docs/design.md §5: a tool error is an isError result with the error's text",
			func(context.Context, []byte) (*protocol.CallToolResult, error) {
				return nil, errors.New("disk full")
			}, nil, toolrun.OutcomeToolError, "disk full"},
		{"isError result", "a result the tool marked as an error counts as a tool error",
			func(context.Context, []byte) (*protocol.CallToolResult, error) { return isErr, nil },
			nil, toolrun.OutcomeToolError, "the tool says no"},
		{"deadline", "docs/design.md §5: tool deadline", waitForCtx, []toolrun.Option{toolrun.WithDeadline(20 * time.Millisecond)},
			toolrun.OutcomeDeadline, "Tool t timed out after 20ms"},
		{"typed nil error", "a typed nil error panics in Error(); Call contains it",
			func(context.Context, []byte) (*protocol.CallToolResult, error) {
				var e *nilErr
				return nil, e
			}, nil, toolrun.OutcomePanic, "Tool execution failed: internal error"},
		{"output mismatch", "structuredContent must match the output schema",
			func(context.Context, []byte) (*protocol.CallToolResult, error) {
				return &protocol.CallToolResult{Content: []protocol.Content{}, StructuredContent: map[string]any{"n": "one"}}, nil
			}, []toolrun.Option{toolrun.WithOutputSchema([]byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`))},
			toolrun.OutcomeToolError, "Tool t returned structured content that does not match its output schema: at '/n': got string, want integer"},
		{"output match", "a matching structuredContent passes",
			func(context.Context, []byte) (*protocol.CallToolResult, error) {
				return &protocol.CallToolResult{Content: []protocol.Content{&protocol.TextContent{Text: "1"}}, StructuredContent: json.RawMessage(`{"n":1}`)}, nil
			}, []toolrun.Option{toolrun.WithOutputSchema([]byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`))},
			toolrun.OutcomeOK, "1"},
	}
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tool := toolrun.Must(toolrun.NewRaw("t", "d", []byte(`{"type":"object"}`), tt.fn, tt.opts...))
			// The caller bounds the call by the tool's deadline, as the
			// server does.
			ctx, cancel := context.WithTimeout(t.Context(), tool.Deadline())
			defer cancel()
			out := tool.Call(ctx, nil)
			if out.Kind != tt.wantKind {
				t.Fatalf("%s: kind %v, want %v", tt.explanation, out.Kind, tt.wantKind)
			}
			if out.Result.IsError != (tt.wantKind != toolrun.OutcomeOK) {
				t.Errorf("isError %v", out.Result.IsError)
			}
			if (out.Fault != nil) != (tt.wantKind == toolrun.OutcomePanic) {
				t.Errorf("fault %v", out.Fault)
			}
			if got := text(t, out.Result); tt.wantText != "" && got != tt.wantText {
				t.Errorf("%s: text %q, want %q", tt.explanation, got, tt.wantText)
			}
		})
	}
}

type nilErr struct{ msg string }

func (e *nilErr) Error() string { return e.msg }

func waitForCtx(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestNilResultIsEmpty(t *testing.T) {
	t.Parallel()
	tool := toolrun.Must(toolrun.NewRaw("t", "d", []byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) { return nil, nil }))
	out := tool.Call(t.Context(), nil)
	b, err := wire.AppendCallToolResult(nil, out.Result, wire.RawJSON("{}"))
	if err != nil || !strings.HasPrefix(string(b), `{"content":[]`) || out.Kind != toolrun.OutcomeOK {
		t.Fatalf("result %s %v kind %v", b, err, out.Kind)
	}
}

func panicsInTool(context.Context, []byte) (*protocol.CallToolResult, error) {
	panic(errors.New("secret detail"))
}

func TestPanicContained(t *testing.T) {
	t.Parallel()
	tool := toolrun.Must(toolrun.NewRaw("boom", "d", []byte(`{"type":"object"}`), panicsInTool))
	out := tool.Call(t.Context(), nil)
	if out.Kind != toolrun.OutcomePanic || !out.Result.IsError {
		t.Fatalf("outcome %+v", out)
	}
	if got := text(t, out.Result); got != "Tool execution failed: internal error" {
		t.Fatalf("text %q: docs/design.md §5 says the panic text never reaches the client", got)
	}
	if out.Fault == nil || !strings.Contains(string(out.Fault.Stack), "panicsInTool") {
		t.Fatalf("fault stack lacks the panicking function:\n%s", out.Fault.Stack)
	}
	if out.Fault.Error() != "panic: secret detail" || out.Fault.Unwrap() == nil || out.Fault.Unwrap().Error() != "secret detail" {
		t.Fatalf("fault %q unwrap %v", out.Fault.Error(), out.Fault.Unwrap())
	}

	typed := toolrun.Must(toolrun.New("typedboom", "d", func(context.Context, struct{}) (panicky, error) { return panicky{}, nil }))
	if out := typed.Call(t.Context(), nil); out.Kind != toolrun.OutcomePanic || out.Fault == nil {
		t.Fatalf("panic while encoding Out: %+v", out)
	}
}

// panicky panics when encoded, so the encoding of Out is under the recover too.
type panicky struct{}

func (panicky) MarshalJSON() ([]byte, error) { panic("marshal") }

func TestHandlerIgnoringContext(t *testing.T) {
	t.Parallel()
	// synctest's clock: the handler's minute of sleep and the deadline
	// pass at once, in order.
	synctest.Test(t, func(t *testing.T) {
		tool := toolrun.Must(toolrun.NewRaw("slow", "d", []byte(`{"type":"object"}`),
			func(context.Context, []byte) (*protocol.CallToolResult, error) {
				time.Sleep(time.Minute)
				return protocol.TextResult("late"), nil
			}, toolrun.WithDeadline(10*time.Millisecond)))
		ctx, cancel := context.WithTimeout(t.Context(), tool.Deadline())
		defer cancel()
		start := time.Now()
		out := tool.Call(ctx, nil)
		if time.Since(start) < time.Minute {
			t.Fatal("Call returned before the handler")
		}
		if out.Kind != toolrun.OutcomeDeadline {
			t.Fatalf("kind %v: a result after the deadline is still a deadline", out.Kind)
		}
		if got := text(t, out.Result); got != "Tool slow timed out after 10ms" {
			t.Fatalf("text %q, want the one timeout text", got)
		}
	})
}

func TestParentCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	var ran atomic.Bool
	tool := toolrun.Must(toolrun.NewRaw("t", "d", []byte(`{"type":"object"}`),
		func(ctx context.Context, a []byte) (*protocol.CallToolResult, error) {
			ran.Store(true)
			cancel()
			return waitForCtx(ctx, a)
		}))
	out := tool.Call(ctx, nil)
	if !ran.Load() || out.Kind != toolrun.OutcomeToolError || text(t, out.Result) != "request cancelled" {
		t.Fatalf("kind %v text %q", out.Kind, text(t, out.Result))
	}
}

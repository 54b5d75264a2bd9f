package wymcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// testProbe counts what the test tools saw, for cancellation tests.
type testProbe struct {
	cancelled atomic.Int32
	started   chan struct{}
}

type addIn struct {
	A float64 `json:"a" jsonschema:"first addend"`
	B float64 `json:"b" jsonschema:"second addend"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

// panicsOnEncode is a value whose encoding panics: a fault past the tool,
// in the method's encoding of its result.
type panicsOnEncode struct{}

func (panicsOnEncode) MarshalJSON() ([]byte, error) { panic("encoder exploded") }

// testTools is the tool set of the contract tests.
func testTools(t testing.TB, probe *testProbe) []*tools.Tool {
	t.Helper()
	echo := tools.Must(tools.NewRaw("echo", "Echoes its text.",
		[]byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
		func(_ context.Context, args []byte) (*protocol.CallToolResult, error) {
			var in struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			return protocol.TextResult(in.Text), nil
		}))
	add := tools.Must(tools.New("add", "Adds two numbers.", func(_ context.Context, in addIn) (addOut, error) {
		return addOut{Sum: in.A + in.B}, nil
	}))
	noArgs := tools.Must(tools.NewRaw("no_args", "Takes nothing.",
		[]byte(`{"type":"object","additionalProperties":false}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			return protocol.TextResult("ok"), nil
		}))
	fail := tools.Must(tools.New("fail", "Always fails.", func(context.Context, struct{}) (any, error) {
		return nil, errors.New("this tool always fails")
	}))
	boom := tools.Must(tools.New("panic", "Panics.", func(context.Context, struct{}) (any, error) {
		panic("tool exploded")
	}))
	badResult := tools.Must(tools.NewRaw("bad_result", "Returns a result that cannot be encoded.",
		[]byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{}, StructuredContent: panicsOnEncode{}}, nil
		}))
	slow := tools.Must(tools.New("slow", "Sleeps ms milliseconds, honouring cancellation.",
		func(ctx context.Context, in struct {
			MS int `json:"ms"`
		}) (any, error) {
			if probe != nil && probe.started != nil {
				select {
				case probe.started <- struct{}{}:
				default:
				}
			}
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
				return "slept", nil
			case <-ctx.Done():
				if probe != nil && errors.Is(ctx.Err(), context.Canceled) {
					probe.cancelled.Add(1)
				}
				return nil, ctx.Err()
			}
		}, tools.WithDeadline(30*time.Second)))
	quick := tools.Must(tools.New("short_deadline", "Outlives its 50 ms deadline, honouring it.",
		func(ctx context.Context, _ struct{}) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, tools.WithDeadline(50*time.Millisecond)))
	stubborn := tools.Must(tools.New("stubborn", "Ignores its 50 ms deadline: returns when the test lets it (a minute at most).",
		func(context.Context, struct{}) (any, error) {
			var release <-chan struct{}
			if c := stubbornRelease.Load(); c != nil {
				release = *c
			}
			select {
			case <-release:
			case <-time.After(time.Minute):
			}
			stubbornReturned.Store(true)
			return "done", nil
		}, tools.WithDeadline(50*time.Millisecond)))
	sampling := tools.Must(tools.New("needs_sampling", "Needs the client's sampling capability.",
		func(context.Context, struct{}) (any, error) { return "sampled", nil },
		tools.WithRequiredCapabilities("sampling")))
	routed := tools.Must(tools.NewRaw("routed", "Arguments mirrored in Mcp-Param headers.",
		[]byte(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"level":{"type":"integer","x-mcp-header":"Level"},"verbose":{"type":"boolean","x-mcp-header":"Verbose"},"note":{"type":"string"}},"additionalProperties":false}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			return protocol.TextResult("routed"), nil
		}))
	progress := tools.Must(tools.New("progress", "Reports progress 0, 50, 50 (dropped), 100 of 100.",
		func(ctx context.Context, _ struct{}) (any, error) {
			total := 100.0
			for _, p := range []float64{0, 50, 50, 100} {
				tools.ReportProgress(ctx, p, &total, "step")
			}
			return "done", nil
		}))
	return []*tools.Tool{echo, add, noArgs, fail, boom, badResult, slow, quick, stubborn, sampling, routed, progress}
}

// newTestServer serves the test tools on a loopback listener (so the
// DNS-rebinding rules apply as in production).
func newTestServer(t testing.TB, opts *wymcp.Options, probe *testProbe) (*wymcp.Server, *mcptest.Endpoint) {
	t.Helper()
	if opts == nil {
		opts = &wymcp.Options{}
	}
	if opts.Logger == nil {
		// Contained faults log at Error; the tests that care capture them.
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	info := protocol.Implementation{Name: "wymcp-test", Version: "0.0.1"}
	srv, err := wymcp.New(info, opts, testTools(t, probe)...)
	if err != nil {
		t.Fatalf("wymcp.New: %v", err)
	}
	hs := httptest.NewServer(srv)
	// Keep a connection per concurrent client, as a real client pool does;
	// the default of 2 idle connections would redial under load.
	hs.Client().Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return srv, &mcptest.Endpoint{URL: hs.URL, HTTP: hs.Client(), Info: info}
}

// stubbornRelease, once closed, lets the stubborn tool return, which
// TestStubbornToolCutOff does once it has the call's answer;
// stubbornReturned says it has.
var (
	stubbornRelease  atomic.Pointer[chan struct{}]
	stubbornReturned atomic.Bool
)

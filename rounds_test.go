package wymcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// Multi-round-trip tool calls (SEP-2322) through the whole server: the
// input_required result, the sealed requestState and its binding, rounds
// served by any replica holding the key ring, and every refusal.

// allCaps declares every input kind.
const allCaps = `{"elicitation":{},"sampling":{},"roots":{}}`

const (
	adaAnswer  = `{"action":"accept","content":{"name":"Ada"}}`
	blueAnswer = `{"action":"accept","content":{"color":"blue"}}`
	parisReply = `{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"}`
	rootsReply = `{"roots":[{"uri":"file:///src"}]}`
)

var (
	nameForm  = protocol.ElicitRequest{Message: "What is your name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
	colorForm = protocol.ElicitRequest{Message: "Favourite color?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}}}`)}
)

// formField reads one string of an accepted form.
func formField(r *protocol.ElicitResult, field string) string {
	var form map[string]string
	if err := r.DecodeContent(&form); err != nil {
		return "(" + r.Action + ")"
	}
	return form[field]
}

// roundTools are the tools that ask.
func roundTools(t testing.TB) []*tools.Tool {
	t.Helper()
	askName := tools.Must(tools.NewRaw("ask_name", "Asks the user's name, then greets.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var name protocol.ElicitResult
			if err := tools.Ask(ctx, tools.Elicit("user_name", nameForm, &name)); err != nil {
				return nil, err
			}
			return protocol.TextResult("Hello, " + formField(&name, "name") + "!"), nil
		}))
	type topic struct {
		Topic string `json:"topic"`
	}
	steps := tools.Must(tools.New("steps", "Asks a name, then a color, about a topic.",
		func(ctx context.Context, in topic) (string, error) {
			var name, color protocol.ElicitResult
			if err := tools.Ask(ctx, tools.Elicit("step1", nameForm, &name)); err != nil {
				return "", err
			}
			if err := tools.Ask(ctx, tools.Elicit("step2", colorForm, &color)); err != nil {
				return "", err
			}
			return in.Topic + ": " + formField(&name, "name") + " likes " + formField(&color, "color"), nil
		}))
	askAll := tools.Must(tools.NewRaw("ask_all", "Asks a name, the model and the roots in one round.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var name protocol.ElicitResult
			var answer protocol.CreateMessageResult
			var roots protocol.ListRootsResult
			if err := tools.Ask(ctx,
				tools.Elicit("user_name", nameForm, &name),
				tools.Sample("capital", protocol.CreateMessageRequest{MaxTokens: 10, Messages: []protocol.SamplingMessage{
					{Role: "user", Content: &protocol.TextContent{Text: "Capital of France?"}}}}, &answer),
				tools.ListRoots("roots", &roots),
			); err != nil {
				return nil, err
			}
			text, _ := answer.Text()
			return protocol.TextResult(formField(&name, "name") + " " + text + " " + roots.Roots[0].URI), nil
		}))
	keep := tools.Must(tools.NewRaw("keep", "Keeps a value from round 1 and shows it in round 2.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var v string
			if found, err := tools.Recall(ctx, "kept", &v); err != nil {
				return nil, err
			} else if !found {
				v = "from round 1"
				if err := tools.Remember(ctx, "kept", v); err != nil {
					return nil, err
				}
			}
			var name protocol.ElicitResult
			if err := tools.Ask(ctx, tools.Elicit("user_name", nameForm, &name)); err != nil {
				return nil, err
			}
			return protocol.TextResult(v), nil
		}))
	progress := tools.Must(tools.NewRaw("ask_progress", "Reports progress in each round; asks in the first.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			tools.ReportProgress(ctx, 1, nil, "before asking")
			var name protocol.ElicitResult
			if err := tools.Ask(ctx, tools.Elicit("user_name", nameForm, &name)); err != nil {
				return nil, err
			}
			tools.ReportProgress(ctx, 2, nil, "answered")
			return protocol.TextResult("Hello, " + formField(&name, "name") + "!"), nil
		}))
	// Its deadline is long enough that the first round reaches its
	// question on a loaded machine (the deadline covers each round); the
	// second round waits it out whatever it is.
	deadline := tools.Must(tools.NewRaw("ask_then_stall", "Asks; once answered, outlives its deadline.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var name protocol.ElicitResult
			if err := tools.Ask(ctx, tools.Elicit("user_name", nameForm, &name)); err != nil {
				return nil, err
			}
			<-ctx.Done()
			return nil, ctx.Err()
		}, tools.WithDeadline(2*time.Second)))
	return []*tools.Tool{askName, steps, askAll, keep, progress, deadline}
}

// subjectHeader stands in for the authentication stage in these tests: its
// value becomes the caller's subject (as an Authenticator's principal
// will), so that the state's binding to the principal can be tested.
const subjectHeader = "X-Test-Subject"

// newRoundServer serves roundTools with opts behind the subject stand-in.
func newRoundServer(t testing.TB, opts *wymcp.Options) *mcptest.Endpoint {
	t.Helper()
	if opts == nil {
		opts = &wymcp.Options{}
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	info := protocol.Implementation{Name: "wymcp-rounds", Version: "0.0.1"}
	srv, err := wymcp.New(info, opts, roundTools(t)...)
	if err != nil {
		t.Fatalf("wymcp.New: %v", err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	withSubject := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if sub := r.Header.Get(subjectHeader); sub != "" {
			ctx = caller.WithIdentity(ctx, &caller.Identity{Subject: sub})
		}
		srv.ServeHTTP(w, r.WithContext(ctx))
	})
	return mcptest.Serve(t, withSubject, info)
}

// key returns a 32-byte key filled with b.
func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

// call is a tools/call of name declaring every input kind.
func call(name, args string) mcptest.RPC {
	return mcptest.ToolCall(name, args).WithCapabilities(allCaps)
}

// TestInputRequired: a first round answers 200 with an input_required
// result (spec basic/patterns/mrtr): resultType, the keyed inputRequests
// with their method and params, a requestState, the serverInfo _meta, and
// no cache fields; the retry with the answer and the state completes.
func TestInputRequired(t *testing.T) {
	t.Parallel()
	hs := newRoundServer(t, nil)
	rep := hs.Send(t, call("ask_name", ""))
	reqs, state := rep.ExpectInputRequired(t, "1")
	if ct := rep.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	in := reqs["user_name"]
	if len(reqs) != 1 || in.Method != "elicitation/create" ||
		string(in.Params) != `{"mode":"form","message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}` {
		t.Errorf("inputRequests %s", rep.Msg.Result)
	}
	var res map[string]json.RawMessage
	_ = json.Unmarshal(rep.Msg.Result, &res)
	for _, absent := range []string{"content", "isError", "ttlMs", "cacheScope"} {
		if _, ok := res[absent]; ok {
			t.Errorf("an input_required result has %s", absent)
		}
	}
	if strings.Contains(state, "Ada") || strings.Contains(state, "user_name") {
		t.Errorf("the state shows its content: %s", state)
	}
	done := hs.Send(t, call("ask_name", "").WithID(2).Retry(`{"user_name":`+adaAnswer+`}`, state)).ExpectResult(t, "2")
	if text, isErr := mcptest.ToolText(t, done); text != "Hello, Ada!" || isErr {
		t.Errorf("round 2: %q isError %v", text, isErr)
	}
}

// TestRoundsAcrossReplicas: the server keeps nothing between rounds, so two
// Servers holding the same key ring serve the rounds of one call in turn;
// a Server with another key refuses the state; one whose ring has a new key
// in front of the old still opens it (rotation).
func TestRoundsAcrossReplicas(t *testing.T) {
	t.Parallel()
	a := newRoundServer(t, &wymcp.Options{StateKeys: [][]byte{key(1)}})
	b := newRoundServer(t, &wymcp.Options{StateKeys: [][]byte{key(1)}})
	foreign := newRoundServer(t, &wymcp.Options{StateKeys: [][]byte{key(2)}})
	rotated := newRoundServer(t, &wymcp.Options{StateKeys: [][]byte{key(3), key(1)}})
	random := newRoundServer(t, nil)

	first := call("steps", `{"topic":"paint"}`)
	_, s1 := a.Send(t, first).ExpectInputRequired(t, "1")
	reqs, s2 := b.Send(t, first.WithID(2).Retry(`{"step1":`+adaAnswer+`}`, s1)).ExpectInputRequired(t, "2")
	if _, ok := reqs["step2"]; !ok || len(reqs) != 1 {
		t.Fatalf("round 2 on the other replica asked %v", reqs)
	}
	if s2 == s1 {
		t.Error("round 2's state is round 1's")
	}
	res := a.Send(t, first.WithID(3).Retry(`{"step2":`+blueAnswer+`}`, s2)).ExpectResult(t, "3")
	if text, _ := mcptest.ToolText(t, res); text != `"paint: Ada likes blue"` {
		t.Errorf("round 3: %q", text)
	}

	retry := first.WithID(4).Retry(`{"step1":`+adaAnswer+`}`, s1)
	foreign.Send(t, retry).ExpectError(t, 200, -32602, "4")
	random.Send(t, retry).ExpectError(t, 200, -32602, "4")
	_, fromRotated := rotated.Send(t, retry).ExpectInputRequired(t, "4")
	// The rotated ring seals with its newest key, which a does not hold.
	a.Send(t, first.WithID(5).Retry(`{"step2":`+blueAnswer+`}`, fromRotated)).ExpectError(t, 200, -32602, "5")
}

// stateError is the one message of every refused requestState.
const stateError = "Invalid params: requestState is invalid or has expired"

// TestRoundErrors is the multi-round-trip rows of the answer table: each
// case with its HTTP status, JSON-RPC code, id and data (or the result
// that answers it).
func TestRoundErrors(t *testing.T) {
	t.Parallel()
	hs := newRoundServer(t, &wymcp.Options{StateKeys: [][]byte{key(1)}})
	other := newRoundServer(t, &wymcp.Options{StateKeys: [][]byte{key(2)}})
	expiring := newRoundServer(t, &wymcp.Options{StateKeys: [][]byte{key(1)}, StateTTL: time.Nanosecond})

	_, state := hs.Send(t, call("steps", `{"topic":"paint"}`)).ExpectInputRequired(t, "1")
	_, aliceState := hs.Send(t, call("steps", `{"topic":"paint"}`).With(subjectHeader, "alice")).ExpectInputRequired(t, "1")
	_, expired := expiring.Send(t, call("steps", `{"topic":"paint"}`)).ExpectInputRequired(t, "1")
	step1 := `{"step1":` + adaAnswer + `}`
	retry := func(state string) mcptest.RPC {
		return call("steps", `{"topic":"paint"}`).WithID(7).Retry(step1, state)
	}

	type row struct {
		name    string
		ep      *mcptest.Endpoint
		req     mcptest.RPC
		status  int
		code    int
		message string
		data    map[string]any
	}
	rows := []row{
		{"tampered state", hs, retry(state + "-TAMPERED"), 200, -32602, stateError, nil},
		{"state with a byte changed", hs, retry(flip(state)), 200, -32602, stateError, nil},
		{"state not a string", hs, call("steps", `{"topic":"paint"}`).WithID(7).WithParams(`"requestState":42`), 200, -32602, stateError, nil},
		{"empty state", hs, call("steps", `{"topic":"paint"}`).WithID(7).WithParams(`"requestState":""`), 200, -32602, stateError, nil},
		{"state of a foreign key", other, retry(state), 200, -32602, stateError, nil},
		{"state of another tool", hs, call("ask_name", "").WithID(7).Retry(step1, state), 200, -32602, stateError, nil},
		{"state for other arguments", hs, call("steps", `{"topic":"glue"}`).WithID(7).Retry(step1, state), 200, -32602, stateError, nil},
		{"state of another principal", hs, retry(aliceState).With(subjectHeader, "mallory"), 200, -32602, stateError, nil},
		{"state of a principal, without one", hs, retry(aliceState), 200, -32602, stateError, nil},
		{"expired state", expiring, retry(expired), 200, -32602, stateError, nil},
		{"inputResponses null", hs, call("ask_name", "").WithID(7).WithParams(`"inputResponses":null`), 200, -32602, "Invalid params: params.inputResponses must be an object", nil},
		{"inputResponses an array", hs, call("ask_name", "").WithID(7).WithParams(`"inputResponses":[]`), 200, -32602, "Invalid params: params.inputResponses must be an object", nil},
		{"answer not a result", hs, call("ask_name", "").WithID(7).Retry(`{"user_name":12345}`, ""), 200, -32602, `Invalid params: inputResponses["user_name"] is not a valid elicitation/create result`, nil},
		{"elicitation not declared", hs, mcptest.ToolCall("ask_name", "").WithID(7).WithCapabilities(`{"sampling":{}}`), 400, -32021, "Missing required client capability",
			map[string]any{"requiredCapabilities": map[string]any{"elicitation": map[string]any{}}}},
		{"several kinds not declared", hs, mcptest.ToolCall("ask_all", "").WithID(7), 400, -32021, "Missing required client capability",
			map[string]any{"requiredCapabilities": map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}}},
		{"capability in a string id call", hs, withStringID(mcptest.ToolCall("ask_name", "").WithCapabilities(`{"roots":{}}`)), 400, -32021, "Missing required client capability",
			map[string]any{"requiredCapabilities": map[string]any{"elicitation": map[string]any{}}}},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := tc.ep.Send(t, tc.req)
			id := "7"
			if strings.Contains(tc.req.Body, `"id":"s"`) {
				id = `"s"`
			}
			rep.ExpectError(t, tc.status, tc.code, id)
			if rep.Msg.Error.Message != tc.message {
				t.Errorf("message %q, want %q", rep.Msg.Error.Message, tc.message)
			}
			if tc.data == nil {
				if len(rep.Msg.Error.Data) != 0 {
					t.Errorf("data %s, want none", rep.Msg.Error.Data)
				}
			} else if got := rep.Data(t); !jsonEqual(got, tc.data) {
				t.Errorf("data %v, want %v", got, tc.data)
			}
		})
	}

	// Not errors (spec "Error Handling"): a retry that lacks an answer is
	// asked again; answers nobody asked for are ignored.
	t.Run("missing answer is asked again", func(t *testing.T) {
		t.Parallel()
		reqs, _ := hs.Send(t, call("steps", `{"topic":"paint"}`).WithID(8).Retry(`{"wrong_key":`+adaAnswer+`}`, state)).ExpectInputRequired(t, "8")
		if _, ok := reqs["step1"]; !ok || len(reqs) != 1 {
			t.Errorf("asked %v, want step1 again", reqs)
		}
	})
	t.Run("extra answers are ignored", func(t *testing.T) {
		t.Parallel()
		res := hs.Send(t, call("ask_name", "").WithID(9).Retry(`{"user_name":`+adaAnswer+`,"extra":{"action":"accept"},"another":7}`, "")).ExpectResult(t, "9")
		if text, _ := mcptest.ToolText(t, res); text != "Hello, Ada!" {
			t.Errorf("text %q", text)
		}
	})
	t.Run("the principal's own state", func(t *testing.T) {
		t.Parallel()
		hs.Send(t, retry(aliceState).With(subjectHeader, "alice")).ExpectInputRequired(t, "7")
	})
	t.Run("re-encoded arguments", func(t *testing.T) {
		t.Parallel()
		hs.Send(t, call("steps", ` { "topic" : "p\u0061int" } `).WithID(7).Retry(step1, state)).ExpectInputRequired(t, "7")
	})
}

// flip changes one character in the middle of a state.
func flip(s string) string {
	b := []byte(s)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// withStringID gives r the id "s".
func withStringID(r mcptest.RPC) mcptest.RPC {
	r.Body = strings.Replace(r.Body, `"id":1,`, `"id":"s",`, 1)
	return r
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestRoundSeveralAndKept: several inputs in one round come back in one
// retry; a value the handler remembered in round 1 comes back sealed.
func TestRoundSeveralAndKept(t *testing.T) {
	t.Parallel()
	hs := newRoundServer(t, nil)
	reqs, state := hs.Send(t, call("ask_all", "")).ExpectInputRequired(t, "1")
	if len(reqs) != 3 || reqs["user_name"].Method != "elicitation/create" || reqs["capital"].Method != "sampling/createMessage" ||
		reqs["roots"].Method != "roots/list" || string(reqs["roots"].Params) != `{}` {
		t.Fatalf("inputRequests %v", reqs)
	}
	res := hs.Send(t, call("ask_all", "").WithID(2).Retry(`{"user_name":`+adaAnswer+`,"capital":`+parisReply+`,"roots":`+rootsReply+`}`, state)).ExpectResult(t, "2")
	if text, _ := mcptest.ToolText(t, res); text != "Ada Paris file:///src" {
		t.Errorf("text %q", text)
	}

	_, state = hs.Send(t, call("keep", "")).ExpectInputRequired(t, "1")
	res = hs.Send(t, call("keep", "").WithID(2).Retry(`{"user_name":`+adaAnswer+`}`, state)).ExpectResult(t, "2")
	if text, _ := mcptest.ToolText(t, res); text != "from round 1" {
		t.Errorf("kept value %q", text)
	}
}

// TestRoundStreams: a round that reports progress is answered as an SSE
// stream whose last frame is the input_required result; the next round
// streams too. Each round is its own request.
func TestRoundStreams(t *testing.T) {
	t.Parallel()
	hs := newRoundServer(t, nil)
	withToken := func(r mcptest.RPC) mcptest.RPC {
		r.Body = strings.Replace(r.Body, `"io.modelcontextprotocol/protocolVersion"`, `"progressToken":"p","io.modelcontextprotocol/protocolVersion"`, 1)
		return r
	}
	resp, msgs := hs.SendSSE(t, withToken(call("ask_progress", "")))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || len(msgs) != 2 {
		t.Fatalf("Content-Type %q, %d frames", ct, len(msgs))
	}
	if !strings.Contains(string(msgs[0]), `"method":"notifications/progress"`) {
		t.Errorf("first frame %s", msgs[0])
	}
	var last mcptest.Message
	if err := json.Unmarshal(msgs[1], &last); err != nil {
		t.Fatal(err)
	}
	_, state := mcptest.Reply{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Raw: msgs[1], Msg: last, Info: hs.Info}.ExpectInputRequired(t, "1")
	_, msgs = hs.SendSSE(t, withToken(call("ask_progress", "").WithID(2).Retry(`{"user_name":`+adaAnswer+`}`, state)))
	if len(msgs) != 3 || !strings.Contains(string(msgs[2]), `"text":"Hello, Ada!"`) || !strings.Contains(string(msgs[2]), `"resultType":"complete"`) {
		t.Errorf("round 2 frames: %s", bytes.Join(toBytes(msgs), []byte("\n")))
	}
}

func toBytes(msgs []json.RawMessage) [][]byte {
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		out[i] = m
	}
	return out
}

// TestRoundDeadline: the tool's deadline bounds each round: a round that
// outlives it is answered with the deadline's isError result.
func TestRoundDeadline(t *testing.T) {
	t.Parallel()
	hs := newRoundServer(t, nil)
	_, state := hs.Send(t, call("ask_then_stall", "")).ExpectInputRequired(t, "1")
	res := hs.Send(t, call("ask_then_stall", "").WithID(2).Retry(`{"user_name":`+adaAnswer+`}`, state)).ExpectResult(t, "2")
	if text, isErr := mcptest.ToolText(t, res); !isErr || !strings.Contains(text, "timed out") {
		t.Errorf("round 2: %q isError %v", text, isErr)
	}
}

// TestStateOptions: New refuses a key of the wrong size, one key twice and
// a negative TTL.
func TestStateOptions(t *testing.T) {
	t.Parallel()
	info := protocol.Implementation{Name: "n", Version: "1"}
	for name, opts := range map[string]*wymcp.Options{
		"short key":    {StateKeys: [][]byte{key(1), make([]byte, 16)}},
		"same key":     {StateKeys: [][]byte{key(1), key(1)}},
		"negative TTL": {StateTTL: -time.Second},
	} {
		if _, err := wymcp.New(info, opts); err == nil {
			t.Errorf("%s: New succeeded", name)
		} else if !strings.HasPrefix(err.Error(), "wymcp:") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// New copies the ring: a key changed afterwards changes nothing.
	keys := [][]byte{key(4)}
	a := newRoundServer(t, &wymcp.Options{StateKeys: keys})
	keys[0][0] = 9
	b := newRoundServer(t, &wymcp.Options{StateKeys: [][]byte{key(4)}})
	_, state := a.Send(t, call("ask_name", "")).ExpectInputRequired(t, "1")
	b.Send(t, call("ask_name", "").Retry(`{"user_name":`+adaAnswer+`}`, state)).ExpectResult(t, "1")
}

// TestRoundTelemetry: each round is its own span, joined by wymcp.call.id
// (the same random id across the rounds, never the state) and numbered by
// wymcp.call.round; an input_required round is not an error — no
// error.type, status unset — and says so in wymcp.result.type, on the span
// and on mcp.server.operation.duration. A plain call carries none of them.
func TestRoundTelemetry(t *testing.T) {
	t.Parallel()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	srv, err := wymcp.New(protocol.Implementation{Name: "t", Version: "1"},
		&wymcp.Options{TracerProvider: tp, MeterProvider: mp, Logger: slog.New(slog.DiscardHandler)}, roundTools(t)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	// ServeHTTP directly: the span has ended when it returns.
	send := func(r mcptest.RPC) []byte {
		req, err := r.Request(t.Context(), "http://127.0.0.1/mcp")
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec.Body.Bytes()
	}
	stateOf := func(body []byte) string {
		var m struct {
			Result struct {
				RequestState string `json:"requestState"`
			} `json:"result"`
		}
		_ = json.Unmarshal(body, &m)
		return m.Result.RequestState
	}
	first := call("steps", `{"topic":"paint"}`)
	s1 := stateOf(send(first))
	s2 := stateOf(send(first.WithID(2).Retry(`{"step1":`+adaAnswer+`}`, s1)))
	send(first.WithID(3).Retry(`{"step2":`+blueAnswer+`}`, s2))
	send(first.WithID(4).Retry(`{"step2":`+blueAnswer+`}`, s2+"x"))
	send(mcptest.ToolCall("ask_name", "").WithID(5))
	if s1 == "" || s2 == "" {
		t.Fatal("no state")
	}

	got := spans.GetSpans()
	if len(got) != 5 {
		t.Fatalf("%d spans, want 5", len(got))
	}
	attrs := func(i int) map[string]string {
		m := map[string]string{}
		for _, kv := range got[i].Attributes {
			m[string(kv.Key)] = kv.Value.String()
			for _, s := range []string{s1, s2} {
				if strings.Contains(kv.Value.String(), s) {
					t.Errorf("span %d: %s holds the requestState", i, kv.Key)
				}
			}
		}
		return m
	}
	id := attrs(0)["wymcp.call.id"]
	if len(id) < 16 {
		t.Fatalf("call id %q", id)
	}
	for i, want := range []struct{ round, result, errType string }{
		{"1", "input_required", ""}, {"2", "input_required", ""}, {"3", "", ""},
	} {
		a := attrs(i)
		if got[i].Name != "tools/call steps" || a["wymcp.call.id"] != id || a["wymcp.call.round"] != want.round ||
			a["wymcp.result.type"] != want.result || a["error.type"] != want.errType || got[i].Status.Code != codes.Unset {
			t.Errorf("round %d span %q: %v status %v", i+1, got[i].Name, a, got[i].Status)
		}
	}
	// A refused state opens nothing: no call attributes, the error as usual.
	if a := attrs(3); a["wymcp.call.id"] != "" || a["error.type"] != "-32602" || got[3].Status.Code != codes.Error {
		t.Errorf("tampered round: %v", a)
	}
	// -32021 for an input the client cannot give: an error, in round 1.
	if a := attrs(4); a["error.type"] != "-32021" || a["wymcp.result.type"] != "" {
		t.Errorf("undeclared input: %v", a)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	inputRequired, complete := uint64(0), uint64(0)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "mcp.server.operation.duration" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				if v, ok := dp.Attributes.Value("wymcp.result.type"); ok && v.AsString() == "input_required" {
					inputRequired += dp.Count
				} else if _, failed := dp.Attributes.Value("error.type"); !failed {
					complete += dp.Count
				}
			}
		}
	}
	if inputRequired != 2 || complete != 1 {
		t.Errorf("durations: %d input_required, %d complete; want 2 and 1", inputRequired, complete)
	}
}

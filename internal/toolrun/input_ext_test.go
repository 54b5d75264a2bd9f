package toolrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// Requests and answers the tests share.
var (
	nameForm   = protocol.ElicitRequest{Message: "Name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
	colorForm  = protocol.ElicitRequest{Message: "Color?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}}}`)}
	capital    = protocol.CreateMessageRequest{MaxTokens: 10, Messages: []protocol.SamplingMessage{{Role: "user", Content: &protocol.TextContent{Text: "Capital of France?"}}}}
	allCaps    = wire.RawJSON(`{"elicitation":{},"sampling":{},"roots":{"listChanged":true}}`)
	adaAnswer  = `{"action":"accept","content":{"name":"Ada"}}`
	blueAnswer = `{"action":"accept","content":{"color":"blue"}}`
	parisReply = `{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m","stopReason":"endTurn"}`
	rootsReply = `{"roots":[{"uri":"file:///src","name":"src"}]}`
)

// run calls tool once under a fresh Round: one round of a call.
func run(t *testing.T, tool *toolrun.Tool, r *toolrun.Round) toolrun.Outcome {
	t.Helper()
	return tool.Call(toolrun.WithRound(t.Context(), r), nil)
}

func outText(t *testing.T, out toolrun.Outcome) string {
	t.Helper()
	if out.Result == nil || len(out.Result.Content) == 0 {
		t.Fatalf("no result: %+v", out)
	}
	return out.Result.Content[0].(*protocol.TextContent).Text
}

// greeter asks for a name, then greets.
func greeter(t *testing.T) *toolrun.Tool {
	return toolrun.Must(toolrun.NewRaw("greet", "Asks a name, then greets.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var name protocol.ElicitResult
			if err := toolrun.Ask(ctx, toolrun.Elicit("name", nameForm, &name)); err != nil {
				return nil, err
			}
			var form struct {
				Name string `json:"name"`
			}
			if err := name.DecodeContent(&form); err != nil {
				return nil, err
			}
			return protocol.TextResult("Hello, " + form.Name + "!"), nil
		}))
}

// TestAskFirstRound: without an answer, Ask's error makes the call wait
// for input: the outcome names the input with its encoded request.
func TestAskFirstRound(t *testing.T) {
	t.Parallel()
	out := run(t, greeter(t), &toolrun.Round{Capabilities: allCaps})
	if out.Kind != toolrun.OutcomeInputRequired || out.Result != nil {
		t.Fatalf("kind %v result %+v, want input_required and no result", out.Kind, out.Result)
	}
	if len(out.Inputs) != 1 {
		t.Fatalf("inputs %+v", out.Inputs)
	}
	in := out.Inputs[0]
	want := `{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`
	if in.Key != "name" || in.Method != wire.MethodElicit || in.Capability != "elicitation" || string(in.Params) != want {
		t.Errorf("input %+v\nparams %s", in, in.Params)
	}
	if len(out.Carry.Answers) != 0 || len(out.Carry.Memory) != 0 {
		t.Errorf("a first round carries nothing; got %+v", out.Carry)
	}
}

// TestAskRetry: the retry's answer is what Ask returns; the handler
// completes.
func TestAskRetry(t *testing.T) {
	t.Parallel()
	out := run(t, greeter(t), &toolrun.Round{Responses: wire.RawJSON(`{"name":` + adaAnswer + `}`)})
	if out.Kind != toolrun.OutcomeOK || outText(t, out) != "Hello, Ada!" {
		t.Fatalf("kind %v text %q", out.Kind, outText(t, out))
	}
}

// TestAskSeveral: several inputs in one Ask are one round; the answered
// ones are filled and carried, the others asked, in the order named.
func TestAskSeveral(t *testing.T) {
	t.Parallel()
	var got struct {
		name  protocol.ElicitResult
		model protocol.CreateMessageResult
		roots protocol.ListRootsResult
	}
	tool := toolrun.Must(toolrun.NewRaw("all", "Asks all three.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			if err := toolrun.Ask(ctx,
				toolrun.Elicit("name", nameForm, &got.name),
				toolrun.Sample("capital", capital, &got.model),
				toolrun.ListRoots("roots", &got.roots),
			); err != nil {
				return nil, err
			}
			answer, _ := got.model.Text()
			return protocol.TextResult(answer + " " + got.roots.Roots[0].URI), nil
		}))
	out := run(t, tool, &toolrun.Round{Responses: wire.RawJSON(`{"capital":` + parisReply + `}`)})
	if out.Kind != toolrun.OutcomeInputRequired {
		t.Fatalf("kind %v", out.Kind)
	}
	var keys []string
	for _, in := range out.Inputs {
		keys = append(keys, in.Key+"="+in.Method+"/"+in.Capability+" "+string(in.Params))
	}
	want := []string{
		"name=elicitation/create/elicitation " + `{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`,
		"roots=roots/list/roots {}",
	}
	if strings.Join(keys, "\n") != strings.Join(want, "\n") {
		t.Errorf("inputs:\n%s\nwant:\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}
	if string(out.Carry.Answers["capital"]) != parisReply || len(out.Carry.Answers) != 1 {
		t.Errorf("carried %v, want the sampling answer", out.Carry.Answers)
	}
	out = run(t, tool, &toolrun.Round{
		Carried:   out.Carry,
		Responses: wire.RawJSON(`{"name":` + adaAnswer + `,"roots":` + rootsReply + `}`),
	})
	if out.Kind != toolrun.OutcomeOK || outText(t, out) != "Paris file:///src" {
		t.Fatalf("kind %v %+v", out.Kind, out.Result)
	}
	if got.name.Action != protocol.ElicitAccept || got.roots.Roots[0].Name != "src" || got.model.Model != "m" || got.model.StopReason != "endTurn" {
		t.Errorf("answers %+v", got)
	}
}

// TestAskRounds: Asks one after the other are rounds one after the other;
// each round's answers are carried to the next, where the client sends
// only the latest, so the handler re-runs from the top to completion.
func TestAskRounds(t *testing.T) {
	t.Parallel()
	var runs int
	tool := toolrun.Must(toolrun.New("steps", "Two steps.", func(ctx context.Context, _ struct{}) (string, error) {
		runs++
		var name, color protocol.ElicitResult
		if err := toolrun.Ask(ctx, toolrun.Elicit("step1", nameForm, &name)); err != nil {
			return "", err
		}
		if err := toolrun.Ask(ctx, toolrun.Elicit("step2", colorForm, &color)); err != nil {
			return "", fmt.Errorf("wrapped: %w", err)
		}
		return string(name.Content) + string(color.Content), nil
	}))
	r1 := run(t, tool, &toolrun.Round{})
	if r1.Kind != toolrun.OutcomeInputRequired || r1.Inputs[0].Key != "step1" {
		t.Fatalf("round 1: %v %+v", r1.Kind, r1.Inputs)
	}
	r2 := run(t, tool, &toolrun.Round{Carried: r1.Carry, Responses: wire.RawJSON(`{"step1":` + adaAnswer + `}`)})
	if r2.Kind != toolrun.OutcomeInputRequired || len(r2.Inputs) != 1 || r2.Inputs[0].Key != "step2" {
		t.Fatalf("round 2 (wrapped ErrInputRequired): %v %+v", r2.Kind, r2.Inputs)
	}
	r3 := run(t, tool, &toolrun.Round{Carried: r2.Carry, Responses: wire.RawJSON(`{"step2":` + blueAnswer + `}`)})
	if r3.Kind != toolrun.OutcomeOK || outText(t, r3) != `"{\"name\":\"Ada\"}{\"color\":\"blue\"}"` {
		t.Fatalf("round 3: %v %q", r3.Kind, outText(t, r3))
	}
	if runs != 3 {
		t.Errorf("the handler ran %d times, want once per round", runs)
	}
	// A retry without the latest answer asks again (spec: re-request the
	// missing information rather than fail).
	again := run(t, tool, &toolrun.Round{Carried: r2.Carry, Responses: wire.RawJSON(`{"wrong_key":{}}`)})
	if again.Kind != toolrun.OutcomeInputRequired || again.Inputs[0].Key != "step2" {
		t.Errorf("missing answer: %v %+v", again.Kind, again.Inputs)
	}
}

// TestAnswerOnce: an answer carried from an earlier round wins over the
// same key sent again; keys nobody asked for are ignored and not carried.
func TestAnswerOnce(t *testing.T) {
	t.Parallel()
	carried := toolrun.Carried{Answers: map[string]wire.RawJSON{"name": wire.RawJSON(adaAnswer)}}
	out := run(t, greeter(t), &toolrun.Round{Carried: carried,
		Responses: wire.RawJSON(`{"name":{"action":"accept","content":{"name":"Mallory"}},"extra":{"action":"accept"},"junk":1}`)})
	if out.Kind != toolrun.OutcomeOK || outText(t, out) != "Hello, Ada!" {
		t.Fatalf("kind %v text %q", out.Kind, outText(t, out))
	}
	tool := toolrun.Must(toolrun.NewRaw("two", "Asks a name then a color.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var a, b protocol.ElicitResult
			if err := toolrun.Ask(ctx, toolrun.Elicit("name", nameForm, &a)); err != nil {
				return nil, err
			}
			return nil, toolrun.Ask(ctx, toolrun.Elicit("color", colorForm, &b))
		}))
	out = run(t, tool, &toolrun.Round{Responses: wire.RawJSON(`{"name":` + adaAnswer + `,"unasked":{"action":"cancel"}}`)})
	if out.Kind != toolrun.OutcomeInputRequired {
		t.Fatalf("kind %v", out.Kind)
	}
	if _, ok := out.Carry.Answers["unasked"]; ok || len(out.Carry.Answers) != 1 {
		t.Errorf("carried %v: only the answers the handler used are carried", out.Carry.Answers)
	}
}

// TestBadResponse: an answer that is not a result of the request it
// answers refuses the call (-32602 at the server), even if the handler
// swallows Ask's error; the message names the key and the method.
func TestBadResponse(t *testing.T) {
	t.Parallel()
	swallow := toolrun.Must(toolrun.NewRaw("swallow", "Ignores Ask's error.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var a protocol.ElicitResult
			var m protocol.CreateMessageResult
			var r protocol.ListRootsResult
			_ = toolrun.Ask(ctx, toolrun.Elicit("e", nameForm, &a), toolrun.Sample("s", capital, &m), toolrun.ListRoots("r", &r))
			return protocol.TextResult("carried on"), nil
		}))
	cases := map[string]struct{ responses, key, method string }{
		"elicitation number":   {`{"e":12345}`, "e", wire.MethodElicit},
		"unknown action":       {`{"e":{"action":"maybe"}}`, "e", wire.MethodElicit},
		"content not object":   {`{"e":{"action":"accept","content":[1]}}`, "e", wire.MethodElicit},
		"sampling no role":     {`{"e":` + adaAnswer + `,"s":{"content":{"type":"text","text":"x"},"model":"m"}}`, "s", wire.MethodSample},
		"sampling no content":  {`{"e":` + adaAnswer + `,"s":{"role":"assistant","model":"m"}}`, "s", wire.MethodSample},
		"roots missing":        {`{"e":` + adaAnswer + `,"s":` + parisReply + `,"r":{}}`, "r", wire.MethodListRoots},
		"root without uri":     {`{"e":` + adaAnswer + `,"s":` + parisReply + `,"r":{"roots":[{"name":"x"}]}}`, "r", wire.MethodListRoots},
		"elicitation null":     {`{"e":null}`, "e", wire.MethodElicit},
		"elicitation a string": {`{"e":"accept"}`, "e", wire.MethodElicit},
	}
	for name, tc := range cases {
		out := run(t, swallow, &toolrun.Round{Responses: wire.RawJSON(tc.responses)})
		want := fmt.Sprintf("inputResponses[%q] is not a valid %s result", tc.key, tc.method)
		if out.Kind != toolrun.OutcomeBadInputResponse || out.BadInput != want || out.Result != nil {
			t.Errorf("%s: kind %v bad %q, want %q", name, out.Kind, out.BadInput, want)
		}
	}
}

// TestRememberRecall: a value kept in one round is found in the next; a
// later Remember replaces it; Recall of an unknown key finds nothing.
func TestRememberRecall(t *testing.T) {
	t.Parallel()
	type quote struct {
		Price int `json:"price"`
	}
	var seen []int
	tool := toolrun.Must(toolrun.NewRaw("quote", "Quotes, then asks to confirm.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var q quote
			found, err := toolrun.Recall(ctx, "quote", &q)
			if err != nil {
				return nil, err
			}
			if !found {
				q = quote{Price: 100 + len(seen)}
				if err := toolrun.Remember(ctx, "quote", q); err != nil {
					return nil, err
				}
			}
			seen = append(seen, q.Price)
			if none, _ := toolrun.Recall(ctx, "nothing", &q); none {
				return nil, errors.New("found a value never kept")
			}
			var ok protocol.ElicitResult
			if err := toolrun.Ask(ctx, toolrun.Elicit("confirm", nameForm, &ok)); err != nil {
				return nil, err
			}
			return protocol.TextResult(fmt.Sprint(q.Price)), nil
		}))
	r1 := run(t, tool, &toolrun.Round{})
	if r1.Kind != toolrun.OutcomeInputRequired || string(r1.Carry.Memory["quote"]) != `{"price":100}` {
		t.Fatalf("round 1: %v carry %v", r1.Kind, r1.Carry.Memory)
	}
	r2 := run(t, tool, &toolrun.Round{Carried: r1.Carry, Responses: wire.RawJSON(`{"confirm":` + adaAnswer + `}`)})
	if r2.Kind != toolrun.OutcomeOK || outText(t, r2) != "100" || fmt.Sprint(seen) != "[100 100]" {
		t.Fatalf("round 2: %v seen %v", r2.Kind, seen)
	}
	if err := toolrun.Remember(toolrun.WithRound(t.Context(), &toolrun.Round{}), "f", func() {}); err == nil {
		t.Error("Remember of a value that cannot be encoded succeeded")
	}
}

// TestCanAsk: the request's clientCapabilities decide; a capability must
// be an object; without a Round nothing can be asked.
func TestCanAsk(t *testing.T) {
	t.Parallel()
	var e protocol.ElicitResult
	var s protocol.CreateMessageResult
	var r protocol.ListRootsResult
	inputs := []toolrun.Input{toolrun.Elicit("e", nameForm, &e), toolrun.Sample("s", capital, &s), toolrun.ListRoots("r", &r)}
	for caps, want := range map[string]string{
		`{"sampling":{}}`:                        "s",
		`{"elicitation":{"form":{}},"roots":{}}`: "e r",
		`{"elicitation":true,"sampling":null}`:   "",
		`{}`:                                     "",
		`{"elicitation":{},"sampling":{},"roots":{}}`: "e s r",
	} {
		ctx := toolrun.WithRound(t.Context(), &toolrun.Round{Capabilities: wire.RawJSON(caps)})
		var got []string
		for _, in := range inputs {
			if toolrun.CanAsk(ctx, in) {
				got = append(got, in.Key())
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: %v, want %q", caps, got, want)
		}
	}
	if toolrun.CanAsk(t.Context(), inputs[0]) {
		t.Error("CanAsk without a Round")
	}
}

// TestAskMisuse: Ask outside a Round, and inputs that cannot be asked, are
// the handler's errors (tool errors), not input_required; a handler that
// asks and returns a result anyway has done without the input.
func TestAskMisuse(t *testing.T) {
	t.Parallel()
	var e protocol.ElicitResult
	cases := map[string]struct {
		ask  func(context.Context) error
		want string
	}{
		"no key":     {func(ctx context.Context) error { return toolrun.Ask(ctx, toolrun.Elicit("", nameForm, &e)) }, "needs a key"},
		"nil result": {func(ctx context.Context) error { return toolrun.Ask(ctx, toolrun.Elicit("k", nameForm, nil)) }, "nil result pointer"},
		"no schema": {func(ctx context.Context) error {
			return toolrun.Ask(ctx, toolrun.Elicit("k", protocol.ElicitRequest{Message: "m"}, &e))
		}, "no RequestedSchema"},
		"bad params": {func(ctx context.Context) error {
			return toolrun.Ask(ctx, toolrun.Elicit("k", protocol.ElicitRequest{RequestedSchema: json.RawMessage(`{`)}, &e))
		}, "cannot be encoded"},
		"not UTF-8": {func(ctx context.Context) error {
			return toolrun.Ask(ctx, toolrun.ListRoots("\xff", &protocol.ListRootsResult{}))
		}, "not valid UTF-8"},
		"bare sentinel": {func(context.Context) error { return toolrun.ErrInputRequired }, "input required"},
	}
	for name, tc := range cases {
		tool := toolrun.Must(toolrun.NewRaw("t", "d", []byte(`{"type":"object"}`),
			func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
				return nil, tc.ask(ctx)
			}))
		out := run(t, tool, &toolrun.Round{})
		if out.Kind != toolrun.OutcomeToolError || !strings.Contains(outText(t, out), tc.want) {
			t.Errorf("%s: kind %v %q, want a tool error with %q", name, out.Kind, outText(t, out), tc.want)
		}
	}
	// Without a Round (a Call outside a server that installed none).
	out := greeter(t).Call(t.Context(), nil)
	if out.Kind != toolrun.OutcomeToolError || !strings.Contains(outText(t, out), "not within a call of a tool") {
		t.Errorf("no Round: %v %q", out.Kind, outText(t, out))
	}
	// Asked, then returned a result: the result stands.
	fallback := toolrun.Must(toolrun.NewRaw("fb", "d", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			if err := toolrun.Ask(ctx, toolrun.Elicit("k", nameForm, &e)); errors.Is(err, toolrun.ErrInputRequired) {
				return protocol.TextResult("did without"), nil
			}
			return nil, errors.New("unexpected")
		}))
	if out := run(t, fallback, &toolrun.Round{}); out.Kind != toolrun.OutcomeOK || outText(t, out) != "did without" {
		t.Errorf("fallback: %v", out.Kind)
	}
}

// TestAskConcurrent: a handler's goroutines may ask at once; each input is
// asked once, under its key.
func TestAskConcurrent(t *testing.T) {
	t.Parallel()
	tool := toolrun.Must(toolrun.NewRaw("fan", "d", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var wg sync.WaitGroup
			for i := range 16 {
				wg.Go(func() {
					var e protocol.ElicitResult
					_ = toolrun.Ask(ctx, toolrun.Elicit(fmt.Sprint("k", i%4), nameForm, &e))
					_ = toolrun.Remember(ctx, fmt.Sprint("m", i), i)
					_ = toolrun.CanAsk(ctx, toolrun.Elicit("x", nameForm, &e))
				})
			}
			wg.Wait()
			return nil, toolrun.ErrInputRequired
		}))
	out := run(t, tool, &toolrun.Round{Capabilities: allCaps})
	if out.Kind != toolrun.OutcomeInputRequired || len(out.Inputs) != 4 || len(out.Carry.Memory) != 16 {
		t.Errorf("kind %v inputs %d memory %d", out.Kind, len(out.Inputs), len(out.Carry.Memory))
	}
}

// TestResultHelpers: the answers' accessors.
func TestResultHelpers(t *testing.T) {
	t.Parallel()
	declined := protocol.ElicitResult{Action: protocol.ElicitDecline}
	if declined.Action == protocol.ElicitAccept || declined.DecodeContent(&struct{}{}) == nil {
		t.Error("a declined elicitation has no content")
	}
	for content, want := range map[string]string{
		`{"type":"text","text":"Paris"}`:   "Paris",
		`[{"type":"text","text":"Paris"}]`: "Paris",
	} {
		if got, ok := (&protocol.CreateMessageResult{Content: json.RawMessage(content)}).Text(); !ok || got != want {
			t.Errorf("%s: %q %v", content, got, ok)
		}
	}
	for _, content := range []string{`{"type":"image","data":"AA==","mimeType":"image/png"}`, `[]`, `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`} {
		if _, ok := (&protocol.CreateMessageResult{Content: json.RawMessage(content)}).Text(); ok {
			t.Errorf("%s: read as one text", content)
		}
	}
}

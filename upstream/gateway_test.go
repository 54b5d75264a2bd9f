package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

var (
	upstreamInfo = protocol.Implementation{Name: "origin", Version: "1.0.0"}
	gatewayInfo  = protocol.Implementation{Name: "gateway", Version: "1.0.0"}
)

type echoIn struct {
	Text string `json:"text"`
}
type echoOut struct {
	Text string `json:"text"`
}

// originTools are the tools of the upstream wymcp server the tests put
// behind the gateway.
func originTools(t testing.TB) []*tools.Tool {
	echo := tools.Must(tools.New("echo", "Echoes text.", func(_ context.Context, in echoIn) (echoOut, error) {
		return echoOut(in), nil
	}, tools.WithTitle("Echo"), tools.WithAnnotations(protocol.ToolAnnotations{ReadOnlyHint: ptr(true)}),
		tools.WithIcons(protocol.Icon{Src: "https://example.com/echo.png", MimeType: "image/png", Sizes: []string{"48x48"}}),
		tools.WithMeta(map[string]any{"example.com/owner": "team-a", "example.com/weight": 12345678901234567})))
	fail := tools.Must(tools.New("fail", "Always fails.", func(_ context.Context, _ echoIn) (echoOut, error) {
		return echoOut{}, errors.New("it failed as it always does")
	}))
	progress := tools.Must(tools.New("count", "Counts to three, reporting progress.", func(ctx context.Context, _ struct{}) (string, error) {
		total := 3.0
		for i := 1; i <= 3; i++ {
			tools.ReportProgress(ctx, float64(i), &total, "step")
		}
		return "counted", nil
	}))
	ask := tools.Must(tools.New("ask", "Asks the user for a name.", func(ctx context.Context, _ struct{}) (string, error) {
		var res protocol.ElicitResult
		err := tools.Ask(ctx, tools.Elicit("name", protocol.ElicitRequest{
			Message:         "Your name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
		}, &res))
		if err != nil {
			return "", err
		}
		var v struct {
			Name string `json:"name"`
		}
		if err := res.DecodeContent(&v); err != nil {
			return "", err
		}
		return "hello " + v.Name, nil
	}))
	raw := tools.Must(tools.NewRaw("region", "Echoes its arguments; routes on region.",
		[]byte(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`),
		func(_ context.Context, args []byte) (*protocol.CallToolResult, error) {
			return protocol.TextResult(string(args)), nil
		}))
	return []*tools.Tool{echo, fail, progress, ask, raw}
}

// startOrigin serves ts as an upstream and returns its URL.
func startOrigin(t testing.TB, opts *wymcp.Options, ts ...*tools.Tool) string {
	t.Helper()
	s, err := wymcp.New(upstreamInfo, opts, ts...)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs.URL
}

// startGateway connects to the upstreams and serves their tools.
func startGateway(t testing.TB, opts *wymcp.Options, ups ...upstream.Options) *mcptest.Endpoint {
	t.Helper()
	var all []*tools.Tool
	for _, o := range ups {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		u, err := upstream.Connect(ctx, o)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = u.Close() })
		all = append(all, u.Tools()...)
	}
	s, err := wymcp.New(gatewayInfo, opts, all...)
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.Serve(t, s, gatewayInfo)
}

func TestForwardedCall(t *testing.T) {
	origin := startOrigin(t, nil, originTools(t)...)
	gw := startGateway(t, nil, upstream.Options{Name: "origin", URL: origin, Prefix: "o_"})

	rep := gw.Send(t, mcptest.ToolCall("o_echo", `{"text":"hi"}`))
	res := rep.ExpectResult(t, "1")
	if text, isErr := mcptest.ToolText(t, res); text != `{"text":"hi"}` || isErr {
		t.Fatalf("text %q isError %v; raw %s", text, isErr, rep.Raw)
	}
	if !strings.Contains(string(rep.Raw), `"structuredContent":{"text":"hi"}`) {
		t.Fatalf("structuredContent not passed through: %s", rep.Raw)
	}
	t.Logf("%s", rep.Raw)
}

func ptr[T any](v T) *T { return &v }

func TestForwardedProgressMRTRAndHeaders(t *testing.T) {
	origin := startOrigin(t, nil, originTools(t)...)
	gw := startGateway(t, nil, upstream.Options{Name: "origin", URL: origin, Prefix: "o_"})

	// Progress: the client's token, the upstream's notifications relayed.
	r := mcptest.ToolCall("o_count", `{}`)
	r.Body = strings.Replace(r.Body, `"_meta":{`, `"_meta":{"progressToken":"tok",`, 1)
	resp, msgs := gw.SendSSE(t, r)
	if resp.StatusCode != 200 || len(msgs) != 4 {
		t.Fatalf("status %d, %d messages: %s", resp.StatusCode, len(msgs), msgs)
	}
	for i, m := range msgs[:3] {
		want := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":` + string(rune('1'+i)) + `,"total":3,"message":"step"}}`
		if mcptest.CompactJSON(t, string(m)) != want {
			t.Fatalf("progress %d: %s, want %s", i, m, want)
		}
	}

	// Multi-round trip: the upstream's input_required reaches the client,
	// its requestState sealed in the gateway's.
	caps := `{"elicitation":{}}`
	rep := gw.Send(t, mcptest.ToolCall("o_ask", `{}`).WithCapabilities(caps))
	inputs, state := rep.ExpectInputRequired(t, "1")
	if in, ok := inputs["name"]; !ok || in.Method != "elicitation/create" {
		t.Fatalf("inputs %+v", inputs)
	}
	rep = gw.Send(t, mcptest.ToolCall("o_ask", `{}`).WithCapabilities(caps).Retry(`{"name":{"action":"accept","content":{"name":"Ada"}}}`, state))
	res := rep.ExpectResult(t, "1")
	if text, _ := mcptest.ToolText(t, res); text != `"hello Ada"` {
		t.Fatalf("retry: %s", rep.Raw)
	}
	// The gateway's state is bound to the arguments, as for any tool.
	rep = gw.Send(t, mcptest.ToolCall("o_ask", `{"x":1}`).WithCapabilities(caps).Retry(`{"name":{"action":"accept","content":{"name":"Ada"}}}`, state))
	rep.ExpectError(t, 200, -32602, "1")

	// x-mcp-header: the gateway checks the client's and sends its own.
	rep = gw.Send(t, mcptest.ToolCall("o_region", `{"region":"eu-west"}`).With("Mcp-Param-Region", "eu-west"))
	res = rep.ExpectResult(t, "1")
	if text, _ := mcptest.ToolText(t, res); text != `{"region":"eu-west"}` {
		t.Fatalf("region: %s", rep.Raw)
	}
	rep = gw.Send(t, mcptest.ToolCall("o_region", `{"region":"eu-west"}`).With("Mcp-Param-Region", "us"))
	rep.ExpectError(t, 400, -32020, "1")
}

// TestListedAsSent: the gateway's tools/list shows each upstream tool as
// the upstream does, byte for byte, but for the prefixed name.
func TestListedAsSent(t *testing.T) {
	origin := startOrigin(t, nil, originTools(t)...)
	gw := startGateway(t, nil, upstream.Options{Name: "origin", URL: origin, Prefix: "o_"})
	tools := func(rep mcptest.Reply) []json.RawMessage {
		rep.ExpectResult(t, "1")
		var res struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(rep.Msg.Result, &res); err != nil {
			t.Fatal(err)
		}
		return res.Tools
	}
	direct := tools((&mcptest.Endpoint{URL: origin, HTTP: http.DefaultClient, Info: upstreamInfo}).Send(t, mcptest.Call("tools/list", "")))
	via := tools(gw.Send(t, mcptest.Call("tools/list", "")))
	if len(direct) != 5 || len(via) != len(direct) {
		t.Fatalf("%d tools direct, %d through the gateway", len(direct), len(via))
	}
	for i := range direct {
		want := strings.Replace(string(direct[i]), `{"name":"`, `{"name":"o_`, 1)
		if string(via[i]) != want {
			t.Errorf("tool %d through the gateway:\n%s\nwant\n%s", i, via[i], want)
		}
	}
}

func TestFiltersAndScopes(t *testing.T) {
	origin := startOrigin(t, nil, originTools(t)...)
	u, err := upstream.Connect(context.Background(), upstream.Options{
		Name: "origin", URL: origin, Prefix: "o_",
		Include:    []string{"e*", "c*", "region"},
		Exclude:    []string{"count"},
		Scopes:     []string{"origin:use"},
		ToolScopes: map[string][]string{"echo": {"origin:echo"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	var got []string
	for _, tool := range u.Tools() {
		got = append(got, tool.Name()+strings.Join(append([]string{""}, tool.Scopes()...), " "))
	}
	if want := "o_echo origin:use origin:echo,o_region origin:use"; strings.Join(got, ",") != want {
		t.Errorf("tools %q, want %q", strings.Join(got, ","), want)
	}
	if _, err := upstream.Connect(context.Background(), upstream.Options{Name: "origin", URL: origin, Include: []string{"["}}); err == nil {
		t.Error("a malformed pattern was accepted")
	}
}

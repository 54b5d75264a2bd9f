package wymcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// goodMeta is the _meta of a well-formed 2026-07-28 request.
const goodMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1.0.0"}}`

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
		func(_ context.Context, args protocol.RawJSON) (*protocol.CallToolResult, error) {
			var in struct {
				Text string `json:"text"`
			}
			if err := protocol.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			return protocol.TextResult(in.Text), nil
		}))
	add := tools.Must(tools.New("add", "Adds two numbers.", func(_ context.Context, in addIn) (addOut, error) {
		return addOut{Sum: in.A + in.B}, nil
	}))
	noArgs := tools.Must(tools.NewRaw("no_args", "Takes nothing.",
		[]byte(`{"type":"object","additionalProperties":false}`),
		func(context.Context, protocol.RawJSON) (*protocol.CallToolResult, error) {
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
		func(context.Context, protocol.RawJSON) (*protocol.CallToolResult, error) {
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
	stubborn := tools.Must(tools.New("stubborn", "Ignores its 50 ms deadline and sleeps 3 s.",
		func(context.Context, struct{}) (any, error) {
			time.Sleep(3 * time.Second)
			return "done", nil
		}, tools.WithDeadline(50*time.Millisecond)))
	sampling := tools.Must(tools.New("needs_sampling", "Needs the client's sampling capability.",
		func(context.Context, struct{}) (any, error) { return "sampled", nil },
		tools.WithRequiredCapabilities("sampling")))
	routed := tools.Must(tools.NewRaw("routed", "Arguments mirrored in Mcp-Param headers.",
		[]byte(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"level":{"type":"integer","x-mcp-header":"Level"},"verbose":{"type":"boolean","x-mcp-header":"Verbose"},"note":{"type":"string"}},"additionalProperties":false}`),
		func(context.Context, protocol.RawJSON) (*protocol.CallToolResult, error) {
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
func newTestServer(t testing.TB, opts *wymcp.Options, probe *testProbe) (*wymcp.Server, *httptest.Server) {
	t.Helper()
	if opts == nil {
		opts = &wymcp.Options{}
	}
	if opts.Logger == nil {
		// Contained faults log at Error; the tests that care capture them.
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	srv, err := wymcp.New(wymcp.Implementation{Name: "wymcp-test", Version: "0.0.1"}, opts, testTools(t, probe)...)
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
	return srv, hs
}

// rpc is one request to send: a JSON body and the headers to set. Headers
// mapped to "" are removed from the defaults.
type rpc struct {
	verb    string
	body    string
	headers map[string]string
	// extra are added after the defaults (repeated headers).
	extra [][2]string
}

// call builds a well-formed request for method with params (an object
// without _meta; _meta is added), id 1, and the headers a client sends.
func methodCall(method, params string) rpc {
	var body string
	if params == "" {
		body = `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"_meta":` + goodMeta + `}}`
	} else {
		body = `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `,"_meta":` + goodMeta + `}}`
	}
	r := rpc{body: body, headers: map[string]string{"Mcp-Method": method}}
	return r
}

// toolCall builds a tools/call of name with arguments (raw JSON, "" for none).
func toolCall(name, arguments string) rpc {
	params := `"name":` + quote(name)
	if arguments != "" {
		params += `,"arguments":` + arguments
	}
	r := methodCall("tools/call", params)
	r.headers["Mcp-Name"] = name
	return r
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (r rpc) with(key, value string) rpc {
	h := map[string]string{}
	for k, v := range r.headers {
		h[k] = v
	}
	h[key] = value
	r.headers = h
	return r
}

// request builds r as a client sends it: POST unless r.verb says
// otherwise, the headers of a 2026-07-28 client, then r's own (mapped to ""
// to remove a default; "Host" sets the Host), then r.extra (repeats).
func (r rpc) request(ctx context.Context, url string) (*http.Request, error) {
	verb := r.verb
	if verb == "" {
		verb = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, verb, url, strings.NewReader(r.body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	for k, v := range r.headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	for _, kv := range r.extra {
		req.Header.Add(kv[0], kv[1])
	}
	return req, nil
}

// reply is a decoded answer.
type reply struct {
	status int
	header http.Header
	raw    []byte
	msg    struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
}

func send(t testing.TB, hs *httptest.Server, r rpc) reply {
	t.Helper()
	return sendContext(t, context.Background(), hs, r)
}

func sendContext(t testing.TB, ctx context.Context, hs *httptest.Server, r rpc) reply {
	t.Helper()
	req, err := r.request(ctx, hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	verb := req.Method
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatalf("%s: %v", verb, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	rep := reply{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &rep.msg); err != nil {
			t.Fatalf("answer is not JSON: %v\n%s", err, raw)
		}
	}
	return rep
}

// expectError asserts a JSON-RPC error answer: status, JSON content type,
// code, and the echoed id (`null` when the id could not be read).
func (rep reply) expectError(t testing.TB, status, code int, id string) {
	t.Helper()
	if rep.status != status {
		t.Errorf("status = %d, want %d; body %s", rep.status, status, rep.raw)
	}
	if ct := rep.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if rep.msg.JSONRPC != "2.0" {
		t.Errorf("jsonrpc = %q, want 2.0; body %s", rep.msg.JSONRPC, rep.raw)
	}
	if rep.msg.Error == nil {
		t.Fatalf("no error in answer: %s", rep.raw)
	}
	if rep.msg.Error.Code != code {
		t.Errorf("code = %d, want %d; body %s", rep.msg.Error.Code, code, rep.raw)
	}
	if rep.msg.Error.Message == "" {
		t.Errorf("empty error message")
	}
	if got := string(rep.msg.ID); got != id {
		t.Errorf("id = %s, want %s", got, id)
	}
	if rep.msg.Result != nil {
		t.Errorf("answer has both error and result: %s", rep.raw)
	}
}

// expectResult asserts a 200 JSON result with the id and returns the result.
func (rep reply) expectResult(t testing.TB, id string) map[string]any {
	t.Helper()
	if rep.status != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", rep.status, rep.raw)
	}
	if ct := rep.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if rep.msg.Error != nil {
		t.Fatalf("unexpected error: %s", rep.raw)
	}
	if got := string(rep.msg.ID); got != id {
		t.Errorf("id = %s, want %s", got, id)
	}
	var res map[string]any
	if err := json.Unmarshal(rep.msg.Result, &res); err != nil {
		t.Fatalf("result: %v: %s", err, rep.raw)
	}
	if res["resultType"] != "complete" {
		t.Errorf("resultType = %v, want complete", res["resultType"])
	}
	meta, _ := res["_meta"].(map[string]any)
	info, _ := meta["io.modelcontextprotocol/serverInfo"].(map[string]any)
	if info["name"] != "wymcp-test" || info["version"] != "0.0.1" {
		t.Errorf("_meta serverInfo = %v", meta)
	}
	return res
}

// data decodes the error's data member.
func (rep reply) data(t testing.TB) map[string]any {
	t.Helper()
	var d map[string]any
	if rep.msg.Error == nil || json.Unmarshal(rep.msg.Error.Data, &d) != nil {
		t.Fatalf("error has no object data: %s", rep.raw)
	}
	return d
}

// toolText returns the single text of a tools/call result and its isError.
func toolText(t testing.TB, res map[string]any) (string, bool) {
	t.Helper()
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("no content: %v", res)
	}
	block, _ := content[0].(map[string]any)
	if block["type"] != "text" {
		t.Fatalf("first block is not text: %v", block)
	}
	isErr, _ := res["isError"].(bool)
	text, _ := block["text"].(string)
	return text, isErr
}

func compactJSON(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("compact %q: %v", s, err)
	}
	return b.String()
}

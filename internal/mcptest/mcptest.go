// Package mcptest is the client side of wymcp's tests: it builds requests
// as a 2026-07-28 client sends them, sends them to a server under test, and
// asserts on the answers (status, headers, JSON-RPC code, id, result). The
// root package's tests, cmd/wymcp's, the soak driver and the public
// packages' runnable examples (example.go) share it, so that every test
// speaks to the server the same way.
package mcptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/protocol"
)

// Meta is the params._meta of a 2026-07-28 client that declares no
// capabilities.
const Meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1.0.0"}}`

// RPC is one request to send: a JSON body and the headers to set on top of
// a client's defaults (see Request).
type RPC struct {
	// Verb is the HTTP method; "" is POST.
	Verb string
	// Body is the JSON body.
	Body string
	// Headers replace the defaults; a header mapped to "" is removed, and
	// "Host" sets the request's Host.
	Headers map[string]string
	// Extra headers are added after the others (to repeat one).
	Extra [][2]string
}

// Call builds a well-formed request for method with params (an object's
// members without _meta, which is added; "" for none), id 1, and the
// headers a client sends.
func Call(method, params string) RPC {
	var body string
	if params == "" {
		body = `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"_meta":` + Meta + `}}`
	} else {
		body = `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `,"_meta":` + Meta + `}}`
	}
	return RPC{Body: body, Headers: map[string]string{"Mcp-Method": method}}
}

// ToolCall builds a tools/call of name with arguments (raw JSON, "" for
// none), with its Mcp-Name header.
func ToolCall(name, arguments string) RPC {
	params := `"name":` + Quote(name)
	if arguments != "" {
		params += `,"arguments":` + arguments
	}
	r := Call("tools/call", params)
	r.Headers["Mcp-Name"] = name
	return r
}

// Raw builds a request with the given body as is, and the Mcp-Method and
// (when not "") Mcp-Name headers: for bodies a test writes out whole.
func Raw(method, name, body string) RPC {
	r := RPC{Body: body, Headers: map[string]string{"Mcp-Method": method}}
	if name != "" {
		r.Headers["Mcp-Name"] = name
	}
	return r
}

// Quote returns s as a JSON string.
func Quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// With returns a copy of r with the header key set to value ("" removes it).
func (r RPC) With(key, value string) RPC {
	h := make(map[string]string, len(r.Headers)+1)
	for k, v := range r.Headers {
		h[k] = v
	}
	h[key] = value
	r.Headers = h
	return r
}

// WithID returns a copy of r whose body has id in place of Call's id 1.
func (r RPC) WithID(id int) RPC {
	r.Body = strings.Replace(r.Body, `"id":1,`, `"id":`+strconv.Itoa(id)+`,`, 1)
	return r
}

// Request builds r as a client sends it to url: POST unless r.Verb says
// otherwise, the headers of a 2026-07-28 client (Content-Type, Accept,
// MCP-Protocol-Version), then r.Headers, then r.Extra.
func (r RPC) Request(ctx context.Context, url string) (*http.Request, error) {
	verb := r.Verb
	if verb == "" {
		verb = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, verb, url, strings.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	for k, v := range r.Headers {
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
	for _, kv := range r.Extra {
		req.Header.Add(kv[0], kv[1])
	}
	return req, nil
}

// Endpoint is a server under test: where to send, with which client, and
// the Implementation its results must name.
type Endpoint struct {
	URL  string
	HTTP *http.Client
	Info protocol.Implementation
}

// HostPort returns the endpoint's host:port, for tests that dial it.
func (e *Endpoint) HostPort() string {
	u, err := url.Parse(e.URL)
	if err != nil {
		return ""
	}
	return u.Host
}

// Serve starts h on a loopback httptest server for the test's lifetime and
// returns its endpoint; info is the server's Implementation.
func Serve(t testing.TB, h http.Handler, info protocol.Implementation) *Endpoint {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return &Endpoint{URL: hs.URL, HTTP: hs.Client(), Info: info}
}

// InMemory returns an endpoint that answers through h with no network: each
// request is served by calling h.ServeHTTP on the sending goroutine, into
// an httptest.ResponseRecorder. Tests inside a testing/synctest bubble use
// it, since a goroutine waiting on a real socket is not durably blocked and
// would keep the bubble's clock from moving. The requests carry no local
// address, so the loopback Host rule does not apply.
func InMemory(h http.Handler, info protocol.Implementation) *Endpoint {
	return &Endpoint{URL: "http://wymcp.test/", HTTP: &http.Client{Transport: handlerTransport{h}}, Info: info}
}

// handlerTransport is a RoundTripper that serves each request with a handler.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// The server side of a request: what net/http would have parsed.
	srv := req.Clone(req.Context())
	srv.RequestURI = req.URL.RequestURI()
	srv.RemoteAddr = "192.0.2.1:1234"
	if srv.Host == "" {
		srv.Host = req.URL.Host
	}
	if srv.Body == nil {
		srv.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, srv)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// Reply is an answer as received.
type Reply struct {
	Status int
	Header http.Header
	Raw    []byte
	// Msg is Raw decoded as a JSON-RPC response (zero when Raw is empty).
	Msg Message
	// Info is the Implementation the endpoint's results must name.
	Info protocol.Implementation
}

// Message is a JSON-RPC response message.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// Send sends r and returns the answer; a transport failure fails the test.
func (e *Endpoint) Send(t testing.TB, r RPC) Reply {
	t.Helper()
	return e.SendContext(t, context.Background(), r)
}

// SendContext is Send under ctx.
func (e *Endpoint) SendContext(t testing.TB, ctx context.Context, r RPC) Reply {
	t.Helper()
	resp, raw := e.exchange(t, ctx, r)
	rep := Reply{Status: resp.StatusCode, Header: resp.Header, Raw: raw, Info: e.Info}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &rep.Msg); err != nil {
			t.Fatalf("answer is not JSON: %v\n%s", err, raw)
		}
	}
	return rep
}

// WithExtra returns a copy of r that also adds the header key: value after
// the others (to send a header twice).
func (r RPC) WithExtra(key, value string) RPC {
	r.Extra = append(append([][2]string(nil), r.Extra...), [2]string{key, value})
	return r
}

// Post sends r and returns the status and the body as received, for tests
// that compare answers byte for byte.
func (e *Endpoint) Post(t testing.TB, ctx context.Context, r RPC) (int, string) {
	t.Helper()
	resp, raw := e.exchange(t, ctx, r)
	return resp.StatusCode, string(raw)
}

// exchange sends r and reads the whole answer; a transport failure fails
// the test.
func (e *Endpoint) exchange(t testing.TB, ctx context.Context, r RPC) (*http.Response, []byte) {
	t.Helper()
	req, err := r.Request(ctx, e.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", req.Method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading the answer: %v", req.Method, err)
	}
	return resp, raw
}

// Abandon sends r and drops the answer: for calls a test abandons by
// cancelling ctx. It returns the transport's error, if any.
func (e *Endpoint) Abandon(ctx context.Context, r RPC) error {
	req, err := r.Request(ctx, e.URL)
	if err != nil {
		return err
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// SendSSE sends r and reads its answer as a Server-Sent Events stream: the
// response (its body consumed) and the data of each `message` event, in
// order. A frame of another event type, or a line that is not SSE, fails
// the test.
func (e *Endpoint) SendSSE(t testing.TB, r RPC) (*http.Response, []json.RawMessage) {
	t.Helper()
	req, err := r.Request(context.Background(), e.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var msgs []json.RawMessage
	sc := bufio.NewScanner(resp.Body)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if event != "message" {
				t.Errorf("event %q, want message", event)
			}
			msgs = append(msgs, json.RawMessage(strings.TrimPrefix(line, "data: ")))
		case line == "" || strings.HasPrefix(line, ":"):
		default:
			t.Errorf("unexpected SSE line %q", line)
		}
	}
	return resp, msgs
}

// ExpectError asserts a JSON-RPC error answer: status, JSON content type,
// code, a message, and the echoed id (`null` when the id could not be read).
func (rep Reply) ExpectError(t testing.TB, status, code int, id string) {
	t.Helper()
	if rep.Status != status {
		t.Errorf("status = %d, want %d; body %s", rep.Status, status, rep.Raw)
	}
	if ct := rep.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if rep.Msg.JSONRPC != "2.0" {
		t.Errorf("jsonrpc = %q, want 2.0; body %s", rep.Msg.JSONRPC, rep.Raw)
	}
	if rep.Msg.Error == nil {
		t.Fatalf("no error in answer: %s", rep.Raw)
	}
	if rep.Msg.Error.Code != code {
		t.Errorf("code = %d, want %d; body %s", rep.Msg.Error.Code, code, rep.Raw)
	}
	if rep.Msg.Error.Message == "" {
		t.Errorf("empty error message")
	}
	if got := string(rep.Msg.ID); got != id {
		t.Errorf("id = %s, want %s", got, id)
	}
	if rep.Msg.Result != nil {
		t.Errorf("answer has both error and result: %s", rep.Raw)
	}
}

// ExpectResult asserts a 200 JSON result with the id, resultType
// "complete" and the endpoint's serverInfo in _meta, and returns the result.
func (rep Reply) ExpectResult(t testing.TB, id string) map[string]any {
	t.Helper()
	if rep.Status != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", rep.Status, rep.Raw)
	}
	if ct := rep.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if rep.Msg.Error != nil {
		t.Fatalf("unexpected error: %s", rep.Raw)
	}
	if got := string(rep.Msg.ID); got != id {
		t.Errorf("id = %s, want %s", got, id)
	}
	var res map[string]any
	if err := json.Unmarshal(rep.Msg.Result, &res); err != nil {
		t.Fatalf("result: %v: %s", err, rep.Raw)
	}
	if res["resultType"] != "complete" {
		t.Errorf("resultType = %v, want complete", res["resultType"])
	}
	meta, _ := res["_meta"].(map[string]any)
	info, _ := meta["io.modelcontextprotocol/serverInfo"].(map[string]any)
	if info["name"] != rep.Info.Name || info["version"] != rep.Info.Version {
		t.Errorf("_meta serverInfo = %v, want %s %s", meta, rep.Info.Name, rep.Info.Version)
	}
	return res
}

// Data decodes the error's data member.
func (rep Reply) Data(t testing.TB) map[string]any {
	t.Helper()
	var d map[string]any
	if rep.Msg.Error == nil || json.Unmarshal(rep.Msg.Error.Data, &d) != nil {
		t.Fatalf("error has no object data: %s", rep.Raw)
	}
	return d
}

// ToolText returns the first text block of a tools/call result and the
// result's isError.
func ToolText(t testing.TB, res map[string]any) (string, bool) {
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

// CompactJSON returns s without insignificant white space.
func CompactJSON(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("compact %q: %v", s, err)
	}
	return b.String()
}

// WithCapabilities returns a copy of r whose _meta declares the client
// capabilities caps (a JSON object) in place of Meta's {}.
func (r RPC) WithCapabilities(caps string) RPC {
	r.Body = strings.Replace(r.Body, `"io.modelcontextprotocol/clientCapabilities":{}`,
		`"io.modelcontextprotocol/clientCapabilities":`+caps, 1)
	return r
}

// WithParams returns a copy of r with members (raw JSON members, such as
// `"inputResponses":{…},"requestState":"…"`) added to its params.
func (r RPC) WithParams(members string) RPC {
	r.Body = strings.Replace(r.Body, `"_meta":`, members+`,"_meta":`, 1)
	return r
}

// Retry returns a copy of r as a multi-round-trip retry (SEP-2322): its
// params carry inputResponses (a JSON object; "" for none) and the echoed
// requestState ("" for none).
func (r RPC) Retry(inputResponses, requestState string) RPC {
	var members []string
	if inputResponses != "" {
		members = append(members, `"inputResponses":`+inputResponses)
	}
	if requestState != "" {
		members = append(members, `"requestState":`+Quote(requestState))
	}
	if len(members) == 0 {
		return r
	}
	return r.WithParams(strings.Join(members, ","))
}

// ExpectInputRequired asserts a 200 JSON input_required result (SEP-2322)
// with the id, the endpoint's serverInfo in _meta, a requestState string and
// an inputRequests object, and returns the input requests by key and the
// state.
func (rep Reply) ExpectInputRequired(t testing.TB, id string) (map[string]InputRequest, string) {
	t.Helper()
	if rep.Status != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", rep.Status, rep.Raw)
	}
	if rep.Msg.Error != nil || rep.Msg.Result == nil {
		t.Fatalf("want a result: %s", rep.Raw)
	}
	if got := string(rep.Msg.ID); got != id {
		t.Errorf("id = %s, want %s", got, id)
	}
	var res struct {
		ResultType    string                  `json:"resultType"`
		InputRequests map[string]InputRequest `json:"inputRequests"`
		RequestState  *string                 `json:"requestState"`
		Meta          map[string]struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(rep.Msg.Result, &res); err != nil {
		t.Fatalf("result: %v: %s", err, rep.Raw)
	}
	if res.ResultType != "input_required" || res.InputRequests == nil || res.RequestState == nil || *res.RequestState == "" {
		t.Fatalf("want resultType input_required with inputRequests and requestState: %s", rep.Raw)
	}
	if info := res.Meta["io.modelcontextprotocol/serverInfo"]; info.Name != rep.Info.Name || info.Version != rep.Info.Version {
		t.Errorf("_meta serverInfo = %+v, want %s %s", info, rep.Info.Name, rep.Info.Version)
	}
	return res.InputRequests, *res.RequestState
}

// InputRequest is an entry of an input_required result's inputRequests.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

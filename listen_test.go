package wymcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
)

// The listen streams of docs/design.md §5a, each contract by its exact
// wire shape.

var listenInfo = protocol.Implementation{Name: "listen", Version: "1.0.0"}

// listenMeta is the result _meta every result of listenInfo's server names.
const listenMeta = `"io.modelcontextprotocol/serverInfo":{"name":"listen","version":"1.0.0"}`

// listenServer serves generation(1) with opts (ToolsChange set) on a
// loopback listener.
func listenServer(t *testing.T, opts *wymcp.Options) (*wymcp.Server, *mcptest.Endpoint) {
	t.Helper()
	if opts == nil {
		opts = &wymcp.Options{}
	}
	opts.ToolsChange = true
	srv, err := wymcp.New(listenInfo, opts, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	return srv, mcptest.Serve(t, srv, listenInfo)
}

// listen builds a subscriptions/listen with id and filter (the
// notifications object).
func listen(id, filter string) mcptest.RPC {
	return mcptest.Raw("subscriptions/listen", "", `{"jsonrpc":"2.0","id":`+id+`,"method":"subscriptions/listen","params":{"notifications":`+filter+`,"_meta":`+mcptest.Meta+`}}`)
}

// ackOf, changedOf and endOf are the exact frames of the stream whose
// listen request had id.
func ackOf(id, honoured string) string {
	return `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `},"notifications":` + honoured + `}}`
}

func changedOf(id string) string {
	return `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}}}`
}

func endOf(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","_meta":{` + listenMeta + `,"io.modelcontextprotocol/subscriptionId":` + id + `}}}`
}

// openListen opens a stream and checks its headers and its ack.
func openListen(t *testing.T, ep *mcptest.Endpoint, r mcptest.RPC, id, honoured string) *mcptest.Stream {
	t.Helper()
	s := ep.Listen(t, r)
	if s.Resp.StatusCode != http.StatusOK || s.Resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("listen: %d %q, want 200 text/event-stream", s.Resp.StatusCode, s.Resp.Header.Get("Content-Type"))
	}
	if got := s.Resp.Header.Get("Cache-Control"); got != "no-cache, no-transform" {
		t.Errorf("Cache-Control %q", got)
	}
	if got := s.Resp.Header.Get("X-Accel-Buffering"); got != "no" {
		t.Errorf("X-Accel-Buffering %q", got)
	}
	f, ok := s.Next(t)
	if !ok || f.Data != ackOf(id, honoured) {
		t.Fatalf("first frame %+v (open %v), want the ack %s", f, ok, ackOf(id, honoured))
	}
	return s
}

// expectEnd reads the stream to its end: its next message is the graceful
// result, and nothing follows.
func expectEnd(t *testing.T, s *mcptest.Stream, id string) {
	t.Helper()
	if got := s.NextData(t); got != endOf(id) {
		t.Fatalf("got %s, want the result %s", got, endOf(id))
	}
	for {
		f, ok := s.Next(t)
		if !ok {
			return
		}
		if f.Comment == "" {
			t.Fatalf("a frame after the result: %s", f.Data)
		}
	}
}

// TestListenOffByDefault: without ToolsChange nothing is advertised and
// subscriptions/listen is a method the server does not have (404 -32601),
// so the conformance suite skips its listen checks.
func TestListenOffByDefault(t *testing.T) {
	t.Parallel()
	srv, err := wymcp.New(listenInfo, nil, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	ep := mcptest.Serve(t, srv, listenInfo)
	res := ep.Send(t, mcptest.Call("server/discover", "")).ExpectResult(t, "1")
	if caps := mcptest.CompactJSON(t, string(mustJSON(t, res["capabilities"]))); caps != `{"tools":{}}` {
		t.Errorf("capabilities %s, want {\"tools\":{}}", caps)
	}
	ep.Send(t, listen("1", `{"toolsListChanged":true}`)).ExpectError(t, 404, -32601, "1")
}

// TestListenAcknowledgedFirst: with ToolsChange, server/discover
// advertises tools.listChanged, and a listen is answered with an SSE
// stream whose first message is the ack, tagged with the request's id
// (number or string) and naming the types honoured.
func TestListenAcknowledgedFirst(t *testing.T) {
	t.Parallel()
	_, ep := listenServer(t, nil)
	res := ep.Send(t, mcptest.Call("server/discover", "")).ExpectResult(t, "1")
	if caps := mcptest.CompactJSON(t, string(mustJSON(t, res["capabilities"]))); caps != `{"tools":{"listChanged":true}}` {
		t.Errorf("capabilities %s", caps)
	}
	openListen(t, ep, listen("7", `{"toolsListChanged":true}`), "7", `{"toolsListChanged":true}`)
	openListen(t, ep, listen(`"listen:0"`, `{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["a://b"],"taskIds":["t"]}`), `"listen:0"`, `{"toolsListChanged":true}`)
	openListen(t, ep, listen("8", `{}`), "8", `{}`)
}

// TestListenToolsChanged: a SetTools that changes the list is told on the
// stream, after the new list is published; the stream stays open.
func TestListenToolsChanged(t *testing.T) {
	t.Parallel()
	srv, ep := listenServer(t, nil)
	s := openListen(t, ep, listen("3", `{"toolsListChanged":true}`), "3", `{"toolsListChanged":true}`)
	if err := srv.SetTools(generation(t, 2)...); err != nil {
		t.Fatal(err)
	}
	if got := s.NextData(t); got != changedOf("3") {
		t.Fatalf("got %s, want %s", got, changedOf("3"))
	}
	// What the notification says is already true.
	res := ep.Send(t, mcptest.Call("tools/list", "")).ExpectResult(t, "1")
	if n := len(toolNames(res)); n != 3 {
		t.Errorf("tools/list after the notification lists %d tools, want generation 2's 3", n)
	}
	// Another change, another frame (once the coalescing gap has passed).
	if err := srv.SetTools(generation(t, 3)...); err != nil {
		t.Fatal(err)
	}
	if got := s.NextData(t); got != changedOf("3") {
		t.Fatalf("got %s, want %s", got, changedOf("3"))
	}
}

// TestListenHonoursFilter: a stream that asked for prompts only is
// acknowledged with nothing honoured and never sent a tools notification,
// even when a change is pending as the server ends it (a pending change is
// told before the result, so a stream that took it would show it here).
func TestListenHonoursFilter(t *testing.T) {
	t.Parallel()
	srv, ep := listenServer(t, nil)
	prompts := openListen(t, ep, listen("4", `{"promptsListChanged":true}`), "4", `{}`)
	off := openListen(t, ep, listen("5", `{"toolsListChanged":false}`), "5", `{}`)
	tools := openListen(t, ep, listen("6", `{"toolsListChanged":true}`), "6", `{"toolsListChanged":true}`)
	if err := srv.SetTools(generation(t, 2)...); err != nil {
		t.Fatal(err)
	}
	if got := tools.NextData(t); got != changedOf("6") {
		t.Fatalf("the tools stream got %s", got)
	}
	go func() { _ = srv.Shutdown(context.Background()) }()
	expectEnd(t, prompts, "4")
	expectEnd(t, off, "5")
	expectEnd(t, tools, "6")
}

// TestListenKeepAlive: a quiet stream sends the SSE comment ": keep-alive"
// (the interval is shortened here; it is 25 s by default, inside nginx's
// 75 s read timeout).
func TestListenKeepAlive(t *testing.T) {
	t.Parallel()
	srv, ep := listenServer(t, nil)
	wymcp.SetListenTiming(srv, time.Millisecond, time.Millisecond)
	s := openListen(t, ep, listen("1", `{"toolsListChanged":true}`), "1", `{"toolsListChanged":true}`)
	for range 3 {
		if f, ok := s.Next(t); !ok || f.Comment != " keep-alive" {
			t.Fatalf("frame %+v (open %v), want the comment \": keep-alive\"", f, ok)
		}
	}
}

// TestListenEndsOnDrain: a drain ends every stream with the listen
// request's result, written before Shutdown returns (the test closes the
// connections once it has, and still reads the result); a listen during
// the drain is acknowledged, ended at once and closes its connection;
// once Shutdown stops admitting, a listen is refused 503.
func TestListenEndsOnDrain(t *testing.T) {
	t.Parallel()
	srv, err := wymcp.New(listenInfo, &wymcp.Options{ToolsChange: true, DrainDelay: time.Hour}, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	ep := &mcptest.Endpoint{URL: hs.URL, HTTP: hs.Client(), Info: listenInfo}
	before := openListen(t, ep, listen("9", `{"toolsListChanged":true}`), "9", `{"toolsListChanged":true}`)

	drainCtx, stopDrain := context.WithCancel(context.Background())
	drained := make(chan error, 1)
	go func() { drained <- srv.Drain(drainCtx) }()
	expectEnd(t, before, "9")
	during := openListen(t, ep, listen("10", `{"toolsListChanged":true}`), "10", `{"toolsListChanged":true}`)
	// net/http's client reads "Connection: close" into Close.
	if !during.Resp.Close {
		t.Errorf("a listen during the drain: no Connection: close (headers %v)", during.Resp.Header)
	}
	expectEnd(t, during, "10")
	stopDrain()
	<-drained

	// A stream open when Shutdown begins is ended before it returns.
	srv2, err := wymcp.New(listenInfo, &wymcp.Options{ToolsChange: true}, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	hs2 := httptest.NewServer(srv2)
	t.Cleanup(hs2.Close)
	ep2 := &mcptest.Endpoint{URL: hs2.URL, HTTP: hs2.Client(), Info: listenInfo}
	open := openListen(t, ep2, listen("11", `{"toolsListChanged":true}`), "11", `{"toolsListChanged":true}`)
	if err := srv2.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	hs2.CloseClientConnections()
	expectEnd(t, open, "11")
	// On a connection of its own: the stream's, closed by the server, may
	// still be in ep2's pool when a loaded machine's client has not yet
	// seen it close (a POST written on it reads EOF, and is not retried).
	fresh := &http.Transport{}
	t.Cleanup(fresh.CloseIdleConnections)
	ep3 := &mcptest.Endpoint{URL: hs2.URL, HTTP: &http.Client{Transport: fresh}, Info: listenInfo}
	rep := ep3.Send(t, listen("12", `{"toolsListChanged":true}`))
	rep.ExpectError(t, 503, -32603, "12")
	if rep.Header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", rep.Header.Get("Retry-After"))
	}
}

// TestListenLimits: the streams are bounded per caller (429, no
// Retry-After) and in total (503, Retry-After), callers told apart by the
// address their trusted proxy forwarded for; the streams take none of
// MaxInFlight's places, and a refused listen takes no stream's.
func TestListenLimits(t *testing.T) {
	t.Parallel()
	_, ep := listenServer(t, &wymcp.Options{
		MaxListenStreams:          2,
		MaxListenStreamsPerCaller: 1,
		MaxInFlight:               1,
		TrustedProxies:            []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	})
	from := func(r mcptest.RPC, addr string) mcptest.RPC { return r.With("X-Forwarded-For", addr) }
	openListen(t, ep, from(listen("1", `{"toolsListChanged":true}`), "198.51.100.1"), "1", `{"toolsListChanged":true}`)

	rep := ep.Send(t, from(listen("2", `{"toolsListChanged":true}`), "198.51.100.1"))
	rep.ExpectError(t, 429, -32603, "2")
	if rep.Msg.Error.Message != "Too many listen streams from this caller: close one first" || rep.Header.Get("Retry-After") != "" {
		t.Errorf("per caller: %q, Retry-After %q", rep.Msg.Error.Message, rep.Header.Get("Retry-After"))
	}
	openListen(t, ep, from(listen("3", `{"toolsListChanged":true}`), "198.51.100.2"), "3", `{"toolsListChanged":true}`)
	rep = ep.Send(t, from(listen("4", `{"toolsListChanged":true}`), "198.51.100.3"))
	rep.ExpectError(t, 503, -32603, "4")
	if rep.Msg.Error.Message != "Server busy: too many listen streams; retry later" || rep.Header.Get("Retry-After") != "1" {
		t.Errorf("total: %q, Retry-After %q", rep.Msg.Error.Message, rep.Header.Get("Retry-After"))
	}
	// Two streams open, one in-flight place: calls are still served.
	ep.Send(t, mcptest.ToolCall("version", `{}`).WithID(5)).ExpectResult(t, "5")
	ep.Send(t, mcptest.Call("tools/list", "").WithID(6)).ExpectResult(t, "6")
}

// TestListenCountsAgainstAnswerBudget: a stream holds its frames' bytes of
// the answer budget for its life; one the budget cannot take is refused
// as a call the budget cannot take is (503, Retry-After, -32603).
func TestListenCountsAgainstAnswerBudget(t *testing.T) {
	t.Parallel()
	// A budget of one byte takes one stream (a budget holding nothing
	// admits whatever the charge), then none.
	_, ep := listenServer(t, &wymcp.Options{AnswerBudget: 1})
	openListen(t, ep, listen("1", `{"toolsListChanged":true}`), "1", `{"toolsListChanged":true}`)
	rep := ep.Send(t, listen("2", `{"toolsListChanged":true}`))
	rep.ExpectError(t, 503, -32603, "2")
	if rep.Header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", rep.Header.Get("Retry-After"))
	}
}

// TestListenRefusals: a listen without the filter, or with a member of the
// wrong type, is -32602 (200, as the method's own errors are); one whose
// Accept excludes SSE is 406; a 2025-era client has no such method in its
// revision (200 -32601), and its initialize still says listChanged false.
func TestListenRefusals(t *testing.T) {
	t.Parallel()
	_, ep := listenServer(t, &wymcp.Options{Versions: []string{"2026-07-28", "2025-11-25"}})
	ep.Send(t, mcptest.Call("subscriptions/listen", "").WithID(1)).ExpectError(t, 200, -32602, "1")
	ep.Send(t, listen("2", `{"toolsListChanged":"yes"}`)).ExpectError(t, 200, -32602, "2")
	ep.Send(t, listen("3", `[]`)).ExpectError(t, 200, -32602, "3")
	ep.Send(t, listen("4", `{"toolsListChanged":true}`).With("Accept", "application/json")).ExpectError(t, 406, -32600, "4")

	legacy := mcptest.Raw("subscriptions/listen", "", `{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`).With("MCP-Protocol-Version", "2025-11-25")
	ep.Send(t, legacy).ExpectError(t, 200, -32601, "5")
	init := mcptest.Raw("initialize", "", `{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`).With("MCP-Protocol-Version", "")
	rep := ep.Send(t, init)
	if rep.Status != 200 || !strings.Contains(string(rep.Raw), `"capabilities":{"tools":{"listChanged":false}}`) {
		t.Errorf("a 2025-era initialize: %d %s, want capabilities with listChanged false", rep.Status, rep.Raw)
	}
}

// TestListenAuth: a listen is authenticated as any request (401 without a
// token, 403 without a required scope), and the per-caller bound counts
// by the authenticated caller.
func TestListenAuth(t *testing.T) {
	t.Parallel()
	ep := newAuthServer(t, &wymcp.Options{ToolsChange: true, MaxListenStreamsPerCaller: 1})
	rep := ep.Send(t, listen("1", `{"toolsListChanged":true}`))
	rep.ExpectError(t, 401, -32600, "1")
	if !strings.HasPrefix(rep.Header.Get("WWW-Authenticate"), "Bearer ") {
		t.Errorf("WWW-Authenticate %q", rep.Header.Get("WWW-Authenticate"))
	}
	ep.Send(t, bearer(listen("2", `{}`), "outsider")).ExpectError(t, 403, -32600, "2")
	openListen(t, ep, bearer(listen("3", `{"toolsListChanged":true}`), "reader"), "3", `{"toolsListChanged":true}`)
	ep.Send(t, bearer(listen("4", `{"toolsListChanged":true}`), "reader")).ExpectError(t, 429, -32603, "4")
	openListen(t, ep, bearer(listen("5", `{"toolsListChanged":true}`), "admin"), "5", `{"toolsListChanged":true}`)
}

// TestListenSpan: each stream is one SERVER span, subscriptions/listen,
// that ends when the stream does.
func TestListenSpan(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	srv, ep := listenServer(t, &wymcp.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
	s := openListen(t, ep, listen("1", `{"toolsListChanged":true}`), "1", `{"toolsListChanged":true}`)
	for _, sp := range rec.Ended() {
		if sp.Name() == "subscriptions/listen" {
			t.Fatal("the listen span ended while its stream is open")
		}
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	expectEnd(t, s, "1")
	var found bool
	for _, sp := range rec.Ended() {
		if sp.Name() != "subscriptions/listen" {
			continue
		}
		found = true
		for _, a := range sp.Attributes() {
			if a.Key == "mcp.method.name" && a.Value.AsString() != "subscriptions/listen" {
				t.Errorf("mcp.method.name %q", a.Value.AsString())
			}
		}
	}
	if !found {
		t.Fatal("no subscriptions/listen span ended with the stream")
	}
}

// mustJSON encodes v, failing the test if it cannot be.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stallWriter is the ResponseWriter of a connection whose client stops
// reading once stalled: a flush then waits out the write deadline and
// fails, as a write to a full socket does.
type stallWriter struct {
	hdr      http.Header
	flushed  chan string
	mu       sync.Mutex
	buf      []byte
	stalled  bool
	deadline time.Time
}

func (w *stallWriter) Header() http.Header { return w.hdr }
func (w *stallWriter) WriteHeader(int)     {}

func (w *stallWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	return len(p), nil
}

func (w *stallWriter) SetWriteDeadline(d time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadline = d
	return nil
}

func (w *stallWriter) FlushError() error {
	w.mu.Lock()
	if !w.stalled {
		out := string(w.buf)
		w.buf = nil
		w.mu.Unlock()
		w.flushed <- out
		return nil
	}
	d := w.deadline
	w.mu.Unlock()
	if d.IsZero() {
		select {} // no deadline: a write to a full socket waits for ever
	}
	<-time.After(time.Until(d))
	return os.ErrDeadlineExceeded
}

func (w *stallWriter) stall() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stalled = true
}

// TestListenSlowReaderCut: a client that stops reading loses its stream
// when a frame cannot be written within WriteTimeout; SetTools never waits
// for it, and the other streams are told as ever.
func TestListenSlowReaderCut(t *testing.T) {
	t.Parallel()
	// WriteTimeout bounds every stream's writes, the reading one's too: 2 s
	// leaves a loaded machine room to write its frames in time.
	srv, ep := listenServer(t, &wymcp.Options{WriteTimeout: 2 * time.Second})
	wymcp.SetListenTiming(srv, time.Hour, 0)
	req, err := listen("1", `{"toolsListChanged":true}`).Request(context.Background(), "http://127.0.0.1/")
	if err != nil {
		t.Fatal(err)
	}
	req.RemoteAddr = "192.0.2.1:1234"
	stuck := &stallWriter{hdr: http.Header{}, flushed: make(chan string, 16)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeHTTP(stuck, req)
	}()
	if got := <-stuck.flushed; got != "event: message\ndata: "+ackOf("1", `{"toolsListChanged":true}`)+"\n\n" {
		t.Fatalf("the stuck stream's first frame %q", got)
	}
	stuck.stall()
	other := openListen(t, ep, listen("2", `{"toolsListChanged":true}`), "2", `{"toolsListChanged":true}`)
	for v := range 5 {
		if err := srv.SetTools(generation(t, v+2)...); err != nil {
			t.Fatal(err)
		}
	}
	if got := other.NextData(t); got != changedOf("2") {
		t.Fatalf("the reading stream got %s", got)
	}
	<-done // cut at its write deadline: the handler has returned
}

// TestListenOutlivesReadTimeout: a stream outlives the http.Server's
// ReadTimeout (cmd/wymcp's -read-timeout, 30 s), which bounds reading the
// request, not the answer: ten keep-alives at 150 ms take longer than its
// second, and the stream is still told of a change after them. (The
// request itself must be read within the second of its accept: room for
// a loaded machine's stall between the dial and the request.)
func TestListenOutlivesReadTimeout(t *testing.T) {
	t.Parallel()
	srv, err := wymcp.New(listenInfo, &wymcp.Options{ToolsChange: true}, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	wymcp.SetListenTiming(srv, 150*time.Millisecond, 0)
	hs := httptest.NewUnstartedServer(srv)
	hs.Config.ReadTimeout = time.Second
	hs.Start()
	t.Cleanup(hs.Close)
	ep := &mcptest.Endpoint{URL: hs.URL, HTTP: hs.Client(), Info: listenInfo}
	s := openListen(t, ep, listen("1", `{"toolsListChanged":true}`), "1", `{"toolsListChanged":true}`)
	for range 10 {
		if f, ok := s.Next(t); !ok || f.Comment != " keep-alive" {
			t.Fatalf("frame %+v (open %v), want a keep-alive", f, ok)
		}
	}
	if err := srv.SetTools(generation(t, 2)...); err != nil {
		t.Fatal(err)
	}
	if got := s.NextData(t); got != changedOf("1") {
		t.Fatalf("got %s", got)
	}
}

// TestListenLimitIPv6Prefix: without auth the per-caller bound counts an
// IPv6 client by its /64, as a rate limit does: a host holds a whole /64,
// and would otherwise open MaxListenStreamsPerCaller streams from each of
// its addresses.
func TestListenLimitIPv6Prefix(t *testing.T) {
	t.Parallel()
	_, ep := listenServer(t, &wymcp.Options{
		MaxListenStreamsPerCaller: 1,
		TrustedProxies:            []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	})
	from := func(r mcptest.RPC, addr string) mcptest.RPC { return r.With("X-Forwarded-For", addr) }
	openListen(t, ep, from(listen("1", `{"toolsListChanged":true}`), "2001:db8:1:2::1"), "1", `{"toolsListChanged":true}`)
	ep.Send(t, from(listen("2", `{"toolsListChanged":true}`), "2001:db8:1:2:ffff::9")).ExpectError(t, 429, -32603, "2")
	openListen(t, ep, from(listen("3", `{"toolsListChanged":true}`), "2001:db8:1:3::1"), "3", `{"toolsListChanged":true}`)
}

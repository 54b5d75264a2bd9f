package wymcp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
)

// The drain (docs/design.md §4, §6a; drain.go): readiness, Connection: close
// on every answer, the lame duck's length, calls in flight, and what
// follows. The timing tests run in a testing/synctest bubble, on its fake
// clock, with the in-memory endpoint (a real socket would keep the clock
// from moving).

// drainInfo is the Implementation of the drain tests' servers.
var drainInfo = protocol.Implementation{Name: "wymcp-drain", Version: "0.0.1"}

// inBubble runs f in a synctest bubble with a server built inside it (its
// actors' goroutines must belong to the bubble), and lets the actors' idle
// workers time out before the bubble ends.
func inBubble(t *testing.T, opts wymcp.Options, f func(t *testing.T, srv *wymcp.Server, ep *mcptest.Endpoint)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		if opts.Logger == nil {
			opts.Logger = slog.New(slog.DiscardHandler)
		}
		srv, err := wymcp.New(drainInfo, &opts, testTools(t, nil)...)
		if err != nil {
			t.Fatal(err)
		}
		f(t, srv, mcptest.InMemory(srv, drainInfo))
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown at the end: %v", err)
		}
		// The actors' pooled workers end after two idle periods (30 s).
		time.Sleep(2 * time.Minute)
	})
}

// get sends a GET to h and returns the recorded answer.
func get(h http.Handler, method, host string) *http.Response {
	req := httptest.NewRequest(method, "http://"+host+"/readyz", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(resp *http.Response) string {
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestReadiness: the readiness endpoint is 200 from New until a drain
// begins, 503 from then on; it answers GET and HEAD only; it is outside
// the MCP request path (any Host, no span).
func TestReadiness(t *testing.T) {
	t.Parallel()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	srv, hs := newTestServer(t, &wymcp.Options{TracerProvider: tp, AllowedHosts: []string{"mcp.example"}}, nil)
	ready := srv.ReadinessHandler()

	for _, tc := range []struct {
		name, method, host string
		status             int
		body               string
	}{
		{"GET", http.MethodGet, "127.0.0.1:8080", 200, "ready\n"},
		{"HEAD", http.MethodHead, "127.0.0.1:8080", 200, ""},
		{"a kubelet's probe: the pod's address as Host, which the MCP endpoint would refuse", http.MethodGet, "10.1.2.3:8080", 200, "ready\n"},
		{"POST", http.MethodPost, "127.0.0.1:8080", 405, "method not allowed\n"},
	} {
		resp := get(ready, tc.method, tc.host)
		if got := body(resp); resp.StatusCode != tc.status || got != tc.body {
			t.Errorf("%s: %d %q, want %d %q", tc.name, resp.StatusCode, got, tc.status, tc.body)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s: Cache-Control %q, want no-store", tc.name, cc)
		}
		if c := resp.Header.Get("Connection"); c != "" {
			t.Errorf("%s: Connection %q before any drain", tc.name, c)
		}
	}
	if resp := get(ready, http.MethodPost, "127.0.0.1"); resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("405 Allow = %q, want GET, HEAD", resp.Header.Get("Allow"))
	}
	if srv.Draining() {
		t.Error("Draining() before any drain")
	}
	if n := len(spans.Ended()); n != 0 {
		t.Errorf("readiness probes recorded %d spans, want none", n)
	}

	// Drain with no delay configured returns at once; the server is a lame
	// duck from then on, and still serves calls.
	if err := srv.Drain(t.Context()); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	if !srv.Draining() {
		t.Error("Draining() false after Drain")
	}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		resp := get(ready, method, "127.0.0.1:8080")
		if resp.StatusCode != 503 || resp.Header.Get("Connection") != "close" {
			t.Errorf("%s while draining: %d Connection %q, want 503 and close", method, resp.StatusCode, resp.Header.Get("Connection"))
		}
	}
	if got := body(get(ready, http.MethodGet, "127.0.0.1:8080")); got != "draining\n" {
		t.Errorf("body while draining %q", got)
	}
	hs.Send(t, mcptest.ToolCall("echo", `{"text":"still served"}`)).ExpectResult(t, "1")
	if n := len(spans.Ended()); n != 1 {
		t.Errorf("%d spans after one call, want 1 (the probes record none)", n)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if resp := get(ready, http.MethodGet, "127.0.0.1:8080"); resp.StatusCode != 503 {
		t.Errorf("after Shutdown: %d, want 503", resp.StatusCode)
	}
}

// withProgress asks for a progress stream.
func withProgress(r mcptest.RPC) mcptest.RPC {
	r.Body = strings.Replace(r.Body, `"_meta":{`, `"_meta":{"progressToken":"p",`, 1)
	return r
}

// TestDrainClosesEveryAnswer: while draining, every kind of answer carries
// "Connection: close" — results, errors, each rejection stage, 202s, a
// progress stream, and the watchdog's late answer — and none does before.
func TestDrainClosesEveryAnswer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		req         mcptest.RPC
		status      int
		contentType string
	}{
		{"tools/call result", mcptest.ToolCall("echo", `{"text":"x"}`), 200, "application/json"},
		{"server/discover", mcptest.Call("server/discover", ""), 200, "application/json"},
		{"tools/list", mcptest.Call("tools/list", ""), 200, "application/json"},
		{"tool error (isError)", mcptest.ToolCall("fail", `{}`), 200, "application/json"},
		{"unknown tool (-32602 in a 200)", mcptest.ToolCall("nope", `{}`), 200, "application/json"},
		{"supervisor containment (-32603)", mcptest.ToolCall("bad_result", `{}`), 200, "application/json"},
		{"watchdog's late answer", mcptest.ToolCall("stubborn", `{}`), 200, "application/json"},
		{"progress stream", withProgress(mcptest.ToolCall("progress", `{}`)), 200, "text/event-stream"},
		{"wire rejection: verb", mcptest.RPC{Verb: http.MethodGet}, 405, "application/json"},
		{"wire rejection: Content-Type", mcptest.ToolCall("echo", `{"text":"x"}`).With("Content-Type", "text/plain"), 415, "application/json"},
		{"parse error", mcptest.RPC{Body: `{`}, 400, "application/json"},
		{"protocol fields", mcptest.Call("tools/list", "").With("MCP-Protocol-Version", ""), 400, "application/json"},
		{"method table", mcptest.Call("ping", ""), 404, "application/json"},
		{"notification", mcptest.RPC{Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`}, 202, ""},
	}
	inBubble(t, wymcp.Options{}, func(t *testing.T, srv *wymcp.Server, ep *mcptest.Endpoint) {
		for _, draining := range []bool{false, true} {
			if draining {
				if err := srv.Drain(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			want := map[bool]string{false: "", true: "close"}[draining]
			for _, tc := range cases {
				req, err := tc.req.Request(t.Context(), ep.URL)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := ep.HTTP.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != tc.contentType {
					t.Errorf("%s: %d %q, want %d %q; body %s", tc.name, resp.StatusCode, resp.Header.Get("Content-Type"), tc.status, tc.contentType, b)
				}
				if got := resp.Header.Get("Connection"); got != want {
					t.Errorf("%s (draining %v): Connection %q, want %q", tc.name, draining, got, want)
				}
			}
		}
	})
}

// TestDrainHonoursDelay: Shutdown keeps admitting and answering calls for
// the whole DrainDelay — each answer closing its connection — and only then
// refuses them with 503, Retry-After and the id (docs/design.md §5's
// overload row).
func TestDrainHonoursDelay(t *testing.T) {
	t.Parallel()
	const delay = 5 * time.Second
	inBubble(t, wymcp.Options{DrainDelay: delay}, func(t *testing.T, srv *wymcp.Server, ep *mcptest.Endpoint) {
		begin := time.Now()
		done := make(chan error, 1)
		go func() { done <- srv.Shutdown(context.Background()) }()
		synctest.Wait()
		if !srv.Draining() {
			t.Fatal("Shutdown did not begin the drain at once")
		}
		time.Sleep(delay - time.Millisecond)
		rep := ep.Send(t, mcptest.ToolCall("echo", `{"text":"in the lame duck"}`).WithID(7))
		rep.ExpectResult(t, "7")
		wantHeader(t, rep, "Connection", "close")
		select {
		case err := <-done:
			t.Fatalf("Shutdown returned %v within the drain delay", err)
		default:
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
		default:
			t.Fatal("Shutdown still running after the delay with nothing in flight")
		}
		if took := time.Since(begin); took != delay {
			t.Errorf("Shutdown took %v, want the delay, %v", took, delay)
		}
		rep = ep.Send(t, mcptest.ToolCall("echo", `{"text":"too late"}`).WithID(8))
		rep.ExpectError(t, 503, -32603, "8")
		wantHeader(t, rep, "Retry-After", "1")
		wantHeader(t, rep, "Connection", "close")
	})
}

// TestDrainAnswersInFlight: calls admitted before the drain or during its
// delay run to their end and are answered, with Connection: close since
// their answers are written during the drain; Shutdown returns when the
// last is answered.
func TestDrainAnswersInFlight(t *testing.T) {
	t.Parallel()
	const delay = 5 * time.Second
	inBubble(t, wymcp.Options{DrainDelay: delay}, func(t *testing.T, srv *wymcp.Server, ep *mcptest.Endpoint) {
		begin := time.Now()
		var wg sync.WaitGroup
		replies := make([]mcptest.Reply, 3)
		send := func(i int, ms int) {
			wg.Go(func() { replies[i] = ep.Send(t, mcptest.ToolCall("slow", fmt.Sprintf(`{"ms":%d}`, ms)).WithID(i)) })
		}
		send(0, 8000) // before the drain, answered 8 s in
		synctest.Wait()
		done := make(chan error, 1)
		var stopped time.Time
		go func() {
			err := srv.Shutdown(context.Background())
			stopped = time.Now()
			done <- err
		}()
		time.Sleep(4 * time.Second)
		send(1, 3000) // during the delay, answered 7 s in
		send(2, 500)  // during the delay, answered 4.5 s in
		wg.Wait()
		if err := <-done; err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		for i, rep := range replies {
			res := rep.ExpectResult(t, fmt.Sprint(i))
			if text, isErr := mcptest.ToolText(t, res); isErr || text != `"slept"` {
				t.Errorf("call %d: %q isError %v", i, text, isErr)
			}
			wantHeader(t, rep, "Connection", "close")
		}
		if took := stopped.Sub(begin); took != 8*time.Second {
			t.Errorf("Shutdown returned %v after the first call began, want 8s (its end)", took)
		}
	})
}

// TestSecondShutdown: a second Shutdown during the first's drain returns
// when its own ctx ends, stopping admissions (the caller ran out of
// patience) and cutting the call in flight short, which is answered so
// (drain.go); the first still returns nil; a Shutdown after both returns
// at once.
func TestSecondShutdown(t *testing.T) {
	t.Parallel()
	const delay = 5 * time.Second
	inBubble(t, wymcp.Options{DrainDelay: delay}, func(t *testing.T, srv *wymcp.Server, ep *mcptest.Endpoint) {
		inFlight := make(chan mcptest.Reply, 1)
		go func() { inFlight <- ep.Send(t, mcptest.ToolCall("slow", `{"ms":3000}`).WithID(1)) }()
		synctest.Wait()
		first := make(chan error, 1)
		go func() { first <- srv.Shutdown(context.Background()) }()
		synctest.Wait()

		begin := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("second Shutdown = %v, want context.DeadlineExceeded", err)
		}
		if took := time.Since(begin); took != time.Second {
			t.Errorf("second Shutdown returned after %v, want its ctx's 1s", took)
		}
		rep := ep.Send(t, mcptest.ToolCall("echo", `{"text":"x"}`).WithID(2))
		rep.ExpectError(t, 503, -32603, "2")
		wantHeader(t, rep, "Retry-After", "1")

		expectCut(t, <-inFlight, "1")
		if err := <-first; err != nil {
			t.Errorf("first Shutdown = %v, want nil", err)
		}
		begin = time.Now()
		if err := srv.Shutdown(context.Background()); err != nil || time.Since(begin) != 0 {
			t.Errorf("Shutdown after the stop = %v after %v, want nil at once", err, time.Since(begin))
		}
	})
}

// TestDrainContext: Drain returns when its ctx ends, and the server stays
// a lame duck that admits calls; a later Drain waits for the same end.
func TestDrainContext(t *testing.T) {
	t.Parallel()
	const delay = 5 * time.Second
	inBubble(t, wymcp.Options{DrainDelay: delay}, func(t *testing.T, srv *wymcp.Server, ep *mcptest.Endpoint) {
		begin := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Drain(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Drain = %v, want context.DeadlineExceeded", err)
		}
		rep := ep.Send(t, mcptest.ToolCall("echo", `{"text":"x"}`))
		rep.ExpectResult(t, "1")
		wantHeader(t, rep, "Connection", "close")
		if err := srv.Drain(context.Background()); err != nil {
			t.Errorf("second Drain = %v", err)
		}
		if took := time.Since(begin); took != delay {
			t.Errorf("second Drain returned %v after the first began, want %v", took, delay)
		}
	})
}

// TestDrainOverload: the in-flight bound still holds during the lame duck,
// and its 503 closes the connection too.
func TestDrainOverload(t *testing.T) {
	t.Parallel()
	inBubble(t, wymcp.Options{MaxInFlight: 1, DrainDelay: time.Minute}, func(t *testing.T, srv *wymcp.Server, ep *mcptest.Endpoint) {
		held := make(chan mcptest.Reply, 1)
		go func() { held <- ep.Send(t, mcptest.ToolCall("slow", `{"ms":1000}`)) }()
		synctest.Wait()
		go srv.Drain(context.Background())
		synctest.Wait()
		rep := ep.Send(t, mcptest.ToolCall("echo", `{"text":"x"}`).WithID(5))
		rep.ExpectError(t, 503, -32603, "5")
		wantHeader(t, rep, "Retry-After", "1")
		wantHeader(t, rep, "Connection", "close")
		(<-held).ExpectResult(t, "1")
	})
}

package wymcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestProgressStream: a tools/call with _meta.progressToken from a client
// that accepts text/event-stream is answered as an SSE stream: increasing
// notifications/progress carrying the token, then the result, which ends
// the stream (docs/design.md §6).
func TestProgressStream(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, nil, nil)
	r := mcptest.ToolCall("progress", `{}`)
	r.Body = strings.Replace(r.Body, `"_meta":{`, `"_meta":{"progressToken":"tok-1",`, 1)
	resp, msgs := hs.SendSSE(t, r)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if got := resp.Header.Get("X-Accel-Buffering"); got != "no" {
		t.Errorf("X-Accel-Buffering = %q", got)
	}
	if !strings.HasPrefix(resp.Header.Get("Cache-Control"), "no-cache") {
		t.Errorf("Cache-Control = %q", resp.Header.Get("Cache-Control"))
	}
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-1","progress":0,"total":100,"message":"step"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-1","progress":50,"total":100,"message":"step"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-1","progress":100,"total":100,"message":"step"}}`,
	}
	if len(msgs) != 4 {
		t.Fatalf("%d messages, want 3 notifications and the result: %s", len(msgs), msgs)
	}
	for i, w := range want {
		if string(msgs[i]) != w {
			t.Errorf("message %d\n got %s\nwant %s", i, msgs[i], w)
		}
	}
	var final struct {
		ID     int `json:"id"`
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msgs[3], &final); err != nil || final.ID != 1 || len(final.Result.Content) != 1 || final.Result.Content[0].Text != `"done"` {
		t.Errorf("final message %s", msgs[3])
	}
}

// TestProgressWithoutStream: without a progress token, or from a client
// that accepts only JSON, the same call answers plain JSON and the
// progress reports are dropped.
func TestProgressWithoutStream(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, nil, nil)
	hs.Send(t, mcptest.ToolCall("progress", `{}`)).ExpectResult(t, "1")
	r := mcptest.ToolCall("progress", `{}`).With("Accept", "application/json")
	r.Body = strings.Replace(r.Body, `"_meta":{`, `"_meta":{"progressToken":7,`, 1)
	rep := hs.Send(t, r)
	rep.ExpectResult(t, "1")
}

// TestAcceptForms: whether a progress call streams follows the Accept
// header however it is written: text/event-stream in any case and with
// parameters streams; a header that admits only JSON, or admits a stream
// only through a wildcard, gets plain JSON (the stream is offered only to
// a client that names it).
func TestAcceptForms(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, nil, nil)
	call := func(accept string) mcptest.RPC {
		r := mcptest.ToolCall("progress", `{}`).With("Accept", accept)
		r.Body = strings.Replace(r.Body, `"_meta":{`, `"_meta":{"progressToken":7,`, 1)
		return r
	}
	for _, accept := range []string{"text/event-stream;q=1, application/json;q=0.5", "application/json,TEXT/Event-Stream", " text/event-stream "} {
		resp, msgs := hs.SendSSE(t, call(accept))
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || len(msgs) != 4 {
			t.Errorf("Accept %q: %d %q, %d messages, want a stream of 3 notifications and the result", accept, resp.StatusCode, resp.Header.Get("Content-Type"), len(msgs))
		}
	}
	for _, accept := range []string{"application/json", "*/*", "application/json, text/*"} {
		rep := hs.Send(t, call(accept))
		rep.ExpectResult(t, "1")
		if ct := rep.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Accept %q: Content-Type %q, want plain JSON", accept, ct)
		}
	}
}

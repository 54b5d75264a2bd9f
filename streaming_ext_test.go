package wymcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestParamHeaders: an argument whose schema carries x-mcp-header must be
// mirrored in its Mcp-Param-<Name> header (SEP-2243; DESIGN §5: -32020,
// HTTP 400, when they disagree).
func TestParamHeaders(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, nil, nil)
	cases := []struct {
		name    string
		args    string
		headers map[string]string
		ok      bool
	}{
		{"all match", `{"region":"eu-west","level":3,"verbose":true}`, map[string]string{"Mcp-Param-Region": "eu-west", "Mcp-Param-Level": "3", "Mcp-Param-Verbose": "true"}, true},
		{"header name case-insensitive", `{"region":"eu"}`, map[string]string{"mcp-param-region": "eu"}, true},
		{"OWS trimmed", `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "  eu\t"}, true},
		{"integer compared numerically", `{"level":42}`, map[string]string{"Mcp-Param-Level": "042"}, true},
		{"Base64 sentinel", `{"region":"日本"}`, map[string]string{"Mcp-Param-Region": "=?base64?5pel5pys?="}, true},
		{"literal without the sentinel's suffix", `{"region":"=?base64?abc"}`, map[string]string{"Mcp-Param-Region": "=?base64?abc"}, true},
		{"no arguments, no headers", ``, nil, true},
		{"undeclared argument needs no header", `{"note":"x"}`, nil, true},
		{"null argument, no header", `{"region":null}`, nil, true},
		{"header missing", `{"region":"eu"}`, nil, false},
		{"value differs", `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "us"}, false},
		{"value case differs", `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "EU"}, false},
		{"integer differs", `{"level":3}`, map[string]string{"Mcp-Param-Level": "4"}, false},
		{"integer not a number", `{"level":3}`, map[string]string{"Mcp-Param-Level": "three"}, false},
		{"boolean differs", `{"verbose":false}`, map[string]string{"Mcp-Param-Verbose": "true"}, false},
		{"bad Base64 padding", `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "=?base64?ZX?="}, false},
		{"bad Base64 alphabet", `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "=?base64?Z$U=?="}, false},
		{"header without its argument", `{}`, map[string]string{"Mcp-Param-Region": "eu"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mcptest.ToolCall("routed", tc.args)
			for k, v := range tc.headers {
				r = r.With(k, v)
			}
			rep := hs.Send(t, r)
			if tc.ok {
				rep.ExpectResult(t, "1")
			} else {
				rep.ExpectError(t, 400, -32020, "1")
			}
		})
	}
	t.Run("header sent twice", func(t *testing.T) {
		t.Parallel()
		r := mcptest.ToolCall("routed", `{"region":"eu"}`).WithExtra("Mcp-Param-Region", "eu").WithExtra("Mcp-Param-Region", "eu")
		hs.Send(t, r).ExpectError(t, 400, -32020, "1")
	})
}

// TestProgressStream: a tools/call with _meta.progressToken from a client
// that accepts text/event-stream is answered as an SSE stream: increasing
// notifications/progress carrying the token, then the result, which ends
// the stream (DESIGN §6).
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

package wymcp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestHostileBodies: inputs built to break parsers get the answer
// docs/design.md §5 specifies, never a crash, a hang or a lost reply.
func TestHostileBodies(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, &wymcp.Options{MaxBodyBytes: 16 << 20}, nil)
	tenMB := strings.Repeat("a", 10<<20)
	cases := []struct {
		name   string
		req    mcptest.RPC
		status int
		code   int // 0: a result
		id     string
	}{
		{"100k levels of nesting", mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`}, 400, -32700, "null"},
		{"100k levels of objects", mcptest.RPC{Body: strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000)}, 400, -32700, "null"},
		{"10 MB string within the limit", mcptest.ToolCall("echo", `{"text":"`+tenMB+`"}`), 200, 0, "1"},
		{"duplicate id", mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list","params":{"_meta":` + mcptest.Meta + `}}`}, 400, -32700, "null"},
		{"duplicate name", mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"add","arguments":{"text":"x"},"_meta":` + mcptest.Meta + `}}`}, 400, -32700, "null"},
		{"duplicate _meta", mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + mcptest.Meta + `,"_meta":{}}}`}, 400, -32700, "null"},
		{"duplicate argument", mcptest.ToolCall("echo", `{"text":"a","text":"b"}`), 400, -32700, "null"},
		{"invalid UTF-8 in an argument", mcptest.ToolCall("echo", "{\"text\":\"\xed\xa0\x80\"}"), 400, -32700, "null"},
		{"lone surrogate in an argument", mcptest.ToolCall("echo", `{"text":"\udfff"}`), 400, -32700, "null"},
		{"id array", mcptest.RPC{Body: `{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`}, 400, -32600, "null"},
		{"id -1e400", mcptest.RPC{Body: `{"jsonrpc":"2.0","id":-1e400,"method":"tools/list"}`}, 400, -32600, "null"},
		{"huge argument array", mcptest.ToolCall("echo", `{"text":[`+strings.Repeat("1,", 500000)+`1]}`), 200, 0, "1"},
		{"10k-byte Mcp-Name", mcptest.ToolCall("echo", `{"text":"x"}`).With("Mcp-Name", strings.Repeat("e", 10000)), 400, -32020, "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := hs.Send(t, tc.req)
			if tc.code == 0 {
				rep.ExpectResult(t, tc.id)
				return
			}
			rep.ExpectError(t, tc.status, tc.code, tc.id)
		})
	}
	t.Run("id past 1024 bytes", func(t *testing.T) {
		t.Parallel()
		rep := hs.Send(t, mcptest.RPC{Body: `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 1023) + `","method":"tools/list"}`})
		rep.ExpectError(t, 400, -32600, "null")
		if want := "Invalid Request: id too long (its JSON text may be at most 1024 bytes)"; rep.Msg.Error == nil || rep.Msg.Error.Message != want {
			t.Errorf("error %+v, want the message %q", rep.Msg.Error, want)
		}
	})
	t.Run("10 MB string past the limit", func(t *testing.T) {
		t.Parallel()
		_, small := newTestServer(t, nil, nil) // default 4 MiB
		small.Send(t, mcptest.ToolCall("echo", `{"text":"`+tenMB+`"}`)).ExpectError(t, 413, -32600, "null")
	})
}

// rawExchange writes raw bytes on a new connection and reads one HTTP
// response (or reports that the connection closed without one).
func rawExchange(t *testing.T, hs *mcptest.Endpoint, raw string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", hs.HostPort())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func rawRequest(headers, body string) string {
	return "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
		"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n" + headers + "\r\n" + body
}

// TestHostileWire: header and framing attacks are refused by the HTTP edge
// before a method runs, and the server keeps answering.
func TestHostileWire(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, nil, nil)
	body := mcptest.ToolCall("echo", `{"text":"hi"}`).Body
	cases := []struct {
		name   string
		raw    string
		status int // 0: no response expected (connection closed)
	}{
		// RFC 9112 §6.3: Transfer-Encoding overrides Content-Length; net/http
		// drops the Content-Length, so the body is read by its chunks alone
		// and no second message can hide behind a length.
		{"Content-Length and Transfer-Encoding", rawRequest(fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n", 5), fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)), 200},
		{"two Content-Lengths", rawRequest(fmt.Sprintf("Content-Length: %d\r\nContent-Length: %d\r\n", len(body), len(body)+1), body), 400},
		{"CR in a header value", rawRequest(fmt.Sprintf("Content-Length: %d\r\nX-Evil: a\rb\r\n", len(body)), body), 400},
		{"LF in a header value", rawRequest(fmt.Sprintf("Content-Length: %d\r\nX-Evil: a\nMcp-Name: add\r\n", len(body)), body), 400},
		{"chunked, stops halfway", rawRequest("Transfer-Encoding: chunked\r\n", fmt.Sprintf("%x\r\n%s", len(body), body[:len(body)/2])), 0},
		{"chunked, whole", rawRequest("Transfer-Encoding: chunked\r\n", fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)), 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			raw := tc.raw
			if tc.status == 0 {
				// Send half a body, then close the write side: the server
				// must not answer a message it never received whole.
				conn, err := net.Dial("tcp", hs.HostPort())
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
				_, _ = io.WriteString(conn, raw)
				_ = conn.(*net.TCPConn).CloseWrite()
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					return // closed without an answer: also fine
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 400 || !strings.Contains(string(b), `"code":-32700`) {
					t.Errorf("a truncated body was answered %d %s, want 400 and -32700", resp.StatusCode, b)
				}
				return
			}
			resp, text := rawExchange(t, hs, raw)
			if resp == nil {
				t.Fatalf("no response: %s", text)
			}
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.status, text)
			}
		})
	}
	hs.Send(t, mcptest.ToolCall("echo", `{"text":"still answering"}`)).ExpectResult(t, "1")
}

// FuzzServeHTTP drives the whole request path with arbitrary bodies and
// MCP header values: every input gets one of the answers docs/design.md §5
// specifies — a status from its table, and a JSON-RPC message (or 202 with
// no body) — never a panic, a hang or an empty 200.
func FuzzServeHTTP(f *testing.F) {
	good := mcptest.ToolCall("echo", `{"text":"hi"}`).Body
	f.Add(good, "tools/call", "echo", "2026-07-28", "")
	f.Add(mcptest.Call("tools/list", `"cursor":"x"`).Body, "tools/list", "", "2026-07-28", "")
	f.Add(mcptest.ToolCall("routed", `{"region":"eu","level":3}`).Body, "tools/call", "routed", "2026-07-28", "=?base64?ZXU=?=")
	f.Add(`{"jsonrpc":"2.0","method":"notifications/x"}`, "", "", "", "")
	f.Add(`[1]`, "x", "y", "z", "w")
	f.Add(mcptest.ToolCall("needs_sampling", `{}`).Body, "tools/call", "needs_sampling", "2026-07-28", "")
	srv, _ := newTestServer(f, nil, nil) // only the handler is fuzzed, in process
	allowed := map[int]bool{200: true, 202: true, 400: true, 403: true, 404: true, 405: true, 406: true, 413: true, 415: true, 503: true}
	f.Fuzz(func(t *testing.T, body, method, name, version, param string) {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range map[string]string{"Mcp-Method": method, "Mcp-Name": name, "MCP-Protocol-Version": version, "Mcp-Param-Region": param} {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if !allowed[rec.Code] {
			t.Fatalf("status %d is not in docs/design.md §5", rec.Code)
		}
		if rec.Code == 202 {
			if rec.Body.Len() != 0 {
				t.Fatalf("202 with a body: %q", rec.Body)
			}
			return
		}
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" || (msg.Result == nil) == (msg.Error == nil) {
			t.Fatalf("status %d, answer is not one JSON-RPC response: %q", rec.Code, rec.Body)
		}
		if rec.Code != 200 && msg.Error == nil {
			t.Fatalf("status %d with a result", rec.Code)
		}
	})
}

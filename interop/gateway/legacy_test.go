package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// legacySession is a 2025-era client of the gateway, written out by hand:
// initialize (declaring elicitation), its session id if the gateway gives
// one, notifications/initialized, then calls whose streams may carry
// requests to the client, each answered by a POST of its own.
type legacySession struct {
	t       *testing.T
	url     string
	session string
}

const legacyVersion = "2025-11-25"

func newLegacySession(t *testing.T, ctx context.Context, url string) *legacySession {
	t.Helper()
	s := &legacySession{t: t, url: url}
	resp := s.post(ctx, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+legacyVersion+`","capabilities":{"elicitation":{}},"clientInfo":{"name":"legacy-client","version":"1.0.0"}}}`)
	s.session = resp.Header.Get("Mcp-Session-Id")
	res := s.read(ctx, resp, nil)
	if !strings.Contains(string(res), `"protocolVersion":"`+legacyVersion+`"`) {
		t.Fatalf("initialize: %s", res)
	}
	r := s.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, _ = io.Copy(io.Discard, r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: HTTP %d", r.StatusCode)
	}
	return s
}

func (s *legacySession) post(ctx context.Context, body string) *http.Response {
	s.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", legacyVersion)
	if s.session != "" {
		req.Header.Set("Mcp-Session-Id", s.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// call calls the tool name; each request to the client on the call's
// stream is answered with answer's result. It returns the call's result.
func (s *legacySession) call(ctx context.Context, name, args string, answer func(method string, params json.RawMessage) string) json.RawMessage {
	s.t.Helper()
	return s.read(ctx, s.post(ctx, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`), answer)
}

// read reads the answer to a request, JSON or a stream of events.
func (s *legacySession) read(ctx context.Context, resp *http.Response, answer func(string, json.RawMessage) string) json.RawMessage {
	s.t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		s.t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
	}
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	handle := func(data []byte) (json.RawMessage, bool) {
		var m msg
		if err := json.Unmarshal(data, &m); err != nil {
			s.t.Fatalf("message %q: %v", data, err)
		}
		switch {
		case m.Method == "":
			if m.Error != nil {
				s.t.Fatalf("error answer: %s", data)
			}
			return m.Result, true
		case m.ID == nil: // a notification
			return nil, false
		case answer == nil:
			s.t.Fatalf("a request to the client: %s", data)
		}
		r := s.post(ctx, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+answer(m.Method, m.Params)+`}`)
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if r.StatusCode != http.StatusAccepted {
			s.t.Fatalf("the answer to %s was refused: HTTP %d", m.Method, r.StatusCode)
		}
		return nil, false
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		res, _ := handle(b)
		return res
	}
	br := bufio.NewReader(resp.Body)
	var data []byte
	for {
		line, err := br.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		case line == "" && data != nil:
			if res, ok := handle(data); ok {
				return res
			}
			data = nil
		}
		if err != nil {
			s.t.Fatalf("the stream ended without an answer: %v", err)
		}
	}
}

package upstream

// Fuzz targets for every parser of what an upstream sends: the events of
// its text/event-stream answers (sseReader), each JSON-RPC message
// (parseMessage), and a tools/list page with the served tools built from
// it (listPage, client.serve). The wire package's FuzzPassThrough covers
// the tools/call result the gateway splices.

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wymcp/wymcp/internal/strictjson"
)

// Answers of a real wymcp server (2026-07-28), as it wrote them.
const (
	fuzzDiscover  = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"origin","version":"1.0.0"}}}}`
	fuzzToolsList = `{"resultType":"complete","tools":[{"name":"echo","title":"Echo","description":"Echoes text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false},"outputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false},"annotations":{"readOnlyHint":true},"icons":[{"src":"https://example.com/echo.png","mimeType":"image/png","sizes":["48x48"]}],"_meta":{"example.com/owner":"team-a","example.com/weight":12345678901234567}},{"name":"fail","description":"Always fails.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false},"outputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}},{"name":"count","description":"Counts to three, reporting progress.","inputSchema":{"type":"object","properties":{},"additionalProperties":false}},{"name":"ask","description":"Asks the user for a name.","inputSchema":{"type":"object","properties":{},"additionalProperties":false}},{"name":"region","description":"Echoes its arguments; routes on region.","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}}],"ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"origin","version":"1.0.0"}}}`
	fuzzEcho      = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"text\":\"hi\"}"}],"structuredContent":{"text":"hi"},"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"origin","version":"1.0.0"}}}}`
	fuzzFail      = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"it failed as it always does"}],"isError":true,"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"origin","version":"1.0.0"}}}}`
	fuzzAsk       = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"name":{"method":"elicitation/create","params":{"mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"AduOy2gvkv7DxmvNFCxOf7mkyPGlTAkyOdVcipsaQT_S8QA6TW38PAxcuinCIaOaNh5UHKaEBNkdyUxn8yLc8bJhQ6Qa3soJZI6jZFGPwVpZbmDQWOmrAPS1mzlk2g3uhA","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"origin","version":"1.0.0"}}}}`
	fuzzStream    = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"tok\",\"progress\":1,\"total\":3,\"message\":\"step\"}}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"tok\",\"progress\":2,\"total\":3,\"message\":\"step\"}}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\\\"counted\\\"\"}],\"resultType\":\"complete\",\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"origin\",\"version\":\"1.0.0\"}}}}\n\n"
	// A 2025-era server's.
	fuzzInitialize = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"s","version":"1","description":"d","websiteUrl":"https://example.com"}}}`
	fuzzLegacyList = `{"tools":[{"name":"iconic","description":"Has an icon and an array output schema.","inputSchema":{"type":"object"},"outputSchema":null,"icons":[{"src":"https://example.com/i.png"}]}],"nextCursor":"c2"}`
)

// FuzzSSE: sseReader.next over any bytes, read at once or a byte at a
// time, with a small limit, never panics, never returns more than the
// limit, ends with io.EOF, io.ErrUnexpectedEOF or errTooLarge, and
// returns the events a plain reading of the format finds (sseEvents):
// all of them, or, when it stops at the limit, those before.
func FuzzSSE(f *testing.F) {
	for _, s := range []string{
		fuzzStream,
		strings.ReplaceAll(fuzzStream, "\n", "\r\n"),
		strings.ReplaceAll(fuzzStream, "\n", "\r") + "\n",
		"data: a\r\ndata: b\r\n\r\n",
		"data: cr only\r\r",
		"data: a\n\r",
		"data: a\rdata: b\r\rdata: c\r\r\n",
		"data: a\r\r\r\ndata: b\n\n",
		"data: a\r\n\rdata: b\r\n\r\n",
		": comment\n: another\n\ndata:x\n\n",
		"data\n\ndata:\n\ndata: \n\n",
		"id: 1\nretry: 10\nevent: x\ndata:  two spaces\nfoo: bar\n\n",
		"data: first\ndata: second\ndata: third\n\n",
		"data: " + strings.Repeat("x", 5000) + "\n\n",
		": " + strings.Repeat("c", 5000) + "\ndata: after a long comment\n\n",
		"data: " + strings.Repeat("y", 60) + "\ndata: " + strings.Repeat("z", 60) + "\n\n",
		"data: cut",
		"data: a\n",
		"data: a\n\ndata: b\r",
		"\r\n\r\n\n\r",
		"\xef\xbb\xbfdata: bom\n\n",
		"data: \x00\xff\n\n",
		"",
	} {
		f.Add([]byte(s), uint16(64), false)
		f.Add([]byte(s), uint16(1024), true)
	}
	f.Fuzz(func(t *testing.T, in []byte, size uint16, oneByte bool) {
		limit := int64(size%8192) + 1
		var r io.Reader = bytes.NewReader(in)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		s := newSSEReader(r, limit)
		var (
			got [][]byte
			err error
		)
		for {
			var data []byte
			if data, err = s.next(); err != nil {
				break
			}
			if int64(len(data)) > limit {
				t.Fatalf("an event of %d bytes, limit %d", len(data), limit)
			}
			got = append(got, bytes.Clone(data))
			if len(got) > len(in) {
				t.Fatalf("%d events from %d bytes", len(got), len(in))
			}
		}
		want, pending, longest := sseEvents(in)
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			if !equalEvents(got, want) {
				t.Fatalf("events %q, want %q", got, want)
			}
		case errors.Is(err, errTooLarge):
			if len(got) > len(want) || !equalEvents(got, want[:len(got)]) {
				t.Fatalf("before errTooLarge: events %q, want a prefix of %q", got, want)
			}
			large := pending > limit || longest > limit
			for _, e := range want[len(got):] {
				large = large || int64(len(e)) > limit
			}
			if !large {
				t.Fatalf("errTooLarge (limit %d) after %q, but nothing is larger: %q", limit, got, want)
			}
		default:
			t.Fatalf("error %v", err)
		}
	})
}

// sseEvents reads in as the event stream format says (lines end in CRLF,
// LF or CR; a blank line dispatches the data lines' values joined by LF,
// when there was a data line; an event the stream ends in is dropped).
// pending is the size of the data of the event left undispatched, and
// longest the longest line.
func sseEvents(in []byte) (events [][]byte, pending, longest int64) {
	for _, run := range bytes.FieldsFunc(in, func(r rune) bool { return r == '\r' || r == '\n' }) {
		longest = max(longest, int64(len(run)))
	}
	if i := bytes.LastIndexAny(in, "\r\n"); i >= 0 {
		in = in[:i+1]
	} else {
		in = nil
	}
	var (
		data []byte
		has  bool
	)
	for len(in) > 0 {
		end := bytes.IndexAny(in, "\r\n")
		line := in[:end]
		if in[end] == '\r' && end+1 < len(in) && in[end+1] == '\n' {
			end++
		}
		in = in[end+1:]
		if len(line) == 0 {
			if has {
				events = append(events, data)
			}
			data, has = nil, false
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte{' '})
		}
		if string(field) != "data" {
			continue
		}
		if has {
			data = append(data, '\n')
		}
		data = append(data, value...)
		has = true
	}
	if has {
		pending = int64(len(data))
	}
	return events, pending, longest
}

func equalEvents(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// FuzzMessage: parseMessage never panics, and a message it accepts is
// strict JSON, with "jsonrpc":"2.0", of exactly one kind: a request (id
// and method), a notification (method alone), or a response (result or
// error, with an id unless an error), its id a string or an integer and
// its members valid JSON.
func FuzzMessage(f *testing.F) {
	for _, s := range []string{
		fuzzDiscover, fuzzEcho, fuzzFail, fuzzAsk, fuzzInitialize,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":3,"message":"step"}}`,
		`{"jsonrpc":"2.0","id":"srv-1","method":"elicitation/create","params":{"message":"Your name?","requestedSchema":{"type":"object"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params","data":{"path":"/x"}}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
		`{"jsonrpc":"2.0","id":-0,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1e3,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":99999999999999999999,"message":"x"}}`,
		`{"jsonrpc":"2.0","method":""}`,
		`{"jsonrpc":"2.0","method":"a\u0000b"}`,
		`{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}`,
		`{"jsonrpc":"1.0","id":1,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
		`{"jsonrpc":"2.0","id":1,"result":{}} x`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"result\":{}}",
		``, `null`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMessage(b)
		if err != nil {
			return
		}
		if !strictjson.Valid(b) {
			t.Fatalf("accepted %q, which is not strict JSON", b)
		}
		if v, _ := strictjson.Member(b, "jsonrpc"); string(v) != `"2.0"` {
			t.Fatalf("accepted jsonrpc %s", v)
		}
		if m.id != nil {
			if _, isString := strictjson.Unquote(m.id); !isString && !isInteger(m.id) {
				t.Fatalf("id %s is neither a string nor an integer", m.id)
			}
		}
		for name, v := range map[string][]byte{"id": m.id, "params": m.params, "result": m.result} {
			if v != nil && !strictjson.Valid(v) {
				t.Fatalf("%s %q is not valid JSON", name, v)
			}
		}
		switch {
		case m.method != "":
			if m.result != nil || m.err != nil {
				t.Fatalf("a request or notification with a result or an error: %q", b)
			}
		case (m.result == nil) == (m.err == nil):
			t.Fatalf("a response with both or neither of result and error: %q", b)
		case m.err == nil && m.id == nil:
			t.Fatalf("a result without an id: %q", b)
		}
		if m.err != nil {
			if m.err.data != nil && !strictjson.Valid(m.err.data) {
				t.Fatalf("error data %q is not valid JSON", m.err.data)
			}
			if code, _ := strictjson.Member(b, "error"); !isInteger(mustMember(t, code, "code")) {
				t.Fatalf("error code is not an integer: %q", b)
			}
		}
	})
}

func mustMember(t *testing.T, v []byte, name string) []byte {
	m, ok := strictjson.Member(v, name)
	if !ok {
		t.Fatalf("no %s in %q", name, v)
	}
	return m
}

// FuzzListPage: a tools/list result, decoded as listPage decodes it, and
// the served tools built from its tools (client.serve: filters, served
// names, client.build) never panic; the served names are valid tool names
// (at most 64 bytes of A-Z a-z 0-9 _ . -) and unique.
func FuzzListPage(f *testing.F) {
	for _, s := range []string{
		fuzzToolsList,
		fuzzLegacyList,
		`{"tools":[]}`,
		`{"tools":null}`,
		`{"tools":[{"name":""},{"name":"x","inputSchema":[]},{"name":"y","inputSchema":{"type":"object"}}]}`,
		`{"tools":[{"name":"t","inputSchema":{"type":"object"}},{"name":"t","inputSchema":{"type":"object"}}]}`,
		`{"tools":[{"name":"a b","inputSchema":{"type":"object"}},{"name":"a_b","inputSchema":{"type":"object"}},{"name":"a/b","inputSchema":{"type":"object"}}]}`,
		`{"tools":[{"name":"` + strings.Repeat("long", 30) + `","inputSchema":{"type":"object"}},{"name":"` + strings.Repeat("long", 30) + `!","inputSchema":{"type":"object"}}]}`,
		`{"tools":[{"name":"été 😀","inputSchema":{"type":"object"},"outputSchema":"x","annotations":{"title":"T","destructiveHint":false},"_meta":{"k":[1]}}]}`,
		`{"tools":[{"name":"h","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"object","properties":{"c":{"type":"integer","x-mcp-header":"C"}}}}}}]}`,
		`{"tools":[{"name":"bad","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Bad Name"},"b":{"type":"string","x-mcp-header":"a"}}}}]}`,
		`{"tools":[{"name":"i","inputSchema":{"type":"object"},"icons":[{"src":"data:image/png;base64,AAAA","theme":"dark"}]}]}`,
		`{"tools":[{"name":"d","inputSchema":{"type":"object","properties":{"x":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}}]}`,
	} {
		f.Add([]byte(s))
	}
	c, err := newClient(Options{Name: "fuzz", URL: "http://127.0.0.1:9/mcp", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, result []byte) {
		var p listPage
		if strictjson.Unmarshal(result, &p) != nil || p.Tools == nil {
			return
		}
		served, err := c.serve(c.decodeTools(p.Tools), Options{Prefix: "up_"})
		if err != nil {
			t.Fatal(err)
		}
		if len(served) > len(p.Tools) {
			t.Fatalf("%d tools served of %d", len(served), len(p.Tools))
		}
		seen := map[string]bool{}
		for _, tool := range served {
			name := tool.Name()
			if len(name) == 0 || len(name) > maxName || sanitize(name) != name {
				t.Fatalf("served name %q", name)
			}
			if seen[name] {
				t.Fatalf("served name %q twice, from %q", name, result)
			}
			seen[name] = true
		}
	})
}

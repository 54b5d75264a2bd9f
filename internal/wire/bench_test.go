package wire_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
)

// typicalBody is a tools/call as a load generator sends it (287 bytes).
const typicalBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"loadgen","version":"1.0.0"}}}}`

// BenchmarkParse measures Parse on the hot path's body and on hostile ones:
// nesting to the limit, an object of many members (duplicate detection past
// its linear phase), and names that must be unescaped to be compared.
func BenchmarkParse(b *testing.B) {
	if len(typicalBody) != 287 {
		b.Fatalf("typical body is %d bytes", len(typicalBody))
	}
	var wideArgs strings.Builder
	wideArgs.WriteByte('{')
	for i := range 10000 {
		if i > 0 {
			wideArgs.WriteByte(',')
		}
		wideArgs.WriteString(`"member-` + strconv.Itoa(i) + `":true`)
	}
	wideArgs.WriteByte('}')
	var escaped strings.Builder
	escaped.WriteByte('{')
	for i := range 16 {
		if i > 0 {
			escaped.WriteByte(',')
		}
		escaped.WriteString(`"\u006eame` + strconv.Itoa(i) + `":"v\u00e9"`)
	}
	escaped.WriteByte('}')
	bodies := []struct{ name, body string }{
		{"typical", typicalBody},
		{"deep", envelope(nestArrays(strictjson.MaxDepth - 2))},
		{"deep-objects", envelope(nestObjects(strictjson.MaxDepth - 2))},
		{"wide", envelope(wideArgs.String())},
		{"escaped-names", envelope(escaped.String())},
	}
	for _, bb := range bodies {
		body := []byte(bb.body)
		if _, _, perr := wire.Parse(body); perr != nil {
			b.Fatalf("%s: %v", bb.name, perr)
		}
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				wire.Parse(body)
			}
		})
	}
}

// fullMetaBody is typicalBody with every optional `_meta` key a client may
// send: a log level, a progress token and W3C trace context.
const fullMetaBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"loadgen","version":"1.0.0"},"io.modelcontextprotocol/logLevel":"info","progressToken":7,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"a=b"}}}`

// BenchmarkParseRequest measures what the server does with every request's
// body: Parse, then ParseRequest on the message.
func BenchmarkParseRequest(b *testing.B) {
	for _, bb := range []struct{ name, body string }{
		{"typical", typicalBody},
		{"full-meta", fullMetaBody},
	} {
		body := []byte(bb.body)
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				msg, _, perr := wire.Parse(body)
				if perr != nil {
					b.Fatal(perr)
				}
				if _, perr := wire.ParseRequest(msg); perr != nil {
					b.Fatal(perr)
				}
			}
		})
	}
}

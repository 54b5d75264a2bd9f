package protocol

import "testing"

const benchBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"loadgen","version":"1.0.0"}}}}`

// BenchmarkScan measures the lexer alone on the body of BenchmarkParse's
// typical case: the scan into fields (without Parse and its allocation of
// them) and a bare validation of the same body.
func BenchmarkScan(b *testing.B) {
	body := []byte(benchBody)
	b.Run("fields", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		var f fields
		for b.Loop() {
			f = fields{}
			if err := scan(body, &f); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("valid", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !validJSON(body) {
				b.Fatal("invalid")
			}
		}
	})
}

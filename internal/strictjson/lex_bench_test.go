package strictjson

import "testing"

const benchBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"loadgen","version":"1.0.0"}}}}`

// BenchmarkValid measures the Lexer alone validating a typical request
// body (wire's BenchmarkScan reads the same body into its fields).
func BenchmarkValid(b *testing.B) {
	body := []byte(benchBody)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if !Valid(body) {
			b.Fatal("invalid")
		}
	}
}

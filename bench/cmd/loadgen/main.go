// Command loadgen drives one echo endpoint with the bench load generator and
// prints the result as JSON, for use outside the harness:
//
//	go run ./cmd/loadgen -addr 127.0.0.1:38180 -c 16 -warmup 2s -d 10s
package main

import (
	"encoding/json"
	"flag"
	"log"
	"os"
	"time"

	"github.com/wymcp/wymcp/bench/loadgen"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:38180", "server host:port")
	path := flag.String("path", "/mcp", "endpoint path")
	shape := flag.String("shape", "M", "request shape: M (2026-07-28) or L (2025-era)")
	conns := flag.Int("c", 16, "connections (requests in flight)")
	warm := flag.Duration("warmup", 2*time.Second, "warm-up")
	dur := flag.Duration("d", 10*time.Second, "measured duration")
	var headers []string
	flag.Func("H", "extra request `header` line, e.g. 'Authorization: Bearer <token>' (repeatable)", func(h string) error {
		headers = append(headers, h)
		return nil
	})
	flag.Parse()
	res, err := loadgen.Run(loadgen.Config{
		Addr:     *addr,
		Request:  loadgen.EchoRequest(loadgen.Shape(*shape), *addr, *path, headers...),
		Expect:   loadgen.EchoExpect,
		Conns:    *conns,
		Warmup:   *warm,
		Duration: *dur,
	})
	if err != nil {
		log.Fatal(err)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.Encode(res)
	if res.Errors() > 0 {
		os.Exit(1)
	}
}

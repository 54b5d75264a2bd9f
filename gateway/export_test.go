package gateway

import "time"

// SetUnknownEvery sets how often, at most, a call of an unknown name reads
// one of g's upstreams again (fresh.go), so that a test can tell a read
// the rate allows from one it refuses without waiting.
func SetUnknownEvery(g *Gateway, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.unknownEvery = d
}

package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// holdIdle opens n keep-alive connections to the server, each answered
// once (a server/discover), and leaves them idle: the load then runs beside
// them, showing that thousands of idle clients cost the others nothing.
// It returns the connections for the caller to close.
func holdIdle(rawURL string, n int) ([]net.Conn, error) {
	if n == 0 {
		return nil, nil
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < uint64(n)+1024 {
		lim.Cur = min(lim.Max, uint64(n)+1024)
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	body := mcptest.Call("server/discover", "").Body
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\nContent-Length: %d\r\n\r\n%s",
		u.Path, u.Host, len(body), body)
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
		if err != nil {
			return conns, fmt.Errorf("idle connection %d: %w", len(conns), err)
		}
		conns = append(conns, c)
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte(req)); err != nil {
			return conns, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return conns, fmt.Errorf("idle connection %d: %w", len(conns), err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.EqualFold(resp.Header.Get("Connection"), "close") {
			return conns, fmt.Errorf("idle connection %d: status %d", len(conns), resp.StatusCode)
		}
		_ = c.SetDeadline(time.Time{})
	}
	return conns, nil
}

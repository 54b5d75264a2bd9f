//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Slow and abusive clients against the real program: each test
// starts run() with small limits given by the flags, abuses it over raw TCP,
// and checks both that the abuser is cut off where the limit says and that
// the server keeps answering everyone else meanwhile.

// rawRequest is a whole HTTP/1.1 request for the MCP endpoint, with the
// protocol's headers, as bytes for a raw connection.
func rawRequest(host, method, name, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", host)
	fmt.Fprintf(&b, "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: %s\r\n", method)
	if name != "" {
		fmt.Fprintf(&b, "Mcp-Name: %s\r\n", name)
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return b.String()
}

// othersAnswered checks that n ordinary clients, c at a time, are answered
// correctly and reasonably soon while the abuse goes on; it returns when the
// last one is.
func othersAnswered(t *testing.T, s *server, n, c int) {
	t.Helper()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				text := fmt.Sprintf("other client %d", i)
				status, body := s.post(t, t.Context(), "tools/call", "echo", callBody("echo", `{"text":"`+text+`"}`))
				if status != http.StatusOK || !strings.Contains(body, `"text":"`+text+`"`) {
					t.Errorf("an ordinary client during the abuse: %d %s", status, body)
				}
			}
		})
	}
	wg.Wait()
	// Generous: these take milliseconds; only a server that queues them
	// behind the abuser takes seconds.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("%d ordinary requests took %v during the abuse", n, d)
	}
}

// isClosed reports whether err from a Read means the peer closed the
// connection (a FIN, or a reset when unread data was discarded).
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

// stillOpen reports whether conn is still open: a short read times out
// instead of finding the peer's close. The conn must have no data pending.
func stillOpen(t *testing.T, conn net.Conn) bool {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(5 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	n, err := conn.Read(b[:])
	var ne net.Error
	switch {
	case n > 0:
		t.Fatalf("unexpected data from the server: %q", b[:n])
	case errors.As(err, &ne) && ne.Timeout():
		return true
	case isClosed(err):
		return false
	}
	t.Fatalf("checking the connection: %v", err)
	return false
}

// awaitClose reads conn until the server closes it (or the deadline, a
// failure) and returns what the server sent before closing.
func awaitClose(t *testing.T, conn net.Conn, deadline time.Time) []byte {
	t.Helper()
	if err := conn.SetReadDeadline(deadline); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(conn)
	if err != nil && !isClosed(err) {
		t.Fatalf("the server did not close the connection by the deadline: %v (read %q)", err, got)
	}
	return got
}

// TestSlowHeaders: clients that send half a request line and stall
// (slowloris) are disconnected at -read-header-timeout (net/http says
// "400 Bad Request" to a request line cut short), while other clients are
// answered meanwhile.
func TestSlowHeaders(t *testing.T) {
	t.Parallel()
	// The ordinary clients' headers too must be read within it, however
	// long a loaded machine stalls between a dial and its request.
	const timeout = 10 * time.Second
	s := start(t, "-read-header-timeout", timeout.String())
	host := s.ep.HostPort()
	const stallers = 20
	dialed := time.Now()
	conns := make([]net.Conn, stallers)
	for i := range conns {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, "POST /mc"); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	othersAnswered(t, s, 50, 5)
	// Meanwhile: the stallers were still connected while the others were
	// answered (checked only when this machine was quick enough for the
	// check to mean something).
	if time.Since(dialed) < timeout-500*time.Millisecond {
		if !stillOpen(t, conns[0]) {
			t.Errorf("a staller was disconnected before -read-header-timeout (%v)", time.Since(dialed))
		}
	}
	for i, c := range conns {
		if got := string(awaitClose(t, c, dialed.Add(timeout+30*time.Second))); got != "" && !strings.HasPrefix(got, "HTTP/1.1 400 Bad Request\r\n") {
			t.Errorf("staller %d: the server answered %q, want net/http's 400 or a silent close", i, got)
		}
	}
	// The server's clock for a connection starts after its dial.
	if d := time.Since(dialed); d < timeout {
		t.Errorf("stallers cut off after %v, before -read-header-timeout %v", d, timeout)
	}
	othersAnswered(t, s, 10, 2)
}

// TestSlowBody: a client that declares a 1000-byte body, sends 10 bytes and
// stalls is cut off at -read-timeout (its request is answered 400 -32700 if
// it is still listening, as a body that ended early); others are answered
// meanwhile.
func TestSlowBody(t *testing.T) {
	t.Parallel()
	// The slow body's headers, and every ordinary client's whole request,
	// must be read within these, however long a loaded machine stalls
	// between a dial and its request.
	const timeout = 10 * time.Second
	s := start(t, "-read-header-timeout", "5s", "-read-timeout", timeout.String())
	host := s.ep.HostPort()
	dialed := time.Now()
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := rawRequest(host, "tools/call", "echo", strings.Repeat(" ", 1000))
	// The headers, then 10 bytes of the 1000 declared.
	if _, err := io.WriteString(c, req[:len(req)-990]); err != nil {
		t.Fatal(err)
	}
	othersAnswered(t, s, 50, 5)
	if time.Since(dialed) < timeout-500*time.Millisecond && !stillOpen(t, c) {
		t.Errorf("the slow body was cut off before -read-timeout (%v)", time.Since(dialed))
	}
	got := awaitClose(t, c, dialed.Add(timeout+30*time.Second))
	if d := time.Since(dialed); d < timeout {
		t.Errorf("the slow body was cut off after %v, before -read-timeout %v", d, timeout)
	}
	if len(got) > 0 {
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(got))), nil)
		if err != nil {
			t.Fatalf("the server sent %q: %v", got, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,`; resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(string(body), want) {
			t.Errorf("answer to the slow body: %d %s, want 400 %s…", resp.StatusCode, body, want)
		}
	}
	othersAnswered(t, s, 10, 2)
}

// TestNeverReadingClients: clients that pipeline large requests and never
// read the answers fill their sockets and stall their own connections; the
// server keeps answering everyone else.
func TestNeverReadingClients(t *testing.T) {
	t.Parallel()
	s := start(t)
	host := s.ep.HostPort()
	const (
		clients  = 4
		requests = 64
	)
	// 64 answers of 512 KiB each, well past what the sockets on both sides
	// hold, so each connection stalls.
	req := rawRequest(host, "tools/call", "echo", callBody("echo", `{"text":"`+strings.Repeat("x", 512<<10)+`"}`))
	var written [clients]atomic.Int64
	writersDone := make(chan error, clients)
	for i := range clients {
		c := dialNonReader(t, host)
		go func() {
			for range requests {
				// In 64 KiB pieces, so that progress is visible.
				for p := req; p != ""; {
					n, err := io.WriteString(c, p[:min(len(p), 64<<10)])
					written[i].Add(int64(n))
					if err != nil {
						writersDone <- err
						return
					}
					p = p[n:]
				}
			}
			writersDone <- nil
		}()
	}
	// Wait until every writer has stopped making progress: the server has
	// stopped reading those connections, blocked writing answers nobody
	// reads.
	last := make([]int64, clients)
	stalledSince := time.Now()
	for deadline := time.Now().Add(60 * time.Second); ; {
		select {
		case err := <-writersDone:
			t.Fatalf("a never-reading client's writer ended (%v): the server read all %d requests without their answers being read", err, requests)
		case <-time.After(100 * time.Millisecond):
		}
		for i := range clients {
			if n := written[i].Load(); n != last[i] {
				last[i], stalledSince = n, time.Now()
			}
		}
		if time.Since(stalledSince) > time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the never-reading clients never stalled: written %v", last)
		}
	}
	t.Logf("stalled after writing %v bytes", last)
	othersAnswered(t, s, 100, 10)
	// A long call and the precomputed methods too.
	if status, body := s.post(t, t.Context(), "tools/call", "sleep", callBody("sleep", `{"ms":20}`)); status != 200 || !strings.Contains(body, "slept 20 ms") {
		t.Errorf("sleep during the abuse: %d %s", status, body)
	}
	if status, body := s.post(t, t.Context(), "tools/list", "", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta+`}}`); status != 200 || !strings.Contains(body, `"name":"echo"`) {
		t.Errorf("tools/list during the abuse: %d %s", status, body)
	}
}

// dialNonReader connects a client that will never read its answers: a
// small receive buffer, so the server's writes back up soon. Closing it at
// cleanup is what unblocks its writer and lets the server's handler and
// shutdown finish.
func dialNonReader(t *testing.T, host string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.(*net.TCPConn).SetReadBuffer(4 << 10); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestStalledReaderLetsGo: clients that pipeline calls with large answers
// and never read them hold their in-flight places only until
// -write-timeout: the server gives up the blocked write and drops the
// connection (without the deadline it would wait forever, holding the
// place), and with the bound at 2 every other caller is served again.
func TestStalledReaderLetsGo(t *testing.T) {
	t.Parallel()
	s := start(t, "-max-in-flight", "2", "-write-timeout", "1s")
	host := s.ep.HostPort()
	// 512 KiB answers, pipelined: past what loopback's socket buffers hold
	// (about 9 MiB per connection here), the server's writes block.
	req := rawRequest(host, "tools/call", "echo", callBody("echo", `{"text":"`+strings.Repeat("x", 512<<10)+`"}`))
	dropped := make(chan error, 2)
	for range 2 {
		c := dialNonReader(t, host)
		go func() {
			for range 1000 {
				if _, err := io.WriteString(c, req); err != nil {
					dropped <- err // the server gave up on this connection
					return
				}
			}
			dropped <- nil
		}()
	}
	body := callBody("echo", `{"text":"x"}`)
	refused := 0
	giveUp := time.After(60 * time.Second)
	for waiting := 2; waiting > 0; {
		select {
		case err := <-dropped:
			if err == nil {
				t.Fatal("the server read 1,000 pipelined calls whose answers nobody read")
			}
			waiting--
			continue
		case <-giveUp:
			t.Fatalf("the server still holds the stalled connections after 60 s (%d refusals meanwhile)", refused)
		case <-time.After(20 * time.Millisecond):
		}
		if status, answer := s.post(t, t.Context(), "tools/call", "echo", body); status == 503 && strings.Contains(answer, `"code":-32603`) {
			refused++
		} else if status != 200 {
			t.Fatalf("status %d %s, want 200, or 503 while the places are held", status, answer)
		}
	}
	t.Logf("the stalled connections were dropped; %d refusals while they held their places", refused)
	othersAnswered(t, s, 20, 1) // one at a time: the bound is 2
}

// raiseNoFile makes sure the process may hold need descriptors, raising the
// soft limit towards the hard one; it skips the test when the hard limit is
// too low. (Go already raises the soft limit at start-up on most systems.)
func raiseNoFile(t *testing.T, need uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= need {
		return
	}
	if lim.Max < need {
		t.Skipf("RLIMIT_NOFILE hard limit %d is below the %d descriptors this test needs", lim.Max, need)
	}
	lim.Cur = need
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("raising RLIMIT_NOFILE to %d: %v", need, err)
	}
}

// TestIdleConnections: 2,000 idle keep-alive connections (each made one
// request, then went quiet) neither refuse nor slow a new client, and each
// is closed after -idle-timeout.
func TestIdleConnections(t *testing.T) {
	t.Parallel()
	const (
		n       = 2000
		idle    = 10 * time.Second
		workers = 32
	)
	// Both ends live in this process: two descriptors per connection.
	raiseNoFile(t, 2*n+1024)
	// Each connection's first request must be read within
	// -read-header-timeout of its accept: a loaded machine that stalls the
	// dialling worker or the server's goroutine for its default 5 s had the
	// connection closed unanswered (net/http closes on a read timeout
	// without a word), which is not what this test is about.
	s := start(t, "-idle-timeout", idle.String(), "-read-header-timeout", "60s")
	host := s.ep.HostPort()
	req := rawRequest(host, "server/discover", "", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`)
	conns := make([]net.Conn, n)
	answeredAt := make([]time.Time, n)
	t.Cleanup(func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	})
	parallel := func(f func(i int) error) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					i := int(next.Add(1) - 1)
					if i >= n || t.Failed() {
						return
					}
					if err := f(i); err != nil {
						t.Errorf("connection %d: %v", i, err)
						return
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
	}
	opening := time.Now()
	parallel(func(i int) error {
		c, err := net.Dial("tcp", host)
		if err != nil {
			return err
		}
		conns[i] = c
		if _, err := io.WriteString(c, req); err != nil {
			return err
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"supportedVersions"`) {
			return fmt.Errorf("answered %d %s", resp.StatusCode, body)
		}
		// The whole answer was read through a buffer that holds nothing
		// more: the connection is idle now.
		answeredAt[i] = time.Now()
		return nil
	})
	t.Logf("%d idle connections opened in %v", n, time.Since(opening))

	// A fresh client is answered promptly.
	fresh := time.Now()
	othersAnswered(t, s, 1, 1)
	if d := time.Since(fresh); d > 30*time.Second {
		t.Errorf("a fresh client took %v beside %d idle connections", d, n)
	}
	othersAnswered(t, s, 100, 10)

	// The idle connections are held open until -idle-timeout (those whose
	// timeout is not near yet, so that the check means something)...
	checked := atomic.Int64{}
	parallel(func(i int) error {
		if time.Until(answeredAt[i].Add(idle)) < time.Second {
			return nil
		}
		checked.Add(1)
		if !stillOpen(t, conns[i]) {
			return fmt.Errorf("closed %v after its answer, before -idle-timeout %v", time.Since(answeredAt[i]), idle)
		}
		return nil
	})
	t.Logf("%d of %d idle connections checked open", checked.Load(), n)

	// ...and closed after it. The server starts the idle clock when it has
	// written the answer, a moment before the client reads it: allow it.
	parallel(func(i int) error {
		if got := awaitClose(t, conns[i], answeredAt[i].Add(idle+30*time.Second)); len(got) != 0 {
			return fmt.Errorf("the server sent %q on an idle connection", got)
		}
		if d := time.Since(answeredAt[i]); d < idle-time.Second {
			return fmt.Errorf("closed %v after its answer, before -idle-timeout %v", d, idle)
		}
		return nil
	})
	// The server closes the ordinary clients' keep-alive connections after
	// -idle-timeout as well, and a POST written onto one as it closes sees
	// EOF or a reset (net/http does not replay a POST). That is the timeout
	// working, so the last round starts from an empty pool.
	s.pool.CloseIdleConnections()
	othersAnswered(t, s, 10, 2)
}

// TestHeaderTooLarge: a request whose headers pass -max-header-bytes is
// answered 431 by net/http; smaller ones are served, and so is everyone
// else.
func TestHeaderTooLarge(t *testing.T) {
	t.Parallel()
	s := start(t, "-max-header-bytes", "4096")
	send := func(size int) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.url, strings.NewReader(callBody("echo", `{"text":"big"}`)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "echo")
		req.Header.Set("X-Padding", strings.Repeat("p", size))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%d-byte header: %v", size, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	// net/http allows 4 KiB of slack past MaxHeaderBytes; 64 KiB is well
	// past both.
	for _, size := range []int{8 << 10, 64 << 10, 1 << 20} {
		if status, body := send(size); status != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("%d-byte header: %d %s, want 431", size, status, body)
		}
	}
	if status, body := send(1 << 10); status != http.StatusOK || !strings.Contains(body, `"text":"big"`) {
		t.Errorf("1 KiB header under the limit: %d %s, want 200", status, body)
	}
	othersAnswered(t, s, 20, 4)
}

// TestLimitFlags: the limits refuse values that would turn them off.
func TestLimitFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"-read-header-timeout", "0"},
		{"-read-timeout", "-1s"},
		{"-idle-timeout", "0s"},
		{"-max-header-bytes", "0"},
		{"-read-timeout", "soon"},
	} {
		var stdout, stderr strings.Builder
		err := run(t.Context(), append([]string{"-addr", "127.0.0.1:0"}, args...), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 2 || !strings.Contains(stderr.String(), args[0]) {
			t.Errorf("%q: exit %d, stderr %q; want 2 naming the flag", args, code, stderr.String())
		}
	}
}

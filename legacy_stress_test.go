package wymcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// TestLegacyRelayStress races RequestClient against progress from a
// tool goroutine, the watchdog's late answer at the deadline, clients that
// leave, answers posted at the deadline, twice, or never; run with -race.
// Every call must end with exactly one final response on its stream (or the
// client left), and the goroutines must come back to the baseline.
func TestLegacyRelayStress(t *testing.T) {
	form := protocol.ElicitRequest{Message: "?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)}
	const deadline = 150 * time.Millisecond
	chatty := tools.Must(tools.NewRaw("chatty", "Reports progress from a goroutine while it asks.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
						tools.ReportProgress(ctx, float64(i), nil, "")
					}
				}
			}()
			var a, b protocol.ElicitResult
			if err := tools.Ask(ctx, tools.Elicit("a", form, &a)); err != nil {
				return nil, err
			}
			if err := tools.Ask(ctx, tools.Elicit("b", form, &b)); err != nil {
				return nil, err
			}
			return protocol.TextResult("ok"), nil
		}, tools.WithDeadline(deadline)))
	// stubborn asks, then ignores its deadline: the watchdog answers while
	// the relay may be writing.
	stubborn := tools.Must(tools.NewRaw("stubborn_asker", "Asks, then sleeps past its deadline.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var a protocol.ElicitResult
			if err := tools.Ask(ctx, tools.Elicit("a", form, &a)); err != nil {
				return nil, err
			}
			time.Sleep(deadline + 1200*time.Millisecond)
			return protocol.TextResult("late"), nil
		}, tools.WithDeadline(deadline)))
	info := protocol.Implementation{Name: "s", Version: "1"}
	// Every client reads or leaves: the write deadline only has to outlast
	// a loaded machine's slowest reader, or it fails calls itself.
	srv, err := wymcp.New(info, &wymcp.Options{Versions: allVersions, WriteTimeout: 30 * time.Second}, chatty, stubborn)
	if err != nil {
		t.Fatal(err)
	}
	e := mcptest.Serve(t, srv, info)
	e.HTTP.Transport.(*http.Transport).MaxIdleConnsPerHost = 256

	time.Sleep(50 * time.Millisecond)
	base := runtime.NumGoroutine()

	post := func(id, version string) int {
		req, _ := http.NewRequest(http.MethodPost, e.URL, strings.NewReader(`{"jsonrpc":"2.0","id":`+mcptest.Quote(id)+`,"result":{"action":"accept","content":{"name":"n"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", version)
		resp, err := e.HTTP.Do(req)
		if err != nil {
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}

	var wg sync.WaitGroup
	// clients are the test's own goroutines that post answers after their
	// call's loop moved on: waited for before the server's are counted.
	var clients sync.WaitGroup
	errs := make(chan string, 1000)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tool := "chatty"
			if i%5 == 0 {
				tool = "stubborn_asker"
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"_meta":{"progressToken":%d}}}`, i, tool, i)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			resp, err := e.HTTP.Do(req)
			if err != nil {
				errs <- fmt.Sprintf("call %d: %v", i, err)
				return
			}
			defer resp.Body.Close()
			mode := rand.IntN(5)
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<16), 1<<20)
			finals := 0
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok {
					continue
				}
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if err := json.Unmarshal([]byte(data), &m); err != nil {
					errs <- fmt.Sprintf("call %d: bad event %q", i, data)
					return
				}
				switch {
				case m.Method == "elicitation/create":
					var id string
					_ = json.Unmarshal(m.ID, &id)
					switch mode {
					case 0: // answer now
						post(id, "2025-11-25")
					case 1: // answer at about the deadline
						clients.Go(func() {
							time.Sleep(deadline - 5*time.Millisecond + time.Duration(rand.IntN(10))*time.Millisecond)
							post(id, "2025-11-25")
						})
					case 2: // answer twice, concurrently
						clients.Go(func() { post(id, "2025-11-25") })
						clients.Go(func() { post(id, "2025-11-25") })
					case 3: // leave
						cancel()
						return
					case 4: // never answer
					}
				case m.Method == "notifications/progress":
				case m.Method == "":
					finals++
					if string(m.ID) != fmt.Sprint(i) {
						errs <- fmt.Sprintf("call %d: answer with id %s", i, m.ID)
					}
				default:
					errs <- fmt.Sprintf("call %d: unexpected %s", i, data)
				}
			}
			if finals != 1 && ctx.Err() == nil {
				errs <- fmt.Sprintf("call %d (%s, mode %d): %d final answers", i, tool, mode, finals)
			}
		}()
	}
	wg.Wait()
	clients.Wait()
	close(errs)
	for s := range errs {
		t.Error(s)
	}
	// Tools that ignore their deadline are still sleeping; wait them out.
	// Only the server's goroutines are counted (serverGoroutines), and the
	// verdict is the last count taken: the test's client goroutines have
	// all returned by now, so the server's can only finish.
	deadlineAt := time.Now().Add(30 * time.Second)
	n, stacks := serverGoroutines()
	for n > 0 && time.Now().Before(deadlineAt) {
		e.HTTP.CloseIdleConnections()
		time.Sleep(50 * time.Millisecond)
		n, stacks = serverGoroutines()
	}
	if n > 0 {
		t.Errorf("%d server goroutines still running (baseline total %d):\n%s", n, base, stacks)
	}
}

// serverGoroutines counts the goroutines of the server under test, and
// returns their stacks: those running the library's code or started by it
// (a frame or the creator in wymcp/internal/), except the goroutines a
// server keeps for its life (the watchdog, the supervisor's dispatcher).
// The test's own goroutines are not the server's even when they run a
// helper of internal/mcptest, the test's client.
func serverGoroutines() (int, string) {
	buf := make([]byte, 8<<20)
	all := string(buf[:runtime.Stack(buf, true)])
	n, kept := 0, ""
	for _, g := range strings.Split(all, "\n\n") {
		if isServerGoroutine(g) {
			n++
			kept += g + "\n\n"
		}
	}
	return n, kept
}

// isServerGoroutine reports whether the goroutine whose runtime.Stack
// text is g is the server's (serverGoroutines). Only function lines and the
// "created by" line are read: a file path says nothing of whose code runs.
func isServerGoroutine(g string) bool {
	const lib, client = "github.com/wymcp/wymcp/internal/", "github.com/wymcp/wymcp/internal/mcptest."
	if strings.Contains(g, "watchdog).run") || strings.Contains(g, "pooledDispatcher).worker") {
		return false
	}
	for _, line := range strings.Split(g, "\n") {
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "goroutine ") {
			continue
		}
		fn := strings.TrimPrefix(line, "created by ")
		if strings.HasPrefix(fn, lib) && !strings.HasPrefix(fn, client) {
			return true
		}
	}
	return false
}

// TestServerGoroutineFilter: the leak check counts the library's
// goroutines, by their frames or their creator, and not the test's own
// client goroutines, even one caught inside an internal/mcptest helper
// (the check used to count one such, posting an answer late).
func TestServerGoroutineFilter(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		stack string
		want  bool
	}{
		{"client in an mcptest helper", `goroutine 812 [runnable]:
encoding/json.Marshal({0x6a1f20, 0xc000512340})
	/usr/local/go/src/encoding/json/encode.go:160 +0x5b
github.com/wymcp/wymcp/internal/mcptest.Quote({0xc0004c2a40, 0x1b})
	/src/wymcp/internal/mcptest/mcptest.go:80 +0x45
github.com/wymcp/wymcp_test.TestLegacyRelayStress.func4.1()
	/src/wymcp/legacy_stress_test.go:141 +0x8d
created by github.com/wymcp/wymcp_test.TestLegacyRelayStress.func4 in goroutine 790
	/src/wymcp/legacy_stress_test.go:139 +0x6b0`, false},
		{"a handler in the transport", `goroutine 900 [sync.Mutex.Lock]:
sync.(*Mutex).Lock(...)
	/usr/local/go/src/sync/mutex.go:81
github.com/wymcp/wymcp/internal/transport.(*responder).answer(0xc000412000, {0x0, 0x0})
	/src/wymcp/internal/transport/respond.go:52 +0x4d
net/http.(*conn).serve(0xc000220000, {0x8a7c40, 0xc0001d8000})
	/usr/local/go/src/net/http/server.go:2102 +0x625
created by net/http.(*Server).Serve in goroutine 33
	/usr/local/go/src/net/http/server.go:3454 +0x485`, true},
		{"a late write, in net/http", `goroutine 901 [IO wait]:
net/http.(*response).Write(0xc0002c6000, {0xc000300000, 0x40, 0x40})
	/usr/local/go/src/net/http/server.go:1660 +0x2f
created by github.com/wymcp/wymcp/internal/actors.(*System).answerLate in goroutine 900
	/src/wymcp/internal/actors/cut.go:84 +0x1a5`, true},
		{"the watchdog", `goroutine 20 [select]:
github.com/wymcp/wymcp/internal/actors.(*watchdog).run(0xc0000a2000)
	/src/wymcp/internal/actors/watchdog.go:111 +0x8c
created by github.com/wymcp/wymcp/internal/actors.newWatchdog in goroutine 18
	/src/wymcp/internal/actors/watchdog.go:56 +0x1e5`, false},
	} {
		if got := isServerGoroutine(c.stack); got != c.want {
			t.Errorf("%s: counted %v, want %v", c.name, got, c.want)
		}
	}
}

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
	srv, err := wymcp.New(info, &wymcp.Options{Versions: allVersions, WriteTimeout: 2 * time.Second}, chatty, stubborn)
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
						go func() {
							time.Sleep(deadline - 5*time.Millisecond + time.Duration(rand.IntN(10))*time.Millisecond)
							post(id, "2025-11-25")
						}()
					case 2: // answer twice, concurrently
						go post(id, "2025-11-25")
						go post(id, "2025-11-25")
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
	close(errs)
	for s := range errs {
		t.Error(s)
	}
	// Tools that ignore their deadline are still sleeping; wait them out.
	deadlineAt := time.Now().Add(5 * time.Second)
	serverSide := func() (int, string) {
		buf := make([]byte, 8<<20)
		all := string(buf[:runtime.Stack(buf, true)])
		n, kept := 0, ""
		for _, g := range strings.Split(all, "\n\n") {
			if strings.Contains(g, "wymcp/wymcp/internal/") && !strings.Contains(g, "watchdog).run") && !strings.Contains(g, "pooledDispatcher).worker") {
				n++
				kept += g + "\n\n"
			}
		}
		return n, kept
	}
	for time.Now().Before(deadlineAt) {
		e.HTTP.CloseIdleConnections()
		if n, _ := serverSide(); n == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n, stacks := serverSide(); n > 0 {
		t.Errorf("%d server goroutines still running (baseline total %d):\n%s", n, base, stacks)
	}
}

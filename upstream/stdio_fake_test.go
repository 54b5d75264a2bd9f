package upstream_test

// A fake stdio MCP server: this test binary run again with fakeStdioEnv set
// (TestMain), as a stdio upstream's Command. It speaks the 2025 era
// (server/discover is -32601) or, with fakeStdioEnv=modern, 2026-07-28,
// handles each request on a goroutine of its own (so that the gateway's
// multiplexing is tested), and offers tools that misbehave on demand.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp/upstream"
)

const fakeStdioEnv = "WYMCP_FAKE_STDIO"

func TestMain(m *testing.M) {
	switch mode := os.Getenv(fakeStdioEnv); mode {
	case "":
		os.Exit(m.Run())
	case "sleep":
		// A grandchild: lives until killed.
		select {}
	case "gateway":
		// A gateway process with one stdio upstream, for the test that
		// SIGKILLs it (TestStdioNoOrphans).
		fakeGateway()
	default:
		fakeStdio(mode)
		os.Exit(0)
	}
}

func fakeGateway() {
	self, _ := os.Executable()
	u, err := upstream.Connect(context.Background(), upstream.Options{
		Name: "fake", Command: self,
		Env: map[string]string{fakeStdioEnv: "legacy", "WYMCP_FAKE_PIDS": os.Getenv("WYMCP_FAKE_PIDS")},
	})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	_ = u
	fmt.Println("ready")
	select {}
}

type fakeMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

type fakeServer struct {
	mu      sync.Mutex
	out     *bufio.Writer
	modern  bool
	waiting map[string]chan fakeMsg // the server's own requests, by id
	stall   chan struct{}
	// cancelled are the request ids of the notifications/cancelled read.
	cancelled chan string
	// hangs counts the hang calls received.
	hangs atomic.Int64
	// announced: the announce tool was called; tools/list has extra.
	announced atomic.Bool
	// listeners are the ids of the gateway's subscriptions/listen open
	// (2026-07-28, with WYMCP_FAKE_LISTCHANGED); each opened, refused and
	// ended, and each tools/list, is a line appended to the file
	// WYMCP_FAKE_LISTENS names.
	listeners map[string]bool
}

// listenLog appends a line to the file WYMCP_FAKE_LISTENS names.
func (f *fakeServer) listenLog(line string) {
	path := os.Getenv("WYMCP_FAKE_LISTENS")
	if path == "" {
		return
	}
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer w.Close()
	fmt.Fprintln(w, line)
}

func (f *fakeServer) send(v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out.WriteString(v)
	f.out.WriteByte('\n')
	f.out.Flush()
}

func (f *fakeServer) result(id json.RawMessage, result string) {
	f.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`)
}

func fakeText(text string, isError bool) string {
	b, _ := json.Marshal(text)
	return fmt.Sprintf(`{"content":[{"type":"text","text":%s}],"isError":%v}`, b, isError)
}

func fakeStdio(mode string) {
	f := &fakeServer{out: bufio.NewWriter(os.Stdout), modern: mode == "modern", waiting: map[string]chan fakeMsg{}, listeners: map[string]bool{}, stall: make(chan struct{}), cancelled: make(chan string, 100)}
	if m := os.Getenv("WYMCP_FAKE_CRASH"); m != "" {
		if _, err := os.Stat(m); err == nil {
			os.Exit(4) // a child that fails at once
		}
	}
	if path := os.Getenv("WYMCP_FAKE_PIDS"); path != "" {
		// A child of its own, as npx's node is: the reaper must end it.
		self, _ := os.Executable()
		cmd := exec.Command(self)
		cmd.Env = []string{fakeStdioEnv + "=sleep"}
		if err := cmd.Start(); err != nil {
			os.Exit(5)
		}
		_ = os.WriteFile(path+".tmp", fmt.Appendf(nil, "%d %d", os.Getpid(), cmd.Process.Pid), 0o600)
		_ = os.Rename(path+".tmp", path)
	}
	fmt.Fprintln(os.Stderr, "fake stdio server starting")
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	stalled := false
	for {
		if stalled {
			select {} // reads nothing more, ever
		}
		line, err := in.ReadBytes('\n')
		if err != nil {
			return // stdin closed: exit, as servers do
		}
		var m fakeMsg
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		if m.Method == "" {
			f.mu.Lock()
			ch := f.waiting[string(m.ID)]
			f.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		if m.Method == "notifications/cancelled" {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(m.Params, &p)
			f.mu.Lock()
			listening := f.listeners[string(p.RequestID)]
			delete(f.listeners, string(p.RequestID))
			f.mu.Unlock()
			if listening {
				f.listenLog("ended " + string(p.RequestID))
				continue
			}
			f.cancelled <- string(p.RequestID)
			continue
		}
		if m.Method == "tools/call" && strings.Contains(string(m.Params), `"name":"stall"`) {
			f.result(m.ID, fakeText("stalled", false))
			stalled = true
			continue
		}
		go f.handle(m)
	}
}

func (f *fakeServer) handle(m fakeMsg) {
	switch m.Method {
	case "initialize":
		caps := `{"tools":{}}`
		if os.Getenv("WYMCP_FAKE_LISTCHANGED") != "" {
			caps = `{"tools":{"listChanged":true}}`
		}
		f.result(m.ID, `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"serverInfo":{"name":"fake-stdio","version":"1"}}`)
	case "server/discover":
		if !f.modern {
			f.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`)
			return
		}
		caps := `{"tools":{}}`
		if os.Getenv("WYMCP_FAKE_LISTCHANGED") != "" {
			caps = `{"tools":{"listChanged":true}}`
		}
		f.result(m.ID, `{"supportedVersions":["2026-07-28"],"capabilities":`+caps+`,"serverInfo":{"name":"fake-stdio","version":"1"}}`)
	case "subscriptions/listen":
		f.listen(m)
	case "ping":
		f.result(m.ID, `{}`)
	case "tools/list":
		var tools []string
		for _, n := range []string{"echo", "slow", "progress", "fail", "crash", "hang", "big", "ask", "pid", "spawn", "stall", "noise", "cancels", "hangs", "announce"} {
			tools = append(tools, `{"name":"`+n+`","inputSchema":{"type":"object"}}`)
		}
		if f.announced.Load() {
			tools = append(tools, `{"name":"extra","inputSchema":{"type":"object"}}`)
		}
		f.listenLog("list -") // in order with the listens: a test knows which read came after which
		res := `{"tools":[` + strings.Join(tools, ",") + `]`
		if f.modern {
			res += `,"resultType":"complete","ttlMs":60000,"cacheScope":"shared"`
		}
		f.result(m.ID, res+`}`)
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(m.Params, &p)
		var args struct {
			Text string `json:"text"`
			MS   int    `json:"ms"`
			N    int    `json:"n"`
		}
		_ = json.Unmarshal(p.Arguments, &args)
		f.call(m, p.Name, args.Text, args.MS, args.N, p.Meta.ProgressToken)
	default:
		if m.ID != nil {
			f.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`)
		}
	}
}

func (f *fakeServer) call(m fakeMsg, name, text string, ms, n int, token json.RawMessage) {
	switch name {
	case "echo":
		f.result(m.ID, fakeText(text, false))
	case "slow":
		time.Sleep(time.Duration(ms) * time.Millisecond)
		f.result(m.ID, fakeText("slept "+text, false))
	case "progress":
		for i := 1; i <= 3 && token != nil; i++ {
			f.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":3,"message":"step %d"}}`, token, i, i))
		}
		f.result(m.ID, fakeText("progressed", false))
	case "fail":
		f.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32000,"message":"it broke"}}`)
	case "crash":
		os.Exit(3)
	case "hang":
		f.hangs.Add(1)
	case "announce":
		f.announced.Store(true)
		f.result(m.ID, fakeText("announced", false))
		if !f.modern {
			f.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
			return
		}
		// At 2026-07-28 a change is told on a listen alone.
		f.mu.Lock()
		var ids []string
		for id := range f.listeners {
			ids = append(ids, id)
		}
		f.mu.Unlock()
		for _, id := range ids {
			f.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}}}`)
		}
	case "hangs":
		f.result(m.ID, fakeText(strconv.FormatInt(f.hangs.Load(), 10), false))
	case "big":
		if text == "request" {
			// A request of its own of n bytes, under the number of the
			// call's id (the child's ids are its own), then the answer.
			f.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"method":"sampling/createMessage","params":{"messages":[],"systemPrompt":"` + strings.Repeat("s", n) + `"}}`)
			f.result(m.ID, fakeText("asked", false))
			return
		}
		f.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + fakeText(strings.Repeat("x", n), false) + `}`)
	case "ask":
		id := `"ask-` + string(m.ID) + `"`
		ch := make(chan fakeMsg, 1)
		f.mu.Lock()
		f.waiting[id] = ch
		f.mu.Unlock()
		f.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"elicitation/create","params":{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`)
		r := <-ch
		answer := string(r.Result)
		if r.Error != nil {
			answer = "error " + string(r.Error)
		}
		f.result(m.ID, fakeText(answer, false))
	case "cancels":
		// The first cancellation read (waiting for it), as "cancelled <id>".
		select {
		case id := <-f.cancelled:
			f.result(m.ID, fakeText("cancelled "+id, false))
		case <-time.After(20 * time.Second):
			f.result(m.ID, fakeText("none", true))
		}
	case "pid":
		f.result(m.ID, fakeText(strconv.Itoa(os.Getpid()), false))
	case "spawn":
		self, _ := os.Executable()
		cmd := exec.Command(self)
		cmd.Env = []string{fakeStdioEnv + "=sleep"}
		if err := cmd.Start(); err != nil {
			f.result(m.ID, fakeText(err.Error(), true))
			return
		}
		f.result(m.ID, fakeText(fmt.Sprintf("%d %d", os.Getpid(), cmd.Process.Pid), false))
	case "noise":
		for i := 0; i < n; i++ {
			f.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("n", 100) + `"}}`)
			f.send(`not json at all ` + strconv.Itoa(i))
			fmt.Fprintln(os.Stderr, "chatter", i)
		}
		f.result(m.ID, fakeText("noisy", false))
	}
}

// listen is a 2026-07-28 subscriptions/listen: without
// WYMCP_FAKE_LISTCHANGED, or with WYMCP_FAKE_NOLISTEN, the method is not
// served (-32601); a filter without toolsListChanged is -32602;
// otherwise it is acknowledged, and stays open until cancelled (with
// WYMCP_FAKE_LISTENEND the child ends it at once).
func (f *fakeServer) listen(m fakeMsg) {
	if !f.modern || os.Getenv("WYMCP_FAKE_LISTCHANGED") == "" || os.Getenv("WYMCP_FAKE_NOLISTEN") != "" {
		f.listenLog("refused " + string(m.ID))
		f.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`)
		return
	}
	var p struct {
		Meta          json.RawMessage `json:"_meta"`
		Notifications struct {
			ToolsListChanged bool `json:"toolsListChanged"`
		} `json:"notifications"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.Meta == nil || !p.Notifications.ToolsListChanged {
		f.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32602,"message":"Invalid params"}}`)
		return
	}
	f.mu.Lock()
	f.listeners[string(m.ID)] = true
	f.mu.Unlock()
	// Logged once a change would be told on it.
	f.listenLog("listen " + string(m.ID))
	f.send(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + string(m.ID) + `},"notifications":{"toolsListChanged":true}}}`)
	if os.Getenv("WYMCP_FAKE_LISTENEND") != "" {
		// A child that ends each listen at once, as stdio's server does.
		f.mu.Lock()
		delete(f.listeners, string(m.ID))
		f.mu.Unlock()
		f.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + string(m.ID) + `,"reason":"shutting down"}}`)
	}
}

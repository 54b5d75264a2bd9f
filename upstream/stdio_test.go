package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// stdioOpts is a stdio upstream running the fake server (stdio_fake_test.go)
// in mode, served under the prefix g_.
func stdioOpts(t testing.TB, mode string) upstream.Options {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return upstream.Options{
		Name: "fake", Command: self, Env: map[string]string{fakeStdioEnv: mode},
		Prefix: "g_", Logger: slog.New(slog.DiscardHandler),
	}
}

func stdioCall(t testing.TB, g *ocGateway, tool, args string) mcptest.Reply {
	t.Helper()
	return g.Send(t, mcptest.ToolCall(tool, args))
}

// A stdio upstream of either era: its tools listed under the prefix, a
// call's result, a JSON-RPC error's answer (§10a's row), progress relayed
// as it comes, and the child's elicitation declined for a client that
// cannot be asked.
func TestStdioCalls(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"legacy", "modern"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			g := newOCGateway(t, nil, stdioOpts(t, mode))
			want := map[string]string{"legacy": "2025-11-25", "modern": "2026-07-28"}[mode]
			if v := g.ups[0].Version(); v != want {
				t.Fatalf("negotiated %s, want %s", v, want)
			}
			if n := len(g.ups[0].Tools()); n != 15 {
				t.Fatalf("%d tools", n)
			}
			ocExpectText(t, stdioCall(t, g, "g_echo", `{"text":"hi"}`), "hi", false)
			ocToolError(t, stdioCall(t, g, "g_fail", `{}`), "Upstream fake failed the call with JSON-RPC error -32000: it broke")
			ocExpectText(t, stdioCall(t, g, "g_ask", `{}`), `{"action":"decline"}`, false)

			// Progress: the client's token, three notifications on its
			// stream before the result.
			r := mcptest.ToolCall("g_progress", `{}`)
			r.Body = strings.Replace(r.Body, `"_meta":{`, `"_meta":{"progressToken":"tok",`, 1)
			_, msgs := g.SendSSE(t, r)
			if len(msgs) == 0 {
				t.Fatal("no messages")
			}
			var steps []string
			for _, m := range msgs[:len(msgs)-1] {
				s := string(m)
				if !strings.Contains(s, `"method":"notifications/progress"`) || !strings.Contains(s, `"progressToken":"tok"`) {
					t.Fatalf("not the client's progress: %s", s)
				}
				steps = append(steps, s)
			}
			if len(steps) != 3 || !strings.Contains(steps[2], `"message":"step 3"`) {
				t.Fatalf("progress %q", steps)
			}
			if last := string(msgs[len(msgs)-1]); !strings.Contains(last, "progressed") {
				t.Fatalf("result %s", last)
			}
		})
	}
}

// Many callers' calls on the one pipe at once, each answered with its own
// result: the ids are the gateway's, mapped back, never crossed.
func TestStdioMultiplexed(t *testing.T) {
	t.Parallel()
	g := newOCGateway(t, nil, stdioOpts(t, "legacy"))
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := fmt.Sprintf("call-%d", i)
			tool, args := "g_echo", `{"text":"`+text+`"}`
			if i%4 == 0 {
				tool, args = "g_slow", `{"ms":20,"text":"`+text+`"}`
				text = "slept " + text
			}
			ocExpectText(t, stdioCall(t, g, tool, args), text, false)
		}()
	}
	wg.Wait()
}

// A line past MaxResponseBytes: its call gets the too-large answer, and
// the stream is read on at the next line (the child is not restarted).
func TestStdioTooLarge(t *testing.T) {
	t.Parallel()
	o := stdioOpts(t, "legacy")
	o.MaxResponseBytes = 4096
	g := newOCGateway(t, nil, o)
	starts := upstream.WatchStdioStarts(g.ups[0])
	ocToolError(t, stdioCall(t, g, "g_big", `{"n":100000}`), "Upstream fake's answer is larger than 4096 bytes, the gateway's limit.")
	ocExpectText(t, stdioCall(t, g, "g_big", `{"n":100}`), strings.Repeat("x", 100), false)
	ocExpectText(t, stdioCall(t, g, "g_echo", `{"text":"after"}`), "after", false)
	select {
	case pid := <-starts:
		t.Fatalf("the child was restarted (%d)", pid)
	default:
	}
}

// A request of the child's past MaxResponseBytes whose id is the number of
// a call in flight is the child's, not that call's answer: it is dropped,
// and the call gets its own answer. The line's id once failed the call as
// too large (found by FuzzStdioOutput).
func TestStdioTooLargeRequestIsNotAnAnswer(t *testing.T) {
	t.Parallel()
	o := stdioOpts(t, "legacy")
	o.MaxResponseBytes = 4096
	g := newOCGateway(t, nil, o)
	ocExpectText(t, stdioCall(t, g, "g_big", `{"n":100000,"text":"request"}`), "asked", false)
}

// A flood of notifications, lines that are not JSON-RPC and stderr
// chatter: dropped (stderr logged, throttled), and the call is answered.
func TestStdioNoise(t *testing.T) {
	t.Parallel()
	g := newOCGateway(t, nil, stdioOpts(t, "legacy"))
	ocExpectText(t, stdioCall(t, g, "g_noise", `{"n":5000}`), "noisy", false)
	ocExpectText(t, stdioCall(t, g, "g_echo", `{"text":"after"}`), "after", false)
}

// The child exits with calls in flight: each is answered at once with the
// exited row (not at its deadline); a call while it restarts is answered
// at once, unavailable; then the new child serves.
func TestStdioChildExits(t *testing.T) {
	// The backoff is an hour: the restart comes when the test says
	// (RestartStdioNow), not when a timer and a busy machine race.
	defer upstream.SetStdioSupervision(time.Hour, 5, time.Minute)()
	for _, mode := range []string{"legacy", "modern"} {
		t.Run(mode, func(t *testing.T) {
			o := stdioOpts(t, mode)
			o.CallTimeout = time.Minute
			g := newOCGateway(t, nil, o)
			starts := upstream.WatchStdioStarts(g.ups[0])
			restart := upstream.RestartStdioNow(g.ups[0])
			exited := stdioExited("fake")

			hung := make(chan mcptest.Reply, 1)
			go func() { hung <- stdioCall(t, g, "g_hang", `{}`) }()
			// The hang call is in flight once a call after it is
			// answered: the child reads its lines in order.
			ocExpectText(t, stdioCall(t, g, "g_echo", `{"text":"x"}`), "x", false)
			ocToolError(t, stdioCall(t, g, "g_crash", `{}`), exited)
			ocToolError(t, <-hung, exited)
			ocUnavailable(t, stdioCall(t, g, "g_echo", `{"text":"y"}`), 0, time.Hour)
			restart()

			select {
			case <-starts:
			case <-time.After(30 * time.Second):
				t.Fatal("the child was not restarted")
			}
			ocExpectText(t, stdioCall(t, g, "g_echo", `{"text":"again"}`), "again", false)
			if v := g.ups[0].Version(); v != map[string]string{"legacy": "2025-11-25", "modern": "2026-07-28"}[mode] {
				t.Fatalf("revision %s after the restart", v)
			}
		})
	}
}

// Past its restart budget the upstream is down: logged at Error, its
// calls answered at once as unavailable until the next try, a downWait
// later.
func TestStdioRestartBudget(t *testing.T) {
	defer upstream.SetStdioSupervision(time.Millisecond, 2, time.Hour)()
	o := stdioOpts(t, "legacy")
	logs := &recordLog{}
	o.Logger = slog.New(logs)
	// Each child after the first exits at once: every restart fails.
	marker := t.TempDir() + "/crash"
	o.Env["WYMCP_FAKE_CRASH"] = marker
	g := newOCGateway(t, nil, o)
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ocToolError(t, stdioCall(t, g, "g_crash", `{}`), "Upstream fake stopped before it answered (its process ended or stopped answering); the gateway is restarting it.")
	down := logs.wait(t, "upstream child down")
	if down.Level != slog.LevelError {
		t.Fatalf("logged at %v", down.Level)
	}
	ocUnavailable(t, stdioCall(t, g, "g_echo", `{"text":"y"}`), 30*time.Minute, time.Hour)
}

// stdioExited is §10a's answer to a call whose child ended first.
func stdioExited(name string) string {
	return "Upstream " + name + " stopped before it answered (its process ended or stopped answering); the gateway is restarting it."
}

// recordLog keeps the records logged, and tells waiters of each.
type recordLog struct {
	mu   sync.Mutex
	recs []slog.Record
	more chan struct{}
}

func (l *recordLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *recordLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *recordLog) WithGroup(string) slog.Handler            { return l }
func (l *recordLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	if l.more != nil {
		close(l.more)
		l.more = nil
	}
	return nil
}

// wait returns the first record whose message starts with msg, waiting
// for it up to 30 s.
func (l *recordLog) wait(t testing.TB, msg string) slog.Record {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		for _, r := range l.recs {
			if strings.HasPrefix(r.Message, msg) {
				l.mu.Unlock()
				return r
			}
		}
		if l.more == nil {
			l.more = make(chan struct{})
		}
		more := l.more
		l.mu.Unlock()
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("no record %q", msg)
		}
	}
}

// A child that stops reading its stdin holds only its own calls, each
// until its deadline; another upstream is served meanwhile.
func TestStdioStalledChild(t *testing.T) {
	t.Parallel()
	var set ocSet
	stalled := stdioOpts(t, "legacy")
	stalled.Prefix = "s_"
	stalled.CallTimeout = time.Second
	set.add(stalled)
	other := stdioOpts(t, "legacy")
	other.Name, other.Prefix = "other", "o_"
	set.add(other)
	g := set.start(t, nil)
	ocExpectText(t, stdioCall(t, g, "s_stall", `{}`), "stalled", false)
	// Lines of a megabyte fill the pipe: the writes wait, each call until
	// its deadline, or until the child, which read nothing for
	// ConnectTimeout, is killed.
	big := `{"text":"` + strings.Repeat("z", 1<<20) + `"}`
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep := stdioCall(t, g, "s_echo", big)
			text, _ := mcptest.ToolText(t, rep.ExpectResult(t, "1"))
			if text != "Tool s_echo timed out after 1s" && text != stdioExited("fake") {
				t.Errorf("answer %q", text)
			}
		}()
	}
	ocExpectText(t, stdioCall(t, g, "o_echo", `{"text":"free"}`), "free", false)
	wg.Wait()
}

// The child's elicitation during a call is relayed to a 2025-era client
// when that call is the only one in flight on the child (whose it is is
// certain), and declined when another is in flight too.
func TestStdioElicitation(t *testing.T) {
	t.Parallel()
	o := stdioOpts(t, "legacy")
	o.CallTimeout = time.Minute
	u := rtConnect(t, o)
	g := rtServe(t, &wymcp.Options{Versions: []string{"2026-07-28", "2025-11-25"}}, u.Tools())
	var asked []string
	res := rtLegacyCall(t, g.URL, "g_ask", `{}`, func(method string, params json.RawMessage) string {
		asked = append(asked, method+" "+string(params))
		return `{"action":"accept","content":{"name":"Ada"}}`
	})
	if text, isErr := rtLegacyText(t, res); text != `{"action":"accept","content":{"name":"Ada"}}` || isErr {
		t.Fatalf("answer %q (isError %v)", text, isErr)
	}
	if len(asked) != 1 || !strings.HasPrefix(asked[0], `elicitation/create {"message":"Your name?"`) {
		t.Fatalf("the client was asked %q", asked)
	}

	// Another call in flight: whose call asks is not certain.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = g.Abandon(ctx, mcptest.ToolCall("g_hang", `{}`)) }()
	for {
		rep := g.Send(t, mcptest.ToolCall("g_hangs", `{}`))
		if text, _ := mcptest.ToolText(t, rep.ExpectResult(t, "1")); text == "1" {
			break
		}
	}
	res = rtLegacyCall(t, g.URL, "g_ask", `{}`, func(string, json.RawMessage) string {
		t.Error("the client was asked")
		return `{"action":"accept","content":{}}`
	})
	if text, _ := rtLegacyText(t, res); text != `{"action":"decline"}` {
		t.Fatalf("answer %q", text)
	}
}

// A child's notifications/tools/list_changed has Watch read its tools at
// once (docs/design.md §10e), not at the next refresh.
func TestStdioListChanged(t *testing.T) {
	t.Parallel()
	o := stdioOpts(t, "legacy")
	o.Env["WYMCP_FAKE_LISTCHANGED"] = "1"
	o.Refresh = time.Hour
	g := newOCGateway(t, nil, o)
	ctx, cancel := context.WithCancel(context.Background())
	changed := make(chan int, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.ups[0].Watch(ctx, func(ts []*tools.Tool) { changed <- len(ts) })
	}()
	defer func() { cancel(); <-done }()
	ocExpectText(t, stdioCall(t, g, "g_announce", `{}`), "announced", false)
	for {
		select {
		case n := <-changed:
			if n == 16 {
				return
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the change was not read")
		}
	}
}

// A call given up is cancelled on the pipe: notifications/cancelled with
// its request's id, in both eras. The caller leaves once the child has the
// call (its deadline would take the same path, stdio.go's ctx.Done(), but
// a 200 ms deadline would race the next call on a busy machine).
func TestStdioCancelled(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"legacy", "modern"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			o := stdioOpts(t, mode)
			o.CallTimeout = time.Minute
			g := newOCGateway(t, nil, o)
			ctx, cancel := context.WithCancel(context.Background())
			left := make(chan struct{})
			go func() {
				defer close(left)
				_ = g.Abandon(ctx, mcptest.ToolCall("g_hang", `{}`))
			}()
			for {
				if text, _ := mcptest.ToolText(t, stdioCall(t, g, "g_hangs", `{}`).ExpectResult(t, "1")); text == "1" {
					break
				}
			}
			cancel()
			<-left
			rep := stdioCall(t, g, "g_cancels", `{}`)
			text, _ := mcptest.ToolText(t, rep.ExpectResult(t, "1"))
			if !strings.HasPrefix(text, "cancelled ") {
				t.Fatalf("the child read %q", text)
			}
		})
	}
}

// PerCaller: each caller's calls go to a child of its own, the same one
// each time; past MaxCallers a new caller takes the idle one's place.
func TestStdioPerCaller(t *testing.T) {
	t.Parallel()
	o := stdioOpts(t, "legacy")
	o.PerCaller, o.MaxCallers = true, 2
	g := newOCGateway(t, ocBehindProxy, o)
	pid := func(who string) string { return textAs(t, g.Endpoint, who, "g_pid") }
	a, b := pid("192.0.2.1"), pid("192.0.2.2")
	if a == b {
		t.Fatalf("two callers share the child %s", a)
	}
	if again := pid("192.0.2.1"); again != a {
		t.Fatalf("caller a's child changed: %s, then %s", a, again)
	}
	// A third caller takes the place of a's child, idle the longest
	// after b's call.
	pid("192.0.2.2")
	c := pid("192.0.2.3")
	if c == a || c == b {
		t.Fatalf("caller c got another's child %s", c)
	}
	if got := pid("192.0.2.1"); got == a {
		t.Fatal("caller a's child outlived its eviction")
	}
}

// PerCaller at MaxCallers children, each with a call in progress: a new
// caller is answered at once, busy (§10a's row).
func TestStdioPerCallerBusy(t *testing.T) {
	t.Parallel()
	o := stdioOpts(t, "legacy")
	o.PerCaller, o.MaxCallers = true, 1
	o.CallTimeout = time.Minute
	g := newOCGateway(t, ocBehindProxy, o)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	as := func(who, tool string) mcptest.Reply {
		t.Helper()
		return g.Send(t, mcptest.ToolCall(tool, `{}`).With("X-Forwarded-For", who))
	}
	// Caller a takes the one child, then a call of a's hangs on it until
	// the test ends (its client leaves).
	ocExpectText(t, as("192.0.2.1", "g_hangs"), "0", false)
	go func() { _ = g.Abandon(ctx, mcptest.ToolCall("g_hang", `{}`).With("X-Forwarded-For", "192.0.2.1")) }()
	for {
		if text, _ := mcptest.ToolText(t, as("192.0.2.1", "g_hangs").ExpectResult(t, "1")); text == "1" {
			break
		}
	}
	ocToolError(t, as("192.0.2.2", "g_echo"), "Upstream fake runs a process for each of 1 callers, its limit, and each has a call in progress; retry later.")
}

// Options.Validate's refusals of a stdio upstream.
func TestStdioValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		o     upstream.Options
		field string
	}{
		{upstream.Options{Name: "a"}, "URL"},
		{upstream.Options{Name: "a", URL: "http://127.0.0.1/", Command: "x"}, "Command"},
		{upstream.Options{Name: "a", URL: "http://127.0.0.1/", Args: []string{"x"}}, "Args"},
		{upstream.Options{Name: "a", URL: "http://127.0.0.1/", Env: map[string]string{"A": "b"}}, "Env"},
		{upstream.Options{Name: "a", URL: "http://127.0.0.1/", Dir: "/tmp"}, "Dir"},
		{upstream.Options{Name: "a", Command: "x", Dir: "rel"}, "Dir"},
		{upstream.Options{Name: "a", Command: "x", Env: map[string]string{"A=B": "b"}}, `Env["A=B"]`},
		{upstream.Options{Name: "a", Command: "x", Env: map[string]string{"WYMCP_STDIO_REAPER": "1"}}, `Env["WYMCP_STDIO_REAPER"]`},
		{upstream.Options{Name: "a", Command: "x", InheritEnv: []string{"A B"}}, "InheritEnv[0]"},
		{upstream.Options{Name: "a", Command: "x", MaxConns: 3}, "MaxConns"},
		{upstream.Options{Name: "a", Command: "x", Args: []string{"a\x00"}}, "Args[0]"},
		{upstream.Options{Name: "a", URL: "http://127.0.0.1/", MaxCallers: 3}, "MaxCallers"},
		{upstream.Options{Name: "a", URL: "http://127.0.0.1/", PerCaller: true, MaxCallers: -1}, "MaxCallers"},
		{upstream.Options{Name: "a", Command: "x", MaxCallers: 3}, "MaxCallers"},
	} {
		err := c.o.Validate()
		var oe *upstream.OptionError
		if !errors.As(err, &oe) || oe.Field != c.field {
			t.Errorf("%+v: %v, want a refusal of %s", c.o, err, c.field)
		}
	}
	if err := (&upstream.Options{Name: "a", URL: "http://127.0.0.1/", PerCaller: true, MaxCallers: 3}).Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (&upstream.Options{Name: "a", Command: "x", Args: []string{"-y"}, Env: map[string]string{"K": "v"}, InheritEnv: []string{"HOME", "*"}, Dir: "/tmp"}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// A command that is not there fails Connect, naming it; nothing is left
// running.
func TestStdioCommandNotFound(t *testing.T) {
	t.Parallel()
	_, err := upstream.Connect(context.Background(), upstream.Options{Name: "a", Command: "wymcp-no-such-program", Env: map[string]string{"PATH": "/nonexistent"}})
	if err == nil || !strings.Contains(err.Error(), `command "wymcp-no-such-program": not found in the child's PATH "/nonexistent"`) {
		t.Fatalf("%v", err)
	}
}

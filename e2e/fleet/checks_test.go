package fleet

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestChecksCatchWrongAnswers: the load's check of one answer, against a
// stand-in that answers each call in one wrong way: every way is counted as
// its kind of failure, and only the right answer passes. A check that let a
// crossed answer through would make the fleet test's "0 crossed" hollow.
func TestChecksCatchWrongAnswers(t *testing.T) {
	var mode string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Arguments map[string]string `json:"arguments"`
			} `json:"params"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		text := req.Params.Arguments["text"]
		id := string(req.ID)
		result := func(id, text, extra string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + text + `"}]` + extra + `}}`
		}
		w.Header().Set("Content-Type", "application/json")
		switch mode {
		case "right 2026":
			io.WriteString(w, result(id, text, `,"resultType":"complete"`))
		case "right 2025":
			io.WriteString(w, result(id, text, ``))
		case "right, streamed":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
			io.WriteString(w, "event: message\ndata: "+result(id, text, `,"resultType":"complete"`)+"\n\n")
		case "another id":
			io.WriteString(w, result("99999999", text, `,"resultType":"complete"`))
		case "another text":
			io.WriteString(w, result(id, text+"x", `,"resultType":"complete"`))
		case "2026 shape to a 2025 client":
			io.WriteString(w, result(id, text, `,"resultType":"complete"`))
		case "tool error":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"Upstream demo is unavailable; the gateway will try it again in 4.2s."}],"isError":true,"resultType":"complete"}}`)
		case "JSON-RPC error":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32602,"message":"no"}}`)
		case "HTTP 502":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html><head><title>502 Bad Gateway</title></head></html>")
		}
	}))
	defer srv.Close()

	l := newLoad(srv.URL, 1)
	l.begin = time.Now()
	for _, c := range []struct {
		mode   string
		legacy bool
		want   string
	}{
		{"right 2026", false, ""},
		{"right 2025", true, ""},
		{"right, streamed", false, ""},
		{"another id", false, "crossed (another call's id)"},
		{"another text", false, "crossed (another call's text)"},
		{"2026 shape to a 2025 client", true, "wrong era shape"},
		{"right 2025", false, "wrong era shape"},
		{"tool error", false, "tool error: Upstream demo is unavailable; the gateway will try it again in Ns."},
		{"JSON-RPC error", false, "JSON-RPC error -32602"},
		{"HTTP 502", false, "HTTP 502"},
	} {
		mode = c.mode
		o, detail := l.call(0, c.legacy)
		if o.kind != c.want {
			t.Errorf("%s (2025 client %v): kind %q (%s), want %q", c.mode, c.legacy, o.kind, detail, c.want)
		}
		if o.crossed() != strings.HasPrefix(c.want, "crossed") {
			t.Errorf("%s: crossed() %v", c.mode, o.crossed())
		}
		if o.end < o.start {
			t.Errorf("%s: answered at %v, before it was sent at %v", c.mode, o.end, o.start)
		}
	}
}

// TestTallyByPhase: a call counts in the phase it was sent in, and the
// percentiles are nearest-rank.
func TestTallyByPhase(t *testing.T) {
	msec := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	outs := []outcome{
		{target: 0, start: msec(0), end: msec(10)},
		{target: 1, start: msec(5), end: msec(1200), kind: "HTTP 502"}, // sent in the first phase, answered in the second
		{target: 2, start: msec(1000), end: msec(1003), kind: "crossed (another call's text)"},
		{target: -1, legacy: true, start: msec(1001), end: msec(1002)},
	}
	first := tallyOf(outs, phase{name: "a", start: 0, end: msec(1000)})
	if first.calls != 2 || first.failed != 1 || first.crossed != 0 || first.failedOf("demo-noretry") != 1 || first.failedOf("demo") != 0 {
		t.Errorf("first phase: %+v", first)
	}
	second := tallyOf(outs, phase{name: "b", start: msec(1000), end: msec(2000)})
	if second.calls != 2 || second.legacy != 1 || second.failed != 1 || second.crossed != 1 || second.failedOf("everything") != 1 {
		t.Errorf("second phase: %+v", second)
	}
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, msec(101-i))
	}
	if p50, p99 := percentiles(d); p50 != msec(50) || p99 != msec(99) {
		t.Errorf("percentiles of 1..100 ms: p50 %v, p99 %v", p50, p99)
	}
}

// TestServedByNamesTheAnsweringProcess: a rolling restart goes on once a
// call through nginx is answered by the restarted process, told by the
// serverInfo version its answer names (each process has its own). The
// probe must read that version, and must not take an answer without one,
// nor an error page, for any process's.
func TestServedByNamesTheAnsweringProcess(t *testing.T) {
	var answer atomic.Value // string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := answer.Load().(string)
		if r.URL.Path != "/mcp" || r.Header.Get("Mcp-Method") != "tools/list" {
			http.Error(w, "unexpected "+r.URL.Path, http.StatusBadRequest)
			return
		}
		if a == "" {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html><head><title>502 Bad Gateway</title></head></html>")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, a)
	}))
	defer srv.Close()

	answer.Store(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"wymcp-demo","version":"0.1.0-fleet.7"}}}}`)
	if v, err := servedBy(srv.URL); err != nil || v != "0.1.0-fleet.7" {
		t.Errorf("an answer naming version 0.1.0-fleet.7: servedBy = %q, %v", v, err)
	}
	for name, a := range map[string]string{
		"no serverInfo":    `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[]}}`,
		"a JSON-RPC error": `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no"}}`,
		"HTTP 502":         "",
	} {
		answer.Store(a)
		if v, err := servedBy(srv.URL); err == nil {
			t.Errorf("%s: servedBy = %q, want an error", name, v)
		}
	}
}

// TestRetriedLossesNeedEveryTryLost: at the SIGKILL, a call of the upstream
// with retries may fail only when the upstream nginx's log (its lines with
// bodies, read by call number) shows two tries or more, each lost at the
// killed replica. A call tried once (no retry made), or whose retry was
// answered by another replica, is an error; calls of other upstreams or
// sent in other phases are not counted.
func TestRetriedLossesNeedEveryTryLost(t *testing.T) {
	conf := withBodies(t, templateText(t))
	if !strings.Contains(conf, ` worker=$pid at=$msec body="$request_body"';`) {
		t.Fatalf("withBodies: the log_format does not end with the body:\n%s", conf)
	}
	const victim, other = "127.0.0.1:4001", "127.0.0.1:4002"
	line := func(status, upstream string, n int) string {
		return `127.0.0.1 [06/Dec/2026:18:39:12 +0000] "POST /mcp HTTP/1.1" ` + status + ` 150 rt=0.180 upstream=` + upstream +
			` ustatus=502 urt=0.180 method="tools/call" name="echo" worker=7 at=1796582352.123 body="{\x22jsonrpc\x22:\x222.0\x22,\x22id\x22:9,\x22method\x22:\x22tools/call\x22,\x22params\x22:{\x22name\x22:\x22echo\x22,\x22arguments\x22:{\x22text\x22:\x22fleet ` +
			strconv.Itoa(n) + ` 1x2\x22}}}"` + "\n"
	}
	log := line("502", victim, 1) + line("502", victim, 1) + // lost on both tries
		line("502", victim, 2) + // never retried
		line("502", victim, 3) + line("200", other, 3) + // saved by its retry
		line("502", victim, 4) + line("502", other, 4) + // its retry lost elsewhere
		line("502", victim, 5) + // demo-noretry's
		line("502", victim, 6) + line("502", victim, 6) + // sent before the phase
		line("200", victim+", "+other, 7) + // nginx went on after a refused connection
		`127.0.0.1 [06/Dec/2026:18:39:12 +0000] "POST /mcp HTTP/1.1" 200 150 rt=0.001 upstream=` + other + ` ustatus=200 urt=0.001 method="tools/list" name="-" worker=7 at=1796582352.124 body="{}"` + "\n"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "access.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	tries := (&balancer{prefix: dir}).attempts()
	if len(tries) != 7 || len(tries[1]) != 2 || tries[7][0].last != other || !tries[1][0].lostAt(victim) || tries[3][1].lostAt(victim) {
		t.Fatalf("attempts: %v", tries)
	}

	msec := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	p := phase{name: "SIGKILL", start: msec(100), end: msec(200)}
	outs := []outcome{
		{target: 0, n: 1, start: msec(110), end: msec(150), kind: "tool error: Upstream demo answered HTTP N"},
		{target: 0, n: 2, start: msec(111), end: msec(150), kind: "tool error: Upstream demo answered HTTP N"},
		{target: 0, n: 3, start: msec(112), end: msec(150)},
		{target: 0, n: 4, start: msec(113), end: msec(150), kind: "tool error: Upstream demo answered HTTP N"},
		{target: 1, n: 5, start: msec(114), end: msec(150), kind: "tool error: Upstream demo-noretry answered HTTP N"},
		{target: 0, n: 6, start: msec(90), end: msec(150), kind: "tool error: Upstream demo answered HTTP N"},
		{target: 0, n: 7, start: msec(115), end: msec(120)},
		{target: 0, n: 8, start: msec(116), end: msec(120), kind: "no result"}, // never reached the upstream nginx
	}
	r := retriedLosses(outs, "demo", p, tries, victim)
	if r.lost != 4 || r.lostEvery != 1 || r.failed != 4 || len(r.tries) != 4 {
		t.Errorf("retriedLosses: lost %d (want 4: calls 1 to 4), lost on every try %d (want 1: call 1), failed %d (want 4: calls 1, 2, 4, 8), tries %q", r.lost, r.lostEvery, r.failed, r.tries)
	}
	if len(r.errs) != 3 || !strings.Contains(r.errs[0], "call 2 ") || !strings.Contains(r.errs[1], "call 4 ") || !strings.Contains(r.errs[2], "call 8 ") {
		t.Errorf("retriedLosses: errors %q, want one each for calls 2, 4 and 8", r.errs)
	}
}

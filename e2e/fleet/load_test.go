package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// target is one upstream's echo as the gateways serve it.
type target struct {
	key    string // the upstream's name in the gateways' file, and in the tables
	tool   string // the served name
	argKey string // the echo's argument
	prefix string // what the echo puts before the text it was given
}

// The three upstreams of the gateways' file: the demo replicas behind the
// upstream nginx twice, with retries allowed (demo) and without (demo-noretry),
// so that one SIGKILL measures both; and server-everything.
var targets = []target{
	{key: "demo", tool: "demo_echo", argKey: "text"},
	{key: "demo-noretry", tool: "dn_echo", argKey: "text"},
	{key: "everything", tool: "ev_echo", argKey: "message", prefix: "Echo: "},
}

// outcome is one call as its client saw it.
type outcome struct {
	target     int // index in targets; -1 for a 2025 client's initialize
	legacy     bool
	start, end time.Duration // since the load began
	kind       string        // "" when the answer was right, else the kind of failure
	// n is the call's number, in its echo's text (load.call): what the
	// upstream nginx's log names its tries by (balancer.attempts).
	n int64
}

// crossed reports whether the failure is another call's answer.
func (o outcome) crossed() bool { return strings.HasPrefix(o.kind, "crossed") }

// load is the closed-loop clients and every outcome.
type load struct {
	url    string
	client *http.Client
	begin  time.Time
	nextID atomic.Int64

	mu       sync.Mutex
	outcomes []outcome
	samples  []string // the first failures of each kind, in full
	perKind  map[string]int
}

func newLoad(url string, clients int) *load {
	tr := &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        clients,
		MaxIdleConnsPerHost: clients, // every client keeps its connection to the front
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	// Above the gateways' call timeout (60 s): a slow call is answered by
	// the fleet, as a failure or not, rather than given up by the client.
	return &load{url: url, client: &http.Client{Transport: tr, Timeout: 65 * time.Second}, perKind: map[string]int{}}
}

// run starts the clients: every fourth is a 2025-11-25 client (its
// initialize, then its calls, no session); each calls the three upstreams'
// echo in turn until ctx ends. The returned function waits for the last
// call's answer.
func (l *load) run(ctx context.Context, clients int) (wait func()) {
	l.begin = time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		legacy := c%4 == 3
		wg.Go(func() {
			if legacy {
				l.record(l.initialize())
			}
			for n := c; ctx.Err() == nil; n++ {
				l.record(l.call(n%len(targets), legacy))
			}
		})
	}
	return wg.Wait
}

func (l *load) since() time.Duration { return time.Since(l.begin) }

// record keeps the outcome, and the first samples of each kind of failure.
func (l *load) record(o outcome, detail string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.outcomes = append(l.outcomes, o)
	if o.kind != "" {
		l.perKind[o.kind]++
		if l.perKind[o.kind] <= 3 && len(l.samples) < 40 {
			name := "initialize"
			if o.target >= 0 {
				name = targets[o.target].tool
			}
			l.samples = append(l.samples, strconv.FormatFloat(o.start.Seconds(), 'f', 3, 64)+"s  "+name+"  "+o.kind+": "+detail)
		}
	}
}

// snapshot is a copy of the outcomes so far.
func (l *load) snapshot() []outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]outcome(nil), l.outcomes...)
}

const metaJSON = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// call sends one echo through the front with an id and a text no other call
// has, and checks that this call's answer came back: the status, one
// response of the request's id, the echoed text, and the era's shape (a
// 2026-07-28 result has a resultType, a 2025 one none).
func (l *load) call(ti int, legacy bool) (outcome, string) {
	tg := targets[ti]
	n := l.nextID.Add(1)
	id := strconv.FormatInt(n, 10)
	text := "fleet " + id + " " + strconv.FormatInt(n*7919%1000003, 36)
	args := `{"` + tg.argKey + `":"` + text + `"}`
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tg.tool + `","arguments":` + args + `,` + metaJSON + `}}`
	if legacy {
		body = `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tg.tool + `","arguments":` + args + `}}`
	}
	o := outcome{target: ti, legacy: legacy, start: l.since(), n: n}
	req, err := http.NewRequest(http.MethodPost, l.url, strings.NewReader(body))
	if err != nil {
		o.kind = "request"
		return o, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if legacy {
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	} else {
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", tg.tool)
	}
	kind, detail := l.check(req, id, func(a *answer) (string, string) {
		r := a.Result
		switch {
		case r == nil:
			return "no result", ""
		case r.IsError && len(r.Content) == 1:
			return "tool error: " + normalize(r.Content[0].Text), r.Content[0].Text
		case r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text":
			return "wrong answer", ""
		case r.Content[0].Text != tg.prefix+text:
			return "crossed (another call's text)", "sent " + strconv.Quote(text)
		case legacy == a.hasResultType:
			return "wrong era shape", ""
		}
		return "", ""
	})
	o.end = l.since()
	o.kind = kind
	return o, detail
}

// initialize opens a 2025-11-25 client: answered by any gateway, with the
// era's revision and no session (the gateways serve the era statelessly).
func (l *load) initialize() (outcome, string) {
	o := outcome{target: -1, legacy: true, start: l.since()}
	req, err := http.NewRequest(http.MethodPost, l.url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e-fleet","version":"1"}}}`))
	if err != nil {
		o.kind = "request"
		return o, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	kind, detail := l.check(req, "0", func(a *answer) (string, string) {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if a.rawResult == nil || json.Unmarshal(a.rawResult, &r) != nil || r.ProtocolVersion != "2025-11-25" {
			return "initialize", ""
		}
		if session := a.header.Get("Mcp-Session-Id"); session != "" {
			return "initialize", "a session id " + session
		}
		return "", ""
	})
	o.end, o.kind = l.since(), kind
	return o, detail
}

// answer is the part of an answer the checks read.
type answer struct {
	header        http.Header
	hasResultType bool
	rawResult     json.RawMessage
	Result        *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
}

// check sends req and reads its answer: one JSON-RPC response (a JSON body,
// or the one response of an event stream) of the id wanted; then result
// checks the rest. It returns the kind of failure ("" for none) and a
// detail for the report.
func (l *load) check(req *http.Request, id string, result func(*answer) (string, string)) (string, string) {
	resp, err := l.client.Do(req)
	if err != nil {
		return "transport: " + shortErr(err), err.Error()
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return "reading answer: " + shortErr(err), err.Error()
	}
	if resp.StatusCode != http.StatusOK {
		return "HTTP " + strconv.Itoa(resp.StatusCode), oneLine(b)
	}
	msg := b
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "text/event-stream" {
		msg = nil
		for _, event := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n\n") {
			var data []string
			for _, line := range strings.Split(event, "\n") {
				if v, ok := strings.CutPrefix(line, "data:"); ok {
					data = append(data, strings.TrimPrefix(v, " "))
				}
			}
			if d := strings.Join(data, "\n"); strings.Contains(d, `"id"`) {
				msg = []byte(d)
			}
		}
	} else if ct != "application/json" {
		return "content type", ct + ": " + oneLine(b)
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg, &m); err != nil || m.JSONRPC != "2.0" {
		return "not a JSON-RPC response", oneLine(b)
	}
	if string(m.ID) != id {
		return "crossed (another call's id)", "sent id " + id + ", got " + oneLine(b)
	}
	if m.Error != nil {
		return "JSON-RPC error " + strconv.Itoa(m.Error.Code), oneLine(b)
	}
	a := &answer{header: resp.Header, rawResult: m.Result}
	var shape struct {
		ResultType *string `json:"resultType"`
	}
	if json.Unmarshal(m.Result, &shape) == nil {
		a.hasResultType = shape.ResultType != nil
	}
	if err := json.Unmarshal(m.Result, &a.Result); err != nil {
		return "not a JSON-RPC response", oneLine(b)
	}
	kind, detail := result(a)
	if kind != "" && detail == "" {
		detail = oneLine(b)
	} else if kind != "" {
		detail += "; got " + oneLine(b)
	}
	return kind, detail
}

var digits = regexp.MustCompile(`[0-9][0-9.]*`)

// normalize is a tool error's text with its numbers left out, so that one
// kind of failure is one row ("try it again in 3.2s").
func normalize(s string) string {
	return digits.ReplaceAllString(s, "N")
}

// shortErr names a transport error without its addresses.
func shortErr(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "EOF"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}

// oneLine shortens an answer for a report: nginx's error pages by their
// title, anything else to its first 300 bytes on one line.
func oneLine(b []byte) string {
	s := string(b)
	if i := strings.Index(s, "<title>"); i >= 0 {
		if j := strings.Index(s[i:], "</title>"); j >= 0 {
			return "nginx page: " + s[i+len("<title>"):i+j]
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// bytesContain is for the checks of a direct probe's answer.
func bytesContain(b []byte, s string) bool { return bytes.Contains(b, []byte(s)) }

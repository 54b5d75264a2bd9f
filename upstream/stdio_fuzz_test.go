//go:build linux

package upstream

// FuzzStdioOutput drives the reader of a stdio child's stdout
// (stdioConn.read, dispatch, tooLarge) and the calls waiting on it
// (stdioConn.exchange) with arbitrary bytes as the child's stdout. The
// child is the seam spawn fills in (stdio_proc_linux.go): its stdin and
// stdout are pipes of the test's, and its process is the test itself,
// which "exits" (exited, then dead, as stdioConn.wait does) once the
// bytes are written.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
)

// fuzzStdioMax is the fuzzed children's MaxResponseBytes: small, so that
// lines past it are cheap to find.
const fuzzStdioMax = 200

// fuzzStdioCall is one call in flight while the child's stdout is read.
type fuzzStdioCall struct {
	id       int64
	method   string
	progress int64
}

// fuzzStdioCalls are the calls in flight, the first n of them: a
// tools/call with a progress token (its id), one without, and a
// tools/list (no call: the child's requests are never handed to it).
var fuzzStdioCalls = []fuzzStdioCall{
	{id: 1, method: "tools/call", progress: 1},
	{id: 2, method: "tools/call"},
	{id: 3, method: "tools/list"},
}

// fuzzStdioOutcome is what one call in flight got.
type fuzzStdioOutcome struct {
	call fuzzStdioCall
	m    message
	err  error
}

// runStdioOutput runs the calls (the first n of fuzzStdioCalls, 1 to 3)
// on a child whose stdout is out (one caller's when perCaller), and
// returns what each got once its stdout has ended, and the lines the
// gateway wrote to its stdin after the calls' requests. A call that gets
// nothing fails the test.
func runStdioOutput(t testing.TB, out []byte, n int, perCaller bool) ([]fuzzStdioOutcome, []string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := newStdioClient(Options{Name: "fuzz", Command: self, MaxResponseBytes: fuzzStdioMax, BreakerMinCalls: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s := c.stdio
	s.perCaller = perCaller
	s.changed = func() {} // Watch follows the child
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ch := newChild(&process{}, inW, 0) // never signalled: it "exits" by itself
	ch.conn = s

	// The child's stdin: each line the gateway writes.
	written := make(chan string, 64)
	stdinDone := make(chan []string, 1)
	go func() {
		br := bufio.NewReader(inR)
		var after []string
		for i := 0; ; i++ {
			line, err := br.ReadString('\n')
			if err != nil {
				stdinDone <- after
				return
			}
			if i < n {
				written <- line
			} else {
				after = append(after, line)
			}
		}
	}()

	ctx := context.WithValue(context.Background(), handshakeKey{}, ch)
	results := make(chan fuzzStdioOutcome, n)
	for _, call := range fuzzStdioCalls[:n] {
		req := &request{id: call.id, method: call.method, ctx: ctx, progress: call.progress,
			body: []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(call.id, 10) + `,"method":"` + call.method + `","params":{}}`)}
		if call.method == "tools/call" {
			req.during = func(*client, context.Context, message, int64) error { return nil }
		}
		if call.progress != 0 {
			// A 2025-era client that can be asked during the call: the
			// child's requests for input are relayed to it.
			req.ctx = context.WithValue(ctx, toolrun.AskClientKey{}, toolrun.AskClient(func(context.Context, string, wire.RawJSON) (wire.RawJSON, error) {
				return wire.RawJSON(`{"action":"accept","content":{}}`), nil
			}))
		}
		go func() {
			m, _, err := s.exchange(ctx, req, "")
			results <- fuzzStdioOutcome{call: call, m: m, err: err}
		}()
	}
	// Each call's request is written once it is in flight (exchange).
	for range n {
		<-written
	}

	go s.read(ch, outR)
	go func() {
		_, _ = outW.Write(out)
		outW.Close()
		// The process exits; its calls fail once its output is read
		// (stdioConn.wait).
		close(ch.exited)
		<-ch.readDone
		ch.killOnce.Do(func() { ch.why = errors.New("its process ended: it exited") })
		close(ch.dead)
	}()

	hang := time.NewTimer(time.Minute)
	defer hang.Stop()
	var got []fuzzStdioOutcome
	for range n {
		select {
		case r := <-results:
			got = append(got, r)
		case <-hang.C:
			t.Fatalf("%d of %d calls still wait a minute after the child's stdout ended", n-len(got), n)
		}
	}
	// The child's requests answered on no call's behalf are written.
	for range cap(s.answering) {
		s.answering <- struct{}{}
	}
	inW.Close()
	after := <-stdinDone
	inR.Close()
	return got, after
}

// FuzzStdioOutput: whatever a child writes on its stdout while calls are
// in flight, nothing panics, every call gets an answer or a failure once
// its stdout ends, an answer is a response with the call's id (or a
// JSON-RPC error with a null id, docs/design.md §10a), a call fails as
// too large only for a line past MaxResponseBytes that is not a request
// or a notification of the child's, and the gateway's answers to the
// child's requests carry their ids.
func FuzzStdioOutput(f *testing.F) {
	long := strings.Repeat("x", fuzzStdioMax)
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"one"}]}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}` + "\n" + `{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}` + "\n",
		`{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}` + "\r\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\r\n" + `{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"total":3,"message":"step"}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"1","progress":2}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n" +
			`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n",
		`{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"Your name?","requestedSchema":{"type":"object"}}}` + "\n" +
			`{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}` + "\n" +
			`{"jsonrpc":"2.0","id":8,"method":"roots/list"}` + "\n" +
			`{"jsonrpc":"2.0","id":9,"method":"ping"}` + "\n" +
			`{"jsonrpc":"2.0","id":10,"method":"no/such"}` + "\n" +
			`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"result":{"text":"` + long + `"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n",
		`{"id":2,"jsonrpc":"2.0","result":{"text":"` + long + `"}}` + "\n",
		`{"jsonrpc":"2.0","result":{"text":"` + long + `"},"id":3}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"text":"` + long + `"}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + long + `"},"id":2}` + "\n",
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n",
		`{"jsonrpc":"2.0","id":-0,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":"1","result":{}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"again"}}` + "\n",
		"not json\n\n   \n{\n" + long + long + "\n",
		long + long + long,
		"",
	} {
		for calls := range uint8(8) {
			f.Add([]byte(s), calls)
		}
	}
	f.Fuzz(func(t *testing.T, out []byte, calls uint8) {
		n := int(calls%3) + 1
		got, after := runStdioOutput(t, out, n, calls&4 != 0)
		for _, r := range got {
			checkStdioOutcome(t, out, r)
		}
		// What the gateway wrote after the calls' requests: its answers
		// to the child's requests (and cancellations, none here), each a
		// JSON-RPC message with an id the child sent.
		for _, line := range after {
			m, err := parseMessage([]byte(strings.TrimSuffix(line, "\n")))
			if err != nil {
				t.Fatalf("the gateway wrote %q to the child: %v", line, err)
			}
			if m.method == "" && !bytes.Contains(out, m.id) {
				t.Fatalf("the gateway answered id %s, which the child never sent", m.id)
			}
		}
	})
}

// checkStdioOutcome checks what one call got from out.
func checkStdioOutcome(t *testing.T, out []byte, r fuzzStdioOutcome) {
	t.Helper()
	if r.err == nil {
		if !sameID(r.m.id, r.call.id) && !(r.m.id == nil && r.m.err != nil) {
			t.Fatalf("call %d answered with a message of id %s", r.call.id, r.m.id)
		}
		if len(r.m.result) > fuzzStdioMax {
			t.Fatalf("call %d answered with a result of %d bytes, past the limit", r.call.id, len(r.m.result))
		}
		return
	}
	var f *failure
	if !errors.As(r.err, &f) {
		t.Fatalf("call %d: %v", r.call.id, r.err)
	}
	switch f.kind {
	case kindExited:
	case kindTooLarge:
		if !tooLargeFor(out, r.call.id) {
			t.Fatalf("call %d failed as too large, but no line past the limit answers it in %q", r.call.id, out)
		}
	default:
		// kindMalformed here is a message of another id handed to the
		// call (check refuses it).
		t.Fatalf("call %d: %v (kind %d)", r.call.id, r.err, f.kind)
	}
}

// tooLargeFor reports whether out has a whole line past fuzzStdioMax that
// may be a response to call id: not a request or notification of the
// child's, nor a response to another id.
func tooLargeFor(out []byte, id int64) bool {
	lines := bytes.Split(out, []byte("\n"))
	for _, line := range lines[:len(lines)-1] { // the last has no newline
		if len(line) <= fuzzStdioMax {
			continue
		}
		m, err := parseMessage(bytes.TrimSpace(line))
		if err != nil || (m.method == "" && sameID(m.id, id)) {
			return true
		}
	}
	return false
}

// TestStdioOutputTooLargeRequest: a line past the limit that shows a
// method (first, or among the members after its last object) is a request
// or a notification of the child's, whose id is in the child's numbering:
// no call of the gateway's is failed as too large for it, and the call
// with that number gets its answer, the next line. Each once failed call 1
// (found by FuzzStdioOutput; the seeds are in testdata/fuzz).
func TestStdioOutputTooLargeRequest(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", fuzzStdioMax)
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"mine"}]}}`
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"text":"` + long + `"}}`,
		`{"id":1,"method":"elicitation/create","params":{"message":"` + long + `"}}`,
		`{"jsonrpc":"2.0","params":{"data":"` + long + `"},"method":"notifications/message","id":1}`,
	} {
		got, _ := runStdioOutput(t, []byte(line+"\n"+answer+"\n"), 1, false)
		if len(got) != 1 || got[0].err != nil || string(got[0].m.id) != "1" || string(got[0].m.result) != `{"content":[{"type":"text","text":"mine"}]}` {
			t.Errorf("after %.60q…: call 1 got %+v", line, got)
			for _, r := range got {
				t.Logf("error: %v", r.err)
			}
		}
	}
	// A response past the limit still fails its call, whichever end its
	// id is at.
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"method":"` + long + `"}}`,
		`{"jsonrpc":"2.0","result":{"text":"` + long + `","method":"x"},"id":1}`,
	} {
		got, _ := runStdioOutput(t, []byte(line+"\n"+answer+"\n"), 1, false)
		var f *failure
		if len(got) != 1 || !errors.As(got[0].err, &f) || f.kind != kindTooLarge {
			t.Errorf("after %.60q…: call 1 got %+v, want the too-large failure", line, got)
		}
	}
}

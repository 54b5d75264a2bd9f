package upstream_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/upstream"
)

// ocHugeHeaders answers 200 with headers of total bytes, written on the
// connection line by line, then a JSON answer; written gets how many
// bytes of them were written before a write failed (the gateway closed
// the connection) or all were.
func ocHugeHeaders(total int, written chan<- int) ocHandler {
	return func(w http.ResponseWriter, _ *http.Request, id string, _ []byte) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		line := "X-Pad: " + strings.Repeat("h", 1000) + "\r\n"
		n, err := buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
		for err == nil && n < total {
			var k int
			k, err = buf.WriteString(line)
			n += k
		}
		if err == nil {
			body := `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"ok"}]}}`
			_, err = fmt.Fprintf(buf, "Content-Length: %d\r\n\r\n%s", len(body), body)
		}
		if err == nil {
			err = buf.Flush()
		}
		if err != nil {
			n = -n // cut short
		}
		written <- n
	}
}

// ocPadded answers with a header of pad bytes beside a JSON body or an
// event stream of body ("{{id}}" is the request's id).
func ocPadded(pad int, contentType, body string) ocHandler {
	return func(w http.ResponseWriter, _ *http.Request, id string, _ []byte) {
		w.Header().Set("X-Pad", strings.Repeat("p", pad))
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte(strings.ReplaceAll(body, "{{id}}", id)))
	}
}

// Row: one message larger than MaxResponseBytes, its headers counted in it,
// or headers larger than MaxResponseHeaderBytes: the tool error naming the
// limit; upstream_too_large; breaker neutral. Headers past their limit
// are not read past it: an upstream writing 9 MiB of them (under
// net/http's own limit, 10 MiB) has the connection closed on it.
func TestOutcomeHeadersTooLarge(t *testing.T) {
	t.Parallel()
	const (
		huge  = 9 << 20
		limit = 8 << 10 // MaxResponseBytes of the "counted" upstreams
	)
	var set ocSet
	written := make(chan int, 1)
	flood := newFakeUp(t, false, ocHugeHeaders(huge, written))
	o := ocOpts(flood)
	o.Prefix, o.BreakerMinCalls = "", -1
	iFlood, floodTool := set.add(o)

	// Set: headers of 20 KiB against a MaxResponseHeaderBytes of 16 KiB.
	o = ocOpts(newFakeUp(t, false, ocPadded(20<<10, "application/json", `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[]}}`)))
	o.Prefix, o.MaxResponseHeaderBytes = "", 16<<10
	iSet, setTool := set.add(o)

	// Counted: headers of 6 KiB and a message of 3 KiB, each under the
	// limit of 8 KiB, together over it.
	text := strings.Repeat("x", 3<<10)
	jsonAnswer := `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"` + text + `"}]}}`
	counted := map[string]ocHandler{
		"JSON body":    ocPadded(6<<10, "application/json", jsonAnswer),
		"event stream": ocPadded(6<<10, "text/event-stream", "data: "+jsonAnswer+"\n\n"),
	}
	type countedUp struct {
		name, tool string
		i          int
	}
	var cs []countedUp
	for _, name := range []string{"JSON body", "event stream"} {
		o := ocOpts(newFakeUp(t, false, counted[name]))
		o.Prefix, o.MaxResponseBytes = "", limit
		i, tool := set.add(o)
		cs = append(cs, countedUp{name, tool, i})
	}
	// The same answers with headers of 1 KiB are served whole.
	o = ocOpts(newFakeUp(t, false, ocPadded(1<<10, "application/json", jsonAnswer)))
	o.Prefix, o.MaxResponseBytes = "", limit
	_, underTool := set.add(o)

	measure := set.breaker(t, false, func(o *upstream.Options) { o.MaxResponseBytes = limit }, counted["JSON body"])
	g := set.start(t, nil)

	t.Run("9 MiB of headers", func(t *testing.T) {
		ocToolError(t, g.callTool(t, floodTool), "Upstream fake's answer has headers larger than 65536 bytes, the gateway's limit.")
		g.expectHop(t, iFlood, 1, "upstream_too_large")
		select {
		case n := <-written:
			if n >= 0 {
				t.Errorf("the upstream wrote all %d bytes of its headers: the gateway read them", n)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the upstream is still writing its headers: the gateway did not close the connection")
		}
	})
	t.Run("MaxResponseHeaderBytes", func(t *testing.T) {
		ocToolError(t, g.callTool(t, setTool), "Upstream fake's answer has headers larger than 16384 bytes, the gateway's limit.")
		g.expectHop(t, iSet, 1, "upstream_too_large")
	})
	for _, c := range cs {
		t.Run("counted in MaxResponseBytes: "+c.name, func(t *testing.T) {
			ocToolError(t, g.callTool(t, c.tool), "Upstream fake's answer is larger than 8192 bytes, the gateway's limit.")
			g.expectHop(t, c.i, 1, "upstream_too_large")
		})
	}
	t.Run("under the limit", func(t *testing.T) {
		ocExpectText(t, g.callTool(t, underTool), text, false)
	})
	ocExpectEffect(t, measure(t, g), ocNeutral)
}

package transport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/actors"
	"github.com/wymcp/wymcp/internal/wire"
)

// sizedReply returns a reply whose JSON-RPC envelope, with id 1, is n bytes:
// a result, or an error whose message pads it. The sizes are counted from
// the literal framing, not from envelope.len, which the test checks.
func sizedReply(t *testing.T, isError bool, n int) actors.Reply {
	t.Helper()
	if isError {
		e := wire.Errorf(wire.CodeInvalidParams, "")
		pad := n - len(`{"jsonrpc":"2.0","id":1,"error":}`) - len(wire.AppendErrorObject(nil, e))
		if pad < 0 {
			t.Fatalf("no error envelope is %d bytes", n)
		}
		e.Message = strings.Repeat("m", pad)
		return actors.Reply{Err: e}
	}
	pad := n - len(`{"jsonrpc":"2.0","id":1,"result":}`) - len(`{"t":""}`)
	if pad < 0 {
		t.Fatalf("no result envelope is %d bytes", n)
	}
	return actors.Reply{Result: []byte(`{"t":"` + strings.Repeat("r", pad) + `"}`)}
}

// TestContentLengthEqualsBody: whatever an answer's size and kind, the
// Content-Length it declares is the length of the body it sends, and the
// body is the JSON-RPC message, for every path that writes an answer: a
// JSON answer (writeAnswer), the watchdog's or the cut's late answer
// (WriteLate), and the last event of a stream (which declares none). The
// sizes are those around every buffer an answer passes through: net/http's
// chunking buffer (chunkingThreshold), its connection buffer (4 KiB) and
// their multiples.
func TestContentLengthEqualsBody(t *testing.T) {
	h := &Handler{answers: newAnswerBudget(0)}
	id := parsedID(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		n, _ := strconv.Atoi(q.Get("n"))
		reply := sizedReply(t, q.Get("kind") == "error", n)
		switch q.Get("path") {
		case "json":
			h.writeAnswer(w, http.StatusOK, replyEnvelope(id, reply))
		case "late":
			p := &responder{h: h, w: w, id: id}
			p.WriteLate(reply)
		case "sse":
			p := &responder{h: h, w: w, id: id, stream: startSSE(w, h.bounded)}
			p.answer(reply)
		}
	}))
	defer srv.Close()

	var sizes []int
	for _, b := range []int{chunkingThreshold, 4096, 2 * 4096, 64 << 10} {
		for d := -3; d <= 3; d++ {
			sizes = append(sizes, b+d)
		}
	}
	sizes = append(sizes, 200, 1<<20)
	for _, kind := range []string{"result", "error"} {
		for _, path := range []string{"json", "late", "sse"} {
			for _, n := range sizes {
				name := fmt.Sprintf("%s/%s/%d", kind, path, n)
				resp, err := http.Get(fmt.Sprintf("%s/?kind=%s&path=%s&n=%d", srv.URL, kind, path, n))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Errorf("%s: reading the body: %v (Content-Length %d, %d bytes read)", name, err, resp.ContentLength, len(body))
					continue
				}
				msg := body
				if path == "sse" {
					if resp.ContentLength != -1 {
						t.Errorf("%s: a stream declares Content-Length %d", name, resp.ContentLength)
					}
					msg = sseData(t, name, body)
				} else if resp.ContentLength != int64(len(body)) {
					t.Errorf("%s: Content-Length %d, body %d bytes", name, resp.ContentLength, len(body))
				}
				if len(msg) != n {
					t.Errorf("%s: the message is %d bytes", name, len(msg))
				}
				var m struct {
					ID     json.RawMessage `json:"id"`
					Result json.RawMessage `json:"result"`
					Error  *struct {
						Code int `json:"code"`
					} `json:"error"`
				}
				if err := json.Unmarshal(msg, &m); err != nil {
					t.Errorf("%s: the message does not parse: %v", name, err)
					continue
				}
				if string(m.ID) != "1" || (kind == "error") != (m.Error != nil && m.Error.Code == int(wire.CodeInvalidParams)) || (kind == "result") != (m.Result != nil) {
					t.Errorf("%s: not the %s with id 1: %.80s", name, kind, msg)
				}
			}
		}
	}
}

// sseData returns the data of the one event of a stream.
func sseData(t *testing.T, name string, body []byte) []byte {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(nil, 4<<20)
	var data []byte
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, d...)
		}
	}
	if !strings.HasPrefix(string(body), "event: message\ndata: ") || !strings.HasSuffix(string(body), "\n\n") {
		t.Errorf("%s: not one event: %.60q", name, body)
	}
	return data
}

// parsedID is the id 1 as the parse stage reads it.
func parsedID(t *testing.T) wire.ID {
	t.Helper()
	_, id, err := wire.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// The runnable examples of the public packages print what a server
// answered; these are the client side they share, without a testing.TB.

// ServeExample serves ts on a loopback httptest server, as the examples'
// server named "example"; stop ends both.
func ServeExample(ts ...*tools.Tool) (url string, stop func()) {
	srv, err := wymcp.New(protocol.Implementation{Name: "example", Version: "1.0.0"}, nil, ts...)
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(srv)
	return hs.URL, func() {
		hs.Close()
		_ = srv.Shutdown(context.Background())
	}
}

// CallResult sends a tools/call of name with arguments (raw JSON) to url as
// a 2026-07-28 client does, and returns what Result returns.
func CallResult(url, name, arguments string) (string, error) {
	return Result(url, ToolCall(name, arguments))
}

// Result sends r to url and returns the result object without the
// resultType and _meta every result carries, its members in sorted order,
// or the status and the whole answer when it is not a result.
func Result(url string, r RPC) (string, error) {
	req, err := r.Request(context.Background(), url)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	var answer struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &answer); err != nil || answer.Result == nil {
		return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b))), nil
	}
	delete(answer.Result, "_meta")
	delete(answer.Result, "resultType")
	out, err := json.Marshal(answer.Result)
	return string(out), err
}

// ToolNames sends a tools/list to url and returns the names of the tools
// of its first page, in the server's order, or the answer when it is not
// a list.
func ToolNames(url string) ([]string, error) {
	res, err := Result(url, Call("tools/list", ""))
	if err != nil {
		return nil, err
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(res), &list); err != nil {
		return nil, fmt.Errorf("not a list: %s", res)
	}
	names := make([]string, len(list.Tools))
	for i, t := range list.Tools {
		names[i] = t.Name
	}
	return names, nil
}

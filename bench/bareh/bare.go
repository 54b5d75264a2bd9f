// Package bareh is the bench's ceiling: a net/http handler that decodes the
// JSON-RPC body with encoding/json and writes a canned echo result. It does
// no MCP work at all; it is what one core can do for this request shape.
package bareh

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// Request is the part of a JSON-RPC request the bare handler decodes.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

var (
	head = []byte(`{"jsonrpc":"2.0","id":`)
	tail = []byte(`,"result":{"content":[{"type":"text","text":"hello"}]}}`)
)

// Handler decodes the body and answers a canned result with the request's id.
func Handler(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req Request
	if err := json.Unmarshal(body, &req); err != nil || req.Method == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	out := make([]byte, 0, len(head)+len(req.ID)+len(tail))
	out = append(append(append(out, head...), req.ID...), tail...)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	w.Write(out)
}

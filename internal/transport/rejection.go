package transport

import (
	"net/http"
	"strconv"

	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/wire"
)

// Stage names, as recorded on spans and the wymcp.rejections metric.
const (
	StageWire     = "wire"
	StageParse    = "parse"
	StageProtocol = "protocol"
	StageMethod   = "method_table"
	StageOverload = "overload"
)

// rejection is an answer given before a method runs.
type rejection struct {
	stage  string
	status int
	err    *wire.Error
	// header holds extra response headers (Allow, Retry-After…).
	header map[string]string
}

func reject(stage string, status int, err *wire.Error) *rejection {
	return &rejection{stage: stage, status: status, err: err}
}

func (r *rejection) with(key, value string) *rejection {
	if r.header == nil {
		r.header = map[string]string{}
	}
	r.header[key] = value
	return r
}

var jsonContentType = []string{"application/json"}

// writeRejection records rej, then writes it: status, headers, and the
// JSON-RPC error with id (null when the id could not be read).
func (h *Handler) writeRejection(w http.ResponseWriter, r *http.Request, op *telemetry.Op, id wire.ID, rej *rejection) {
	if op != nil {
		op.Reject(r.Context(), rej.stage, rej.status, rej.err.Code)
		op.End(r.Context(), rej.err.Code, false)
	} else {
		h.obs.Reject(r.Context(), rej.stage, rej.status, rej.err.Code)
	}
	body := wire.AppendError(make([]byte, 0, 160), id, rej.err)
	hdr := w.Header()
	for k, v := range rej.header {
		hdr.Set(k, v)
	}
	writeJSON(w, rej.status, body)
}

// writeJSON writes a complete JSON body with its length, so that no answer
// is chunked. net/http itself sets the length of a body under its 2 KiB
// chunking threshold that the handler writes at once, so only a larger one
// costs a header allocation here.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	hdr := w.Header()
	hdr["Content-Type"] = jsonContentType
	if len(body) >= 2048 {
		hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

package transport

import (
	"net/http"

	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/wire"
)

// Stage names, as recorded on spans and the wymcp.rejections metric.
const (
	StageWire     = "wire"
	StageParse    = "parse"
	StageAuth     = "auth"
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

// writeRejection records rej, then writes it: status, headers, and the
// JSON-RPC error with id (null when the id could not be read).
func (h *Handler) writeRejection(w http.ResponseWriter, r *http.Request, op *telemetry.Op, id wire.ID, rej *rejection) {
	if op != nil {
		op.Reject(r.Context(), rej.stage, rej.status, rej.err.Code)
		op.End(r.Context(), rej.err.Code, false)
	} else {
		h.obs.Reject(r.Context(), rej.stage, rej.status, rej.err.Code)
	}
	hdr := w.Header()
	for k, v := range rej.header {
		hdr.Set(k, v)
	}
	h.writeJSON(w, rej.status, errorEnvelope(id, rej.err))
}

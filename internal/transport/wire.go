package transport

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/wymcp/wymcp/internal/wire"
)

var (
	errWire = func(msg string) *wire.Error { return wire.Errorf(wire.CodeInvalidRequest, msg) }

	rejMethod      = reject(StageWire, http.StatusMethodNotAllowed, errWire("Method not allowed: the MCP endpoint accepts POST")).with("Allow", "POST")
	rejOrigin      = reject(StageWire, http.StatusForbidden, errWire("Forbidden: Origin not allowed"))
	rejOrigins     = reject(StageWire, http.StatusForbidden, errWire("Forbidden: more than one Origin header"))
	rejHost        = reject(StageWire, http.StatusForbidden, errWire("Forbidden: Host not allowed"))
	rejContentType = reject(StageWire, http.StatusUnsupportedMediaType, errWire("Unsupported Media Type: Content-Type must be application/json"))
	rejAccept      = reject(StageWire, http.StatusNotAcceptable, errWire("Not Acceptable: Accept must admit application/json or text/event-stream"))
	rejTooLarge    = reject(StageWire, http.StatusRequestEntityTooLarge, errWire("Request Entity Too Large"))
)

// checkWire is stage 1: verb, Origin and Host, Content-Type, Accept.
func (h *Handler) checkWire(r *http.Request) *rejection {
	if r.Method != http.MethodPost {
		return rejMethod
	}
	if origins := r.Header["Origin"]; len(origins) > 0 {
		// A browser sends one Origin. Two are forged, and a check of one of
		// them could pass what a proxy or a framework reading the other
		// would not: refused, as a parser differential is (docs/design.md §5).
		if len(origins) > 1 {
			return rejOrigins
		}
		if origins[0] != "" && !h.originAllowed(origins[0]) {
			return rejOrigin
		}
	}
	if !h.hostAllowed(r) {
		return rejHost
	}
	if !isJSONContentType(first(r.Header["Content-Type"])) {
		return rejContentType
	}
	if accept := r.Header["Accept"]; len(accept) > 0 && !acceptsAnswer(accept) {
		return rejAccept
	}
	if r.ContentLength > h.maxBody {
		return rejTooLarge
	}
	return nil
}

// first is the first value of a header, "" when it has none: http.Header's
// Get, for a key already in canonical form. The request path reads its
// headers this way, by the map's own keys, because Get and Values
// canonicalize their key on every call, the largest share of the header
// checks' instructions (bench/footprint.sh).
func first(values []string) string {
	if len(values) == 0 {
		return ""
	}
	return values[0]
}

// originAllowed: a browser page may call the server only from an allowed
// origin; a localhost page may always call it (it runs on the same machine
// as a local server). The spec's MUST against DNS rebinding.
func (h *Handler) originAllowed(origin string) bool {
	if h.origins[origin] {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return isLoopbackName(u.Hostname())
}

// hostAllowed: when the request arrived on a loopback address, its Host must
// name the loopback too (or be allowed explicitly). A DNS-rebinding page
// reaches a local server with its own host name in Host; nothing else does.
// Servers on other addresses accept any Host unless AllowedHosts is set.
func (h *Handler) hostAllowed(r *http.Request) bool {
	host := r.Host
	if len(h.hosts) > 0 {
		if h.hosts[host] || h.hosts[hostname(host)] {
			return true
		}
	}
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
			return isLoopbackName(hostname(host))
		}
	}
	return len(h.hosts) == 0
}

func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func isLoopbackName(name string) bool {
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

func isJSONContentType(v string) bool {
	if v == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && mt == "application/json"
}

// answerTypes are the media ranges that admit a JSON or an SSE answer;
// streamTypes, the one that admits a progress stream.
var (
	answerTypes = []string{"application/json", "text/event-stream", "*/*", "application/*", "text/*"}
	streamTypes = []string{"text/event-stream"}
)

// acceptBoth is the Accept header clients send as the transport asks them
// to, listing both forms of an answer, as the conformance suite and the
// TypeScript SDK send it.
const acceptBoth = "application/json, text/event-stream"

// acceptsAnswer reports whether an Accept header admits either form of an
// answer. Clients must list both; we only refuse one that admits neither,
// since a JSON-only client can still be answered in JSON.
func acceptsAnswer(values []string) bool { return accepts(values, answerTypes) }

// accepts reports whether an Accept header lists one of types (media types
// compared without case, parameters ignored). Every list it is given
// includes text/event-stream, so the header as nearly every client sends
// it, acceptBoth, is told by one comparison: splitting and folding it ran
// through more code a request than the rest of the wire stage
// (bench/footprint.sh; bench/README.md has the count).
func accepts(values, types []string) bool {
	if len(values) == 1 && values[0] == acceptBoth {
		return true
	}
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			mt = strings.TrimSpace(mt)
			for _, ok := range types {
				if strings.EqualFold(mt, ok) {
					return true
				}
			}
		}
	}
	return false
}

package upstream

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
)

// remote is one upstream tool as the gateway forwards it.
type remote struct {
	// name is the upstream's name, quoted its JSON string: what the
	// upstream is called with.
	name   string
	quoted []byte
	// served is the name the gateway serves it under (a prefix added, or
	// an override's): what its spans, metrics and logs name, as the
	// client called it.
	served string
	// header is the Mcp-Name header's value.
	header []string
	// headers are its x-mcp-header declarations: a 2026-07-28 upstream
	// requires their Mcp-Param-* headers.
	headers []wire.HeaderParam
	// idempotent: its annotations say it may be called twice.
	idempotent bool
}

// forward returns the Forward of the upstream tool r.
func (c *client) forward(r *remote) toolrun.Forward {
	return func(ctx context.Context, f toolrun.Forwarding) toolrun.Forwarded {
		return c.forwardCall(ctx, r, f)
	}
}

// forwardCall forwards one call (docs/design.md §10a is the table of its
// answers).
func (c *client) forwardCall(ctx context.Context, r *remote, f toolrun.Forwarding) toolrun.Forwarded {
	if f.State != "" {
		var ours bool
		if f.State, ours = strings.CutPrefix(f.State, c.stateTag()); !ours {
			return toolrun.Forwarded{Refusal: errForeignState}
		}
	}
	ctx, hop := c.hops.Start(ctx, wire.MethodToolsCall, r.served, c.version)
	hop.SetUpstreamTool(r.name)
	refuse := func(f *failure) toolrun.Forwarded {
		out := c.failed(f)
		c.report(ctx, r.served, f.errorType(), f)
		hop.End(ctx, f.errorType(), "", out.Failure)
		return out
	}
	if c.closed.Load() {
		return refuse(&failure{kind: kindClosed})
	}
	ok, wait := c.breaker.allow(time.Now())
	if !ok {
		return refuse(&failure{kind: kindUnavailable, detail: wait.Round(time.Millisecond).String()})
	}
	who := callerKey(ctx)
	if ok, share := c.slots.take(who); !ok {
		if share {
			return refuse(&failure{kind: kindShare, detail: strconv.Itoa(c.slots.held(who))})
		}
		return refuse(&failure{kind: kindBusy})
	}
	defer c.slots.put(who)
	c.retry.called()

	// With PerCaller, a 2025-era upstream's call goes in its caller's own
	// session (sessions_callers.go); err, its failure, is the call's.
	ctx, release, err := c.callerSession(ctx)
	defer release()

	id := c.ids.Add(1)
	hop.SetRequestID(id)
	var progress int64
	if toolrun.WantsProgress(ctx) {
		progress = id
	}
	tp, ts := hop.TraceContext(ctx)
	req := &request{
		id:       id,
		method:   wire.MethodToolsCall,
		name:     r.header,
		body:     c.callBody(id, r, f, progress, tp, ts),
		trace:    [2]string{tp, ts},
		during:   (*client).during,
		ctx:      ctx,
		progress: progress,
	}
	if !c.legacy {
		req.params = paramHeaders(r.headers, f.Arguments)
	}
	var m message
	if err == nil {
		m, err = c.call(ctx, req)
		if err != nil && r.idempotent && c.retryAgain(ctx, r.served, err) {
			// The tool may be run twice: the operator allowed it for
			// tools whose annotations say so, and the budget has room.
			// The retry is a request of its own, with its own id: a
			// 2025-era session forbids reusing one, and the first try
			// may still run there.
			id = c.ids.Add(1)
			hop.SetRequestID(id)
			if progress != 0 {
				progress, req.progress = id, id
			}
			req.id, req.body = id, c.callBody(id, r, f, progress, tp, ts)
			m, err = c.call(ctx, req)
		}
		if err != nil && ctx.Err() != nil && c.legacy && c.stdio == nil {
			// A 2025-era upstream does not take a closed stream for a
			// cancellation (its transport says so): it is told, in the
			// session the request ran in. (A child on stdio is told by
			// its conn, which knows the child: stdio.go.)
			go c.cancelled(ctx.Value(sessionKey{}), id, ctx.Err())
		}
	}
	out, errorType, rpcCode, health, why := c.outcome(ctx, m, err)
	if why != nil {
		c.report(ctx, r.served, errorType, why)
	}
	if health != neutral {
		c.breaker.record(health == failing, who, time.Now())
	}
	hop.End(ctx, errorType, rpcCode, out.Failure)
	if out.Inputs != nil {
		out.State = c.stateTag() + out.State
	}
	return out
}

// errForeignState answers a retry whose carried state another upstream
// made: as the server answers a state that does not open.
var errForeignState = wire.Errorf(wire.CodeInvalidParams, "Invalid params: requestState is invalid or has expired")

// stateTag goes before the upstream's requestState in the gateway's
// sealed one. The seal binds the state to the served name only, and by
// the next round another upstream may serve that name (a reload, or an
// upstream earlier in the order connecting late): that upstream must not
// be sent this one's state (docs/design.md §10a).
func (c *client) stateTag() string { return c.name + "\x00" + c.url + "\x00" }

// retryAgain reports whether a call that failed with err (not nil), which
// may have reached the upstream, is made again, and if so takes the retry
// from the budget.
func (c *client) retryAgain(ctx context.Context, tool string, err error) bool {
	var f *failure
	if ctx.Err() != nil || !errors.As(err, &f) || !f.retryable() || !c.retry.take() {
		return false
	}
	c.fails.Retried(ctx, tool, f.errorType())
	return true
}

// callerKey is who a call is for, to share an upstream fairly: the
// caller's identity, or without auth its address; "" when neither is
// known. An IPv6 address is taken by its /64: a host holds a whole one,
// and could otherwise pose as any number of callers, each with its own
// share and each another caller to the breaker (docs/design.md §10b).
func callerKey(ctx context.Context) string {
	if s := caller.Subject(ctx); s != "" {
		return s
	}
	a := caller.Address(ctx)
	if ip, err := netip.ParseAddr(a); err == nil && ip.Is6() && !ip.Is4In6() {
		p, _ := ip.WithZone("").Prefix(64)
		return p.String()
	}
	return a
}

// cancelled tells a 2025-era upstream that the gateway gave up request
// id (notifications/cancelled), on a context of its own: the call's has
// ended. Best effort: the upstream's answer, if it comes, is not read.
func (c *client) cancelled(session any, id int64, why error) {
	ctx, cancel := context.WithTimeout(own(context.Background()), c.connectTimeout)
	if session != nil {
		// The request ran in its caller's own session: it is cancelled
		// there.
		ctx = context.WithValue(ctx, sessionKey{}, session)
	}
	defer cancel()
	_ = c.post(ctx, "", cancelBody(id, why))
}

// cancelBody is the notifications/cancelled of request id.
func cancelBody(id int64, why error) []byte {
	body := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`)
	body = strconv.AppendInt(body, id, 10)
	reason := "the client went away"
	if errors.Is(why, context.DeadlineExceeded) {
		reason = "the call's deadline passed"
	}
	body = append(body, `,"reason":`...)
	body = wire.AppendString(body, reason)
	return append(body, "}}"...)
}

// callBody encodes the tools/call request: the arguments, the retry's
// inputResponses and the upstream's requestState as the client and the
// upstream gave them, appended, not encoded again.
func (c *client) callBody(id int64, r *remote, f toolrun.Forwarding, progress int64, tp, ts string) []byte {
	body := make([]byte, 0, 384+len(r.quoted)+len(f.Arguments)+len(f.Responses)+len(f.State)+len(f.Capabilities))
	body = c.appendHead(body, id, wire.MethodToolsCall)
	body = append(body, `,"params":{"name":`...)
	body = append(body, r.quoted...)
	body = append(body, `,"arguments":`...)
	body = append(body, f.Arguments...)
	if !c.legacy {
		if f.Responses != nil {
			body = append(body, `,"inputResponses":`...)
			body = append(body, f.Responses...)
		}
		if f.State != "" {
			body = append(body, `,"requestState":`...)
			body = wire.AppendString(body, f.State)
		}
	}
	body = append(body, `,"_meta":`...)
	body = c.appendMeta(body, f.Capabilities, progress, tp, ts)
	return append(body, "}}"...)
}

// health is what an outcome says of the upstream, for its breaker.
type health uint8

const (
	neutral health = iota // the client went away; the gateway refused
	healthy
	failing
)

// outcome is the downstream answer to the upstream's answer m, or to err:
// docs/design.md §10a, row by row. why is the failure to report (report),
// nil when the upstream answered or the client went away.
func (c *client) outcome(ctx context.Context, m message, err error) (out toolrun.Forwarded, errorType, rpcCode string, h health, why error) {
	if err != nil {
		var f *failure
		if !errors.As(err, &f) {
			// ctx ended: the server answers with its deadline or
			// cancellation outcome.
			if ctx.Err() == context.DeadlineExceeded {
				return toolrun.Forwarded{Failure: "timed out"}, "timeout", "", neutral, ctx.Err()
			}
			return toolrun.Forwarded{Failure: "request cancelled"}, "cancelled", "", neutral, nil
		}
		if f.upstreamFault() {
			h = failing
		}
		out = c.failed(f)
		return out, f.errorType(), "", h, f
	}
	if m.err != nil {
		code := strconv.FormatInt(m.err.code, 10)
		switch wire.Code(m.err.code) {
		case wire.CodeInvalidParams, wire.CodeMissingRequiredClientCapability:
			// The upstream judged the client's request (its arguments,
			// its answers, its requestState, its capabilities): the
			// client can act on that error as if it had called the
			// upstream directly.
			e := wire.Errorf(wire.Code(m.err.code), truncate(m.err.message, maxMessage))
			if m.err.data != nil {
				e = e.WithData(m.err.data)
			}
			return toolrun.Forwarded{Refusal: e}, code, code, healthy, nil
		}
		text := fmt.Sprintf("Upstream %s failed the call with JSON-RPC error %d: %s", c.name, m.err.code, truncate(m.err.message, maxMessage))
		return toolrun.Forwarded{Failure: text}, code, code, healthy, nil
	}
	res, perr := wire.ParseUpstreamResult(m.result)
	if perr == nil && res.InputRequired {
		perr = c.checkInputs(res.Inputs, res.State)
	}
	if perr != nil {
		f := &failure{kind: kindMalformed, detail: perr.Error()}
		return c.failed(f), f.errorType(), "", failing, f
	}
	if res.InputRequired {
		if res.Inputs == nil {
			res.Inputs = []wire.InputRequest{}
		}
		inputs := make([]toolrun.InputRequest, len(res.Inputs))
		for i, in := range res.Inputs {
			inputs[i] = toolrun.InputRequest{Key: in.Key, Method: in.Method, Capability: toolrun.CapabilityOf(in.Method), Params: in.Params}
		}
		return toolrun.Forwarded{Inputs: inputs, State: res.State}, "", "", healthy, nil
	}
	if res.IsError {
		errorType = "tool_error"
	}
	return toolrun.Forwarded{Result: m.result, IsError: res.IsError}, errorType, "", healthy, nil
}

// maxUpstreamState bounds the requestState of an upstream's input_required
// (docs/design.md §10a): it travels sealed in the gateway's own, which
// the client holds and sends back with its retry, a third larger
// (base64) and bound by the server's request body limit. An upstream's
// state is a small token, or the small state of a stateless server; what
// is larger would have the gateway send megabytes to the client for the
// upstream.
const maxUpstreamState = 64 << 10

// checkInputs refuses an input_required result the gateway cannot pass
// on: from a 2025-era upstream (its revision has none), asking for an
// input no revision of the client's knows, or with a requestState past
// maxUpstreamState.
func (c *client) checkInputs(inputs []wire.InputRequest, state string) error {
	if c.legacy {
		return errors.New("a 2025-era upstream answered input_required")
	}
	if len(state) > maxUpstreamState {
		return fmt.Errorf("its requestState is %d bytes, more than the gateway's limit of %d", len(state), maxUpstreamState)
	}
	for _, in := range inputs {
		if toolrun.CapabilityOf(in.Method) == "" {
			return fmt.Errorf("inputRequests[%q] asks for %q, which is not an input request", in.Key, in.Method)
		}
	}
	return nil
}

// maxMessage bounds the upstream text an answer quotes.
const maxMessage = 512

// failed words f for the model: the text of an isError result.
func (c *client) failed(f *failure) toolrun.Forwarded {
	var text string
	switch f.kind {
	case kindUnreachable:
		text = "Upstream " + c.name + " is unreachable."
	case kindStatus:
		text = fmt.Sprintf("Upstream %s answered HTTP %d.", c.name, f.status)
	case kindMalformed:
		text = fmt.Sprintf("Upstream %s sent an answer the gateway cannot read: %s.", c.name, truncate(f.detail, maxMessage))
	case kindTooLarge:
		text = fmt.Sprintf("Upstream %s's answer is larger than %d bytes, the gateway's limit.", c.name, c.maxBytes)
	case kindHeadersTooLarge:
		text = fmt.Sprintf("Upstream %s's answer has headers larger than %d bytes, the gateway's limit.", c.name, c.maxHeader)
	case kindRefusedCreds:
		text = "Upstream " + c.name + " refused the gateway's credentials (HTTP 401)."
	case kindCredentials:
		text = "The gateway could not get credentials for upstream " + c.name + "."
		var net *url.Error
		switch {
		case errors.As(f.err, &net):
			// Where the token endpoint is, and how reaching it failed, is
			// the operator's to read in the log, not the model's.
			text = "The gateway could not get credentials for upstream " + c.name + ": its token endpoint is unreachable."
		case f.err != nil:
			text = fmt.Sprintf("The gateway could not get credentials for upstream %s: %s.", c.name, truncate(strings.TrimPrefix(f.err.Error(), "upstream: "), maxMessage))
		}
	case kindSessionLost:
		text = "Upstream " + c.name + " lost its session, and a new one could not be made."
	case kindUnavailable:
		text = fmt.Sprintf("Upstream %s is unavailable; the gateway will try it again in %s.", c.name, f.detail)
	case kindBusy:
		text = fmt.Sprintf("Upstream %s has %d calls in progress, its limit; retry later.", c.name, c.slots.size)
	case kindShare:
		text = fmt.Sprintf("Upstream %s is busy, and %s of its calls in progress are this caller's, more than its fair share; retry later.", c.name, f.detail)
	case kindClosed:
		text = "Upstream " + c.name + " is closed."
	case kindCallers:
		what := "runs a process"
		if c.stdio == nil {
			what = "keeps a session"
		}
		text = fmt.Sprintf("Upstream %s %s for each of %s callers, its limit, and each has a call in progress; retry later.", c.name, what, f.detail)
	case kindExited:
		text = "Upstream " + c.name + " stopped before it answered (its process ended or stopped answering); the gateway is restarting it."
	}
	return toolrun.Forwarded{Failure: text}
}

// report records a failed call of the upstream's tool (docs/telemetry.md):
// counted by its error.type, and logged, throttled per error.type. why is
// the *failure, or the context's error of a call past its deadline.
func (c *client) report(ctx context.Context, tool, errorType string, why error) {
	fl := telemetry.UpstreamFailure{Tool: tool, ErrorType: errorType}
	var f *failure
	switch {
	case !errors.As(why, &f):
		fl.Detail = "no answer within the call's deadline"
	case f.err != nil:
		fl.Detail = f.err.Error()
	case f.kind == kindTooLarge:
		fl.Detail = fmt.Sprintf("an answer larger than %d bytes", c.maxBytes)
	case f.kind == kindUnavailable:
		fl.Detail = "the circuit is open; the next try in " + f.detail
	case f.kind == kindBusy:
		fl.Detail = fmt.Sprintf("MaxInFlight (%d) calls in progress", c.slots.size)
	default:
		fl.Detail = f.detail
	}
	if f != nil {
		fl.Status = f.status
	}
	fl.Detail = truncate(fl.Detail, maxMessage)
	c.fails.Record(ctx, fl)
}

// during handles a message the upstream sends on a call's stream before
// its answer: progress goes to the client as it comes, and a 2025-era
// upstream's requests are answered (docs/design.md §10a).
func (c *client) during(ctx context.Context, m message, progress int64) error {
	if m.id == nil {
		if m.method == "notifications/progress" && progress != 0 {
			c.relayProgress(ctx, m.params, progress)
		}
		return nil // other notifications (logging) are not the client's to see
	}
	body := c.answerUpstream(ctx, m)
	if err := c.post(ctx, "", body); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &failure{kind: kindUnreachable, err: fmt.Errorf("answering the upstream's %s: %w", m.method, err)}
	}
	return nil
}

// relayProgress passes one notifications/progress of the call with the
// gateway's token to the client. A notification that does not read is
// dropped: progress is advisory, and the call goes on.
func (c *client) relayProgress(ctx context.Context, params wire.RawJSON, token int64) {
	t, _ := strictjson.Member(params, "progressToken")
	if !sameID(t, token) {
		return
	}
	p, _ := strictjson.Member(params, "progress")
	value, err := strconv.ParseFloat(string(p), 64)
	if err != nil {
		return
	}
	var total *float64
	if raw, ok := strictjson.Member(params, "total"); ok {
		v, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return
		}
		total = &v
	}
	var text string
	if raw, ok := strictjson.Member(params, "message"); ok {
		if text, ok = strictjson.Unquote(raw); !ok {
			return
		}
	}
	toolrun.ReportProgress(ctx, value, total, truncate(text, maxMessage))
}

// answerUpstream returns the gateway's response to a request a 2025-era
// upstream sent during a call. An input request is relayed to the client
// when the client can be asked on the call's stream (a 2025-era client
// whose request accepts one); otherwise it is declined: an elicitation
// with the decline action, others with -32601. A ping is answered, and
// every other method is -32601. The upstream never waits for an answer
// that will not come.
func (c *client) answerUpstream(ctx context.Context, m message) []byte {
	body := append([]byte(`{"jsonrpc":"2.0","id":`), m.id...)
	switch m.method {
	case wire.MethodPing:
		return append(body, `,"result":{}}`...)
	case wire.MethodElicit, wire.MethodSample, wire.MethodListRoots:
		if ask := toolrun.ClientAsker(ctx); ask != nil {
			params := m.params
			if params == nil {
				params = wire.RawJSON("{}")
			}
			res, err := ask(ctx, m.method, params)
			if err == nil {
				body = append(body, `,"result":`...)
				body = append(body, res...)
				return append(body, '}')
			}
			return appendRPCError(body, wire.CodeInternalError, "The client did not answer: "+err.Error())
		}
		if m.method == wire.MethodElicit {
			return append(body, `,"result":{"action":"decline"}}`...)
		}
		return appendRPCError(body, wire.CodeMethodNotFound, "The gateway's client cannot be asked "+m.method+" during this call")
	}
	return appendRPCError(body, wire.CodeMethodNotFound, "Method not found")
}

func appendRPCError(body []byte, code wire.Code, msg string) []byte {
	body = append(body, `,"error":{"code":`...)
	body = strconv.AppendInt(body, int64(code), 10)
	body = append(body, `,"message":`...)
	body = wire.AppendString(body, msg)
	return append(body, "}}"...)
}

// paramHeaders returns the Mcp-Param-* headers a 2026-07-28 upstream
// requires of a call of a tool with x-mcp-header declarations, name and
// value, from the arguments: an argument that is absent or null has none.
func paramHeaders(params []wire.HeaderParam, args wire.RawJSON) []string {
	if len(params) == 0 {
		return nil
	}
	out := make([]string, 0, 2*len(params))
	for _, p := range params {
		v := args
		ok := true
		for _, key := range p.Path {
			if v, ok = strictjson.Member(v, key); !ok {
				break
			}
		}
		if !ok || string(v) == "null" {
			continue
		}
		var value string
		switch {
		case v[0] == '"':
			s, ok := strictjson.Unquote(v)
			if !ok {
				continue
			}
			value = headerValue(s)
		case p.Type == "integer" && isNumber(v):
			// SEP-2243: an integer's header is its decimal value, whatever
			// JSON text (1e2, 100.0) the client wrote it as.
			value = decimal(v)
		default:
			// A boolean is its literal; anything else (an array or object
			// a 2025-era client sent, which no header check stopped) is
			// JSON text that may hold line breaks: the sentinel form, so
			// that the header is always one net/http sends, and the
			// upstream judges the value.
			value = headerValue(string(v))
		}
		out = append(out, p.Name, value)
	}
	return out
}

// isNumber reports whether v is a JSON number.
func isNumber(v []byte) bool { return v[0] == '-' || ('0' <= v[0] && v[0] <= '9') }

// decimal returns the JSON number v as a decimal integer when it is one
// that float64 holds exactly, otherwise as written.
func decimal(v []byte) string {
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return string(v)
	}
	return strconv.FormatInt(int64(f), 10)
}

// headerValue returns s as a header value: as it is when it is visible
// ASCII with no white space at its ends, otherwise in the sentinel form
// =?base64?…?= that SEP-2243 defines for any other string.
func headerValue(s string) string {
	plain := s != "" && s[0] != ' ' && s[len(s)-1] != ' ' && s[0] != '\t' && s[len(s)-1] != '\t'
	for i := 0; plain && i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			plain = false
		}
	}
	if plain && !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")) {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// The hop recorder is created with the client (newClient).
func newHops(o Options, c *client) *telemetry.Hops {
	return telemetry.NewHops(o.TracerProvider, o.MeterProvider, c.addr, c.port)
}

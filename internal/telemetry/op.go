package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/wymcp/wymcp/internal/wire"
)

// Op is the record of one message: its span, and what its answer was.
//
// The request goroutine calls Start, SetTool, Reject and End; Fault may be
// called from the actor that answers (the supervisor's strategy, the tool
// runner). Fault must happen before the answer is handed to the request
// goroutine: a span takes no events once End has run.
type Op struct {
	o          *Observer
	span       trace.Span
	method     string
	tool       string
	unknown    bool // tool is not one the server serves
	version    string
	netVersion string
	timed      bool
	start      time.Time
	// inputRequired: the answer is an input_required result.
	inputRequired bool

	mu    sync.Mutex
	ended bool
}

// Span returns the message's span (a no-op span when tracing is off).
func (op *Op) Span() trace.Span { return op.span }

// SetTool names the tool of a tools/call: the span becomes
// "tools/call <name>" and carries gen_ai.tool.name and
// gen_ai.operation.name=execute_tool. Call it only with the name of a tool
// the server serves; see SetUnknownTool.
func (op *Op) SetTool(name string) {
	op.tool = name
	if op.span.IsRecording() {
		op.span.SetName(spanMethod(op.method) + " " + name)
		op.span.SetAttributes(
			attribute.String(keyToolName, name),
			attribute.String(keyOperationName, "execute_tool"))
	}
}

// SetUnknownTool records the name a tools/call asked for when the server has
// no such tool. The span keeps its name ("tools/call") and the metrics say
// "_OTHER": the name is the client's choice, and naming spans after it would
// let any client mint unbounded span names and metric series.
func (op *Op) SetUnknownTool(name string) {
	op.tool, op.unknown = name, true
	if op.span.IsRecording() {
		op.span.SetAttributes(
			attribute.String(keyToolName, truncate(name)),
			attribute.String(keyOperationName, "execute_tool"))
	}
}

// SetCall names the multi-round-trip call (SEP-2322) this message is a
// round of: wymcp.call.id, the random id the call's requestState carries
// sealed from its first round (never the state itself, which is the
// client's to hold), and wymcp.call.round, 1 for the first round. Every
// round of one call is its own span; the id joins them. The method calls it,
// possibly on another goroutine than the request's: it only sets span
// attributes, which the span serializes (and ignores once it has ended).
func (op *Op) SetCall(id string, round int) {
	if op.span.IsRecording() {
		op.span.SetAttributes(
			attribute.String(keyCallID, truncate(id)),
			attribute.Int(keyCallRound, round))
	}
}

// InputRequired records that the answer is an input_required result:
// wymcp.result.type="input_required" on the span and on
// mcp.server.operation.duration. Such a round did not fail — the call goes
// on in the client's retry — so it sets no error.type and leaves the span
// status unset; the attribute keeps its durations apart from those of
// completed calls. Call it on the request goroutine, before End.
func (op *Op) InputRequired() { op.inputRequired = true }

// Reject records a rejection on the span and the rejections counter:
// stage names the request-path stage that answered (docs/design.md §3).
func (op *Op) Reject(ctx context.Context, stage string, status int, code wire.Code) {
	op.o.Reject(ctx, stage, status, code)
	if op.span.IsRecording() {
		op.span.SetAttributes(
			attribute.String(keyRejectionStage, stage),
			attribute.Int(keyHTTPStatus, status))
	}
}

// Fault records a contained fault: an "exception" event with the crash
// reason's type, message and full stack (not the SDK's 2 KB capture), span
// status Error, and a slog record at Error carrying the same fields with
// the trace and span ids. where names the containment ("supervisor",
// "tool", "authenticator"); stack is the stack taken inside the recover.
//
// Every span gets its event, but the log is throttled per containment
// (Limiter): a panic on every request must not turn each into kilobytes of
// log. The first fault of an interval is logged whole, stack included; the
// ones after it within the interval are counted and not logged, and the
// next record logged carries their number as "suppressed". Their stacks
// are on their spans.
func (op *Op) Fault(ctx context.Context, where string, reason any, stack []byte) {
	op.fault(ctx, where, reason, stack, time.Now())
}

// fault is Fault at the time at.
func (op *Op) fault(ctx context.Context, where string, reason any, stack []byte, at time.Time) {
	typ, msg := describe(reason)
	st := string(stack)
	sc := op.span.SpanContext()
	if op.span.IsRecording() {
		op.span.AddEvent("exception", trace.WithAttributes(
			attribute.String("exception.type", typ),
			attribute.String("exception.message", msg),
			attribute.String("exception.stacktrace", st),
			attribute.String(keyContainment, where)))
		op.span.SetStatus(codes.Error, msg)
	}
	ok, suppressed := op.o.faultLog.of(where).Allow(at)
	if !ok {
		return
	}
	attrs := make([]slog.Attr, 0, 9)
	attrs = append(attrs,
		slog.String("containment", where),
		slog.String(keyMethodName, truncate(op.method)))
	if op.tool != "" {
		attrs = append(attrs, slog.String(keyToolName, truncate(op.tool)))
	}
	attrs = append(attrs,
		slog.String("exception.type", typ),
		slog.String("exception.message", msg),
		slog.String("exception.stacktrace", st))
	if suppressed > 0 {
		attrs = append(attrs, slog.Int64("suppressed", suppressed))
	}
	if sc.IsValid() {
		attrs = append(attrs,
			slog.String("trace_id", sc.TraceID().String()),
			slog.String("span_id", sc.SpanID().String()))
	}
	op.o.logger.LogAttrs(ctx, slog.LevelError, "wymcp: contained fault", attrs...)
}

// faultLogs throttles the log of contained faults, a Limiter per
// containment ("supervisor", "tool", "authenticator"; any other where
// shares "other"), so that a storm of one kind (a tool that panics on
// every call) does not hide the first fault of another (the supervisor's).
type faultLogs map[string]*Limiter

// newFaultLogs returns the fault logs' limiters, each reporting to logger
// the faults it held back that no later record reported (each span has
// them all).
func newFaultLogs(logger *slog.Logger) faultLogs {
	f := faultLogs{}
	for _, where := range []string{"supervisor", "tool", "authenticator", "other"} {
		l := &Limiter{}
		if logger != nil {
			l.Report = func(n int64) {
				logger.LogAttrs(context.Background(), slog.LevelError, "wymcp: contained faults not logged",
					slog.String("containment", where), slog.Int64("suppressed", n))
			}
		}
		f[where] = l
	}
	return f
}

// of returns the Limiter of the containment where.
func (f faultLogs) of(where string) *Limiter {
	if l, ok := f[where]; ok {
		return l
	}
	return f["other"]
}

// End closes the span with the answer: code is the JSON-RPC error code (0
// for a result), toolError marks an isError result. error.type is set, and
// the status is Error, iff the operation failed; the status description is
// the error's fixed wire message. End also records
// mcp.server.operation.duration. It is idempotent.
func (op *Op) End(ctx context.Context, code wire.Code, toolError bool) {
	op.mu.Lock()
	if op.ended {
		op.mu.Unlock()
		return
	}
	op.ended = true
	op.mu.Unlock()

	var errType, status string
	switch {
	case code != 0:
		errType, status = code.String(), code.Message()
	case toolError:
		errType, status = "tool_error", "tool_error"
	}
	if op.span.IsRecording() {
		if code != 0 {
			op.span.SetAttributes(attribute.String(keyRPCStatusCode, errType))
		}
		if op.inputRequired {
			op.span.SetAttributes(attribute.String(keyResultType, resultInputRequired))
		}
		if errType != "" {
			op.span.SetAttributes(attribute.String(keyErrorType, errType))
			op.span.SetStatus(codes.Error, status)
		}
	}
	op.span.End()

	if !op.timed {
		return
	}
	elapsed := time.Since(op.start).Seconds()
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs,
		attribute.String(keyMethodName, spanMethod(op.method)),
		attribute.String(keyNetTransport, "tcp"),
		attribute.String(keyNetProtoName, "http"),
		attribute.String(keyNetProtoVersion, op.netVersion))
	if op.version != "" {
		v := op.version
		if v != wire.Version && !op.o.versions.IsLegacy(v) {
			v = otherValue
		}
		attrs = append(attrs, attribute.String(keyProtocolVersion, v))
	}
	if op.tool != "" {
		tool := op.tool
		if op.unknown {
			tool = otherValue
		}
		attrs = append(attrs,
			attribute.String(keyToolName, tool),
			attribute.String(keyOperationName, "execute_tool"))
	}
	if errType != "" {
		attrs = append(attrs, attribute.String(keyErrorType, errType))
	}
	if code != 0 {
		attrs = append(attrs, attribute.String(keyRPCStatusCode, errType))
	}
	if op.inputRequired {
		attrs = append(attrs, attribute.String(keyResultType, resultInputRequired))
	}
	op.o.duration.Record(ctx, elapsed, metric.WithAttributes(attrs...))
}

// describe returns the type and message of a crash reason (a panic value).
func describe(reason any) (typ, msg string) {
	if err, ok := reason.(error); ok {
		return typeName(err), err.Error()
	}
	return typeName(reason), fmt.Sprint(reason)
}

// typeName is the crash reason's Go type, package-qualified
// ("*errors.errorString", "runtime.boundsError", "string").
func typeName(v any) string {
	if v == nil {
		return "<nil>"
	}
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Pointer && t.Name() == "" && t.Elem().PkgPath() != "" {
		return "*" + t.Elem().PkgPath() + "." + t.Elem().Name()
	}
	if t.PkgPath() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

// SetSubject puts the authenticated caller's subject on the span as
// enduser.id. The auth stage calls it only when the embedder opted in
// (wymcp.AuthOptions.RecordSubject): by default no span names a person.
func (op *Op) SetSubject(subject string) {
	if subject != "" && op.span.IsRecording() {
		op.span.SetAttributes(attribute.String(keyEnduserID, truncate(subject)))
	}
}

// SetAuthRefusal names on the span why the auth stage refused the request
// (an RFC 6750 error code such as "invalid_token", or "no_token",
// "unavailable"). The refusal's cause is not recorded: it may quote the
// token.
func (op *Op) SetAuthRefusal(kind string) {
	if op.span.IsRecording() {
		op.span.SetAttributes(attribute.String(keyAuthRefusal, kind))
	}
}

// Unavailable records that a dependency the request needed could not be
// reached (where names it: "authenticator"): an event on the span with the
// error, and a slog record at Error with the trace and span ids, throttled
// as Fault's are (an outage must not flood the log): the first of an
// interval is written, the others counted and reported as "suppressed".
func (op *Op) Unavailable(ctx context.Context, where string, err error) {
	msg := "<nil>"
	if err != nil {
		msg = err.Error()
	}
	if op.span.IsRecording() {
		op.span.AddEvent("dependency unavailable", trace.WithAttributes(
			attribute.String(keyContainment, where),
			attribute.String("exception.message", msg)))
	}
	if op.o.logger == nil {
		return
	}
	ok, suppressed := op.o.unavailableLog.Allow(time.Now())
	if !ok {
		return
	}
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs,
		slog.String("where", where),
		slog.String(keyMethodName, truncate(op.method)),
		slog.String("error", msg))
	if suppressed > 0 {
		attrs = append(attrs, slog.Int64("suppressed", suppressed))
	}
	if sc := op.span.SpanContext(); sc.IsValid() {
		attrs = append(attrs,
			slog.String("trace_id", sc.TraceID().String()),
			slog.String("span_id", sc.SpanID().String()))
	}
	op.o.logger.LogAttrs(ctx, slog.LevelError, "wymcp: dependency unavailable", attrs...)
}

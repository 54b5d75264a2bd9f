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

	"github.com/wymcp/wymcp/protocol"
)

// Op is the record of one message: its span, and what its answer was. Its
// methods are safe to call from the request goroutine and from the actor
// that answers (a fault is recorded from the supervisor's strategy).
type Op struct {
	o      *Observer
	span   trace.Span
	method string
	tool   string
	start  time.Time

	mu    sync.Mutex
	ended bool
}

// Span returns the message's span.
func (op *Op) Span() trace.Span { return op.span }

// SetTool names the tool of a tools/call: the span becomes
// "tools/call <name>" and carries gen_ai.tool.name.
func (op *Op) SetTool(name string) {
	op.tool = name
	op.span.SetName(op.method + " " + name)
	if op.span.IsRecording() {
		op.span.SetAttributes(
			attribute.String(keyToolName, name),
			attribute.String(keyOperationName, "execute_tool"))
	}
}

// Reject records a rejection on the span and the rejections counter:
// stage names the request-path stage that answered (DESIGN §3).
func (op *Op) Reject(ctx context.Context, stage string, status int, code protocol.Code) {
	op.o.Reject(ctx, stage, status, code)
	if op.span.IsRecording() {
		op.span.SetAttributes(attribute.String("wymcp.rejection.stage", stage))
	}
}

// Fault records a contained fault: an "exception" event with the crash
// reason's type, message and full stack (not the SDK's 2 KB capture), span
// status Error, and one slog record at Error carrying the same fields with
// the trace and span ids. where names the containment ("supervisor",
// "tool", "authenticator").
func (op *Op) Fault(ctx context.Context, where string, reason any, stack []byte) {
	typ, msg := describe(reason)
	sc := op.span.SpanContext()
	if op.span.IsRecording() {
		op.span.AddEvent("exception", trace.WithAttributes(
			attribute.String("exception.type", typ),
			attribute.String("exception.message", msg),
			attribute.String("exception.stacktrace", string(stack)),
			attribute.String("wymcp.containment", where)))
		op.span.SetStatus(codes.Error, msg)
	}
	op.o.logger.LogAttrs(ctx, slog.LevelError, "wymcp: contained fault",
		slog.String("containment", where),
		slog.String("mcp.method.name", op.method),
		slog.String("gen_ai.tool.name", op.tool),
		slog.String("exception.type", typ),
		slog.String("exception.message", msg),
		slog.String("exception.stacktrace", string(stack)),
		slog.String("trace_id", sc.TraceID().String()),
		slog.String("span_id", sc.SpanID().String()))
}

// End closes the span with the answer: code is the JSON-RPC error code (0
// for a result), toolError marks an isError result. error.type is set, and
// the status is Error, iff the operation failed. End is idempotent.
func (op *Op) End(ctx context.Context, code protocol.Code, toolError bool) {
	op.mu.Lock()
	if op.ended {
		op.mu.Unlock()
		return
	}
	op.ended = true
	op.mu.Unlock()

	errType := ""
	switch {
	case code != 0:
		errType = code.String()
	case toolError:
		errType = "tool_error"
	}
	if op.span.IsRecording() {
		if code != 0 {
			op.span.SetAttributes(attribute.String(keyRPCStatusCode, code.String()))
		}
		if errType != "" {
			op.span.SetAttributes(attribute.String(keyErrorType, errType))
			op.span.SetStatus(codes.Error, errType)
		}
	}
	op.span.End()

	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, attribute.String(keyMethodName, op.method))
	if op.tool != "" {
		attrs = append(attrs, attribute.String(keyToolName, op.tool))
	}
	if errType != "" {
		attrs = append(attrs, attribute.String(keyErrorType, errType))
	}
	if code != 0 {
		attrs = append(attrs, attribute.String(keyRPCStatusCode, code.String()))
	}
	op.o.duration.Record(ctx, time.Since(op.start).Seconds(), metric.WithAttributes(attrs...))
}

// describe returns the type and message of a crash reason (a panic value).
func describe(reason any) (typ, msg string) {
	if err, ok := reason.(error); ok {
		return typeName(err), err.Error()
	}
	return typeName(reason), fmt.Sprint(reason)
}

func typeName(v any) string {
	if v == nil {
		return "<nil>"
	}
	t := reflect.TypeOf(v)
	if t.PkgPath() == "" && t.Kind() == reflect.Pointer {
		return "*" + t.Elem().PkgPath() + "." + t.Elem().Name()
	}
	if t.PkgPath() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

package toolrun

import (
	"context"
	"math"
	"sync"
)

// ProgressFunc receives a tool's progress reports: progress increases with
// every call; total is nil when unknown; message may be empty. The server
// turns each into a notifications/progress on the request's SSE stream
// (docs/design.md §6). Calls are serialized and in increasing order; fn must
// not call [ReportProgress] itself. total is fn's own copy.
type ProgressFunc func(progress float64, total *float64, message string)

type progressKey struct{}

// progressSink delivers one call's reports, dropping any that do not
// increase: the MCP spec says progress MUST increase with each notification,
// and a client may treat a violation as an error.
type progressSink struct {
	fn   ProgressFunc
	mu   sync.Mutex
	last float64
	sent bool
}

// WithProgress returns a context whose tool reports go to fn. The server
// installs it for a request that carries _meta.progressToken and accepts
// text/event-stream; each call needs its own context, because the
// increasing-value check is per call.
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	if fn == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, &progressSink{fn: fn})
}

// ReportProgress implements tools.ReportProgress, whose documentation it follows.
func ReportProgress(ctx context.Context, progress float64, total *float64, message string) {
	s, _ := ctx.Value(progressKey{}).(*progressSink)
	if s == nil || math.IsNaN(progress) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent && progress <= s.last {
		return
	}
	s.last, s.sent = progress, true
	if total != nil {
		v := *total
		total = &v
	}
	s.fn(progress, total, message)
}

package actors

import (
	"context"
	"log/slog"
)

// levelFloor passes only records at or above min to h. protoactor logs at
// Info on every supervised failure ("[ACTOR] Recovering") and on dead
// letters; under a panic storm that is a log line per request, so its
// logger is held at Warn (docs/design.md §4) while our own fault records,
// at Error, carry what an operator needs.
type levelFloor struct {
	h   slog.Handler
	min slog.Level
}

func (l levelFloor) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= l.min && l.h.Enabled(ctx, level)
}

func (l levelFloor) Handle(ctx context.Context, r slog.Record) error { return l.h.Handle(ctx, r) }

func (l levelFloor) WithAttrs(attrs []slog.Attr) slog.Handler {
	return levelFloor{h: l.h.WithAttrs(attrs), min: l.min}
}

func (l levelFloor) WithGroup(name string) slog.Handler {
	return levelFloor{h: l.h.WithGroup(name), min: l.min}
}

package telemetry

import (
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// globalDefault is otel's default provider, taken before any test installs
// a global one (the test below does, and -count>1 runs it again).
var globalDefault = otel.GetTracerProvider()

// TestTraceSwitch pins how the off path is recognised: an explicit no-op
// provider and the otel global default are off; the default turns on once
// a different global is installed; anything else is on. If otel renames its
// internal default provider, isGlobalDefault fails here rather than leaving
// the global path silently slower.
func TestTraceSwitch(t *testing.T) {
	if !isGlobalDefault(globalDefault) {
		t.Fatalf("otel's default provider (%T) is not recognised", globalDefault)
	}
	pristine := otel.GetTracerProvider() == globalDefault
	if pristine && traceSwitch(nil, globalDefault)() {
		t.Error("the global default counts as on")
	}
	if traceSwitch(tracenoop.NewTracerProvider(), tracenoop.NewTracerProvider())() {
		t.Error("the no-op provider counts as on")
	}
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(t.Context()) }()
	if !traceSwitch(tp, tp)() {
		t.Error("an SDK provider counts as off")
	}
	// The default, then an SDK installed as the global after New.
	on := traceSwitch(nil, globalDefault)
	if pristine && on() {
		t.Error("default: on before any SDK")
	}
	otel.SetTracerProvider(tp)
	if !on() {
		t.Error("default: still off after otel.SetTracerProvider")
	}
}

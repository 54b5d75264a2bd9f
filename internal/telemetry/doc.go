// Package telemetry records what the server does, per docs/design.md §7:
// one OpenTelemetry SERVER span per message, named and attributed by the
// MCP semantic conventions; the rejections of the request path; the faults
// the server contained, with their full stacks; the rounds of a
// multi-round-trip call, joined by wymcp.call.id and numbered by
// wymcp.call.round, an input_required round marked, not failed; and the
// metrics mcp.server.operation.duration, wymcp.rejections and calls in
// flight.
//
// It observes and never dispatches: nothing here decides an answer, and
// nothing here can fail a request. With the OpenTelemetry globals unset the
// providers are no-ops and a span costs a few nanoseconds; attributes are only
// built when a span is recording.
package telemetry

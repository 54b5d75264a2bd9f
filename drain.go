package wymcp

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// The drain is how a Server stops without losing a call (docs/design.md
// §4, §6a). A load balancer does not resend a POST it has already sent, so
// a call is lost whenever a replica closes a connection that a request is
// already travelling on, or refuses one that a balancer still routes calls
// to. The drain lets the balancer move away first:
//
//  1. Drain: the lame duck, for Options.DrainDelay. ReadinessHandler
//     answers 503, so balancers that probe it stop routing here; every
//     answer carries "Connection: close", so each keep-alive connection
//     carries at most one more call and its peer opens the next one
//     elsewhere. Calls are still admitted and answered.
//  2. Shutdown: no more admissions (a late call is answered 503 with
//     Retry-After), the calls in flight finish and are answered, then the
//     actors stop. If Shutdown's ctx ends first, the calls still running
//     are cut short: each is answered, as a deadline hit is, with an
//     isError result saying the server is shutting down, and its tool's
//     context is cancelled. Nothing admitted goes unanswered.
//
// A Server is a handler, not a listener: the listener belongs to the
// http.Server it is mounted on, and so does the choice of when to stop
// accepting connections. Behind a balancer that routes by readiness
// (Kubernetes), keep accepting through the delay:
//
//	srv.Drain(ctx)       // lame duck for DrainDelay; the endpoint is removed meanwhile
//	hs.Shutdown(ctx)     // stop accepting; wait for the handlers
//	srv.Shutdown(ctx)    // stop the actors; if ctx has ended, first answer the calls still running
//	hs.Close()           // then close the connections those calls' tools still hold
//
// Behind one that does not probe (nginx open source), close the listener
// first: cmd/wymcp's stop (cmd/wymcp/drain.go) does both, and
// deploy/nginx/README.md has the measurements that chose them.

// drain is the lame duck's clock: when it began, once.
type drain struct {
	delay time.Duration
	once  sync.Once
	ends  time.Time // written once under once
}

// Drain makes the server a lame duck and waits out Options.DrainDelay: it
// returns once the delay has passed since the first Drain or Shutdown
// began the drain, or when ctx ends (with ctx's error; the server stays a
// lame duck). Calls keep being admitted and answered, each answer with
// "Connection: close", and ReadinessHandler answers 503 from the first
// moment. With no DrainDelay it returns at once.
//
// The drain never ends by itself: Shutdown follows it. Drain may be called
// more than once and concurrently; every call waits for the same end.
func (s *Server) Drain(ctx context.Context) error {
	s.drain.once.Do(func() {
		s.handler.BeginDrain()
		s.drain.ends = time.Now().Add(s.drain.delay)
	})
	wait := time.Until(s.drain.ends)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Draining reports whether a drain has begun. A handler mounted beside the
// Server that may answer during a drain adds "Connection: close" when it
// reports true, as the Server does on its own answers (cmd/wymcp does it
// for its health endpoints and 404s).
func (s *Server) Draining() bool { return s.handler.Draining() }

// ReadinessHandler returns the readiness endpoint: 200 "ready" from New
// (everything that can fail is done there, so a Server that exists can
// serve) until a drain begins, then 503 "draining"; and 503 "auth not
// ready" meanwhile whenever the authenticator is a [Readier] that is not
// ready (its keys never fetched: every call would be 503, auth.go). GET
// and HEAD; 405 to anything else. Mount it where your balancer or orchestrator probes
// (cmd/wymcp: GET /readyz). It is not an MCP request: no Host or Origin
// check (a kubelet probes with the pod's address as Host), no
// authentication, no span or metric, so probes cost one flag read and
// never show up as operations.
func (s *Server) ReadinessHandler() http.Handler { return s.handler.Readiness() }

// Shutdown stops the server: it drains as Drain does (at once if a Drain
// already waited the delay out), then stops admitting requests (new ones
// are answered 503 with Retry-After), waits until every admitted request
// has been answered, and stops the actor system.
//
// If ctx ends first, the calls still running are cut short, and Shutdown
// returns ctx's error only once each has its answer: HTTP 200 and a
// tools/call result with isError true and the fixed text "The call was cut
// short: the server is shutting down", with the call's id, as its JSON body
// or as the last event of its progress stream (docs/design.md §5, the
// deadline row). Each tool's context is cancelled, context.Cause saying the
// server is shutting down. So Shutdown may return after ctx ends, by the
// time those answers take to write (each within Options.WriteTimeout; with
// no bound, a client that does not read holds it). The actors are left
// running for the tools that ignore their context; what they return is
// dropped. A call's answer is written and flushed before Shutdown returns,
// so the connections may be closed then (cmd/wymcp closes them once the
// handlers of tools that honour their context have returned).
//
// Call it after http.Server.Shutdown has stopped the listeners and the
// handlers have returned, or once its time is up; or in its place when the
// Server is mounted on a mux shared with other handlers. A second Shutdown
// returns once the first's work is done, or when its own ctx ends, cutting
// the calls still running as the first would; it never undoes anything.
func (s *Server) Shutdown(ctx context.Context) error {
	drained := s.Drain(ctx)
	if err := s.handler.StopAdmitting(ctx); err != nil {
		// Out of time with calls in flight: answer them now (the cut,
		// internal/actors/cut.go), since nothing admitted goes unanswered.
		s.system.Cut()
		return err
	}
	s.system.Shutdown(ctx)
	return drained
}

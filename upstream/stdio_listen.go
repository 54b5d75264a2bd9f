package upstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
)

// A stdio upstream's change stream (changes.go, docs/design.md §10e). A
// 2025 child tells notifications/tools/list_changed unasked on its stdout.
// A 2026-07-28 child tells it only on a subscriptions/listen: a request on
// the pipe, which the child acknowledges (notifications/subscriptions/
// acknowledged), whose notifications come on its stdout, and which it
// ends with its result or notifications/cancelled naming it, the gateway
// with notifications/cancelled. Each new child is listened to afresh:
// the subscription was the last one's.

// methodCancelled ends a request on a pipe: the gateway's calls given up,
// and a listen either side ends.
const methodCancelled = "notifications/cancelled"

// errChildGone is a listen whose child ended (exited, killed, restarted):
// the next child is listened to, once ready. Not a failure of the stream:
// the supervisor already bounds how often a child starts.
var errChildGone = errors.New("its child ended")

// follow is a stdio upstream's change stream: changed is told of each
// notifications/tools/list_changed and each new child until ctx ends. A
// 2025 child's stream is its stdout, open as long as it runs; a
// 2026-07-28 child's is a listen on each child in turn, which returns
// (to changes.go's follow, which opens it again with backoff) only when
// a child refuses or ends it, errNoStream when it answers -32601.
func (s *stdioConn) follow(ctx context.Context, opened, changed func()) error {
	s.mu.Lock()
	s.changed = changed
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.changed = nil
		s.mu.Unlock()
	}()
	if s.c.legacy {
		opened()
		<-ctx.Done()
		return ctx.Err()
	}
	var last *child
	for {
		s.mu.Lock()
		ch := s.ready
		if ch == nil || ch == last {
			// None ready (a restart, an upstream down, Close): the next
			// start readies one.
			if s.readied == nil {
				s.readied = make(chan struct{})
			}
			next := s.readied
			s.mu.Unlock()
			select {
			case <-next:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		s.mu.Unlock()
		last = ch
		if err := s.listen(ctx, ch, opened); !errors.Is(err, errChildGone) {
			return err
		}
	}
}

// listen subscribes to ch's notifications/tools/list_changed and waits
// until the subscription ends: nil when the child ended it (its result,
// or its notifications/cancelled), errNoStream when it has no listen
// (-32601), errChildGone when the child ended, ctx's error when Watch
// stopped (the child is told: notifications/cancelled). opened is called
// at its acknowledgement.
func (s *stdioConn) listen(ctx context.Context, ch *child, opened func()) error {
	id := s.c.ids.Add(1)
	p := &pending{answer: make(chan message, 1), during: make(chan message, duringQueue), failed: make(chan error, 1), listen: true}
	ch.mu.Lock()
	ch.calls[id] = p
	ch.mu.Unlock()
	defer func() {
		ch.mu.Lock()
		delete(ch.calls, id)
		ch.mu.Unlock()
	}()
	if err := s.write(ctx, ch, s.c.listenBody(id)); err != nil {
		select {
		case <-ch.dead:
			return errChildGone
		default:
			return err
		}
	}
	for {
		select {
		case m := <-p.during:
			switch m.method {
			case wire.MethodListenAcknowledged:
				opened()
			case methodCancelled:
				return nil
			}
		case m := <-p.answer:
			switch {
			case m.err != nil && m.err.code == -32601:
				return errNoStream
			case m.err != nil:
				return fmt.Errorf("error %d: %s", m.err.code, m.err.message)
			}
			return nil
		case err := <-p.failed:
			return err
		case <-ch.dead:
			return errChildGone
		case <-ctx.Done():
			go s.endListen(ch, id)
			return ctx.Err()
		}
	}
}

// endListen tells ch that the gateway no longer listens (the stdio
// transport's cancellation of request id), within connectTimeout. Best
// effort: a child that cannot read it is the health loop's to find.
func (s *stdioConn) endListen(ch *child, id int64) {
	ctx, cancel := context.WithTimeout(own(context.Background()), s.c.connectTimeout)
	defer cancel()
	body := []byte(`{"jsonrpc":"2.0","method":"` + methodCancelled + `","params":{"requestId":`)
	body = strconv.AppendInt(body, id, 10)
	body = append(body, `,"reason":"the gateway no longer listens"}}`...)
	_ = s.write(ctx, ch, body)
}

// toListen hands the child's acknowledgement of a listen (its
// subscription id is the listen's id) or its end of one
// (notifications/cancelled naming it) to that listen. Anything else is
// dropped: a cancellation of no listen, an id that is not the gateway's.
func (s *stdioConn) toListen(ch *child, m message) {
	var raw wire.RawJSON
	if m.method == wire.MethodListenAcknowledged {
		meta, _ := strictjson.Member(m.params, "_meta")
		raw, _ = strictjson.Member(meta, wire.MetaSubscriptionID)
	} else {
		raw, _ = strictjson.Member(m.params, "requestId")
	}
	id, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return
	}
	ch.mu.Lock()
	p := ch.calls[id]
	ch.mu.Unlock()
	if p != nil && p.listen {
		select {
		case p.during <- m:
		default: // a child that repeats itself is not heard twice
		}
	}
}

// tellChanged tells Watch, when it follows, that the tools may have
// changed.
func (s *stdioConn) tellChanged() {
	s.mu.Lock()
	f := s.changed
	s.mu.Unlock()
	if f != nil {
		f()
	}
}

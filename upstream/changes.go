package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
)

// An upstream's change stream (docs/design.md §10e): besides reading its
// tools/list every RefreshInterval, Watch follows the stream on which the
// upstream tells of a change, where it offers one, and reads the list at
// once when told. At 2026-07-28 it is its subscriptions/listen (when its
// server/discover advertises tools.listChanged), over HTTP or on a
// child's pipe (stdio_listen.go); within a 2025 session, its GET stream
// (when its initialize advertised tools.listChanged), which carries
// notifications/tools/list_changed; a 2025 child's stdout. Polling goes on
// whatever the stream does: a stream that fails costs freshness, never
// the tools; it is opened again with backoff.

// Backoff of a change stream opened again after it failed or ended.
const (
	firstReopen = time.Second
	maxReopen   = 30 * time.Second
)

// kickGap is the least time between two reads a change stream asks for:
// a burst of notifications is read once or twice, and a change is still
// served within a second.
const kickGap = 250 * time.Millisecond

// errNoStream is an upstream that offers no change stream after all (a
// 2025 one that answers its GET 405): Watch polls alone.
var errNoStream = errors.New("the upstream offers no change stream")

// advertisesListChanged reports whether a server/discover or initialize
// result's capabilities say tools.listChanged: true.
func advertisesListChanged(result wire.RawJSON) bool {
	caps, _ := strictjson.Member(result, "capabilities")
	tools, _ := strictjson.Member(caps, "tools")
	v, _ := strictjson.Member(tools, "listChanged")
	return string(v) == "true"
}

// follow keeps u's change stream open until ctx ends, poking kick (a
// one-slot channel) at each change it tells and each time it is opened
// (a change told while it was closed would be missed otherwise).
func (u *Upstream) follow(ctx context.Context, kick chan<- struct{}) {
	poke := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	wait := firstReopen
	for {
		opened := false
		began := time.Now()
		err := u.c.changeStream(ctx, func() { opened = true; poke() }, poke)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errNoStream) {
			u.c.log.Info("upstream offers no change stream; its tools are read every refresh interval", "upstream", u.opts.Name)
			return
		}
		if opened && time.Since(began) >= maxReopen {
			// It served a while: start the backoff afresh. One that is
			// acknowledged and ends at once backs off as a failure does,
			// or it would cost a listen and a read (at its opening)
			// every firstReopen.
			wait = firstReopen
		}
		msg := "upstream change stream ended; its tools are still read every refresh interval, and the stream is opened again"
		if err != nil {
			u.c.log.Warn(msg, "upstream", u.opts.Name, "err", err.Error(), "retry_in", wait)
		} else {
			u.c.log.Info(msg, "upstream", u.opts.Name, "retry_in", wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, maxReopen)
	}
}

// listenBody is the subscriptions/listen request of id, asking for
// toolsListChanged alone (what Watch reads), over HTTP or a child's pipe.
func (c *client) listenBody(id int64) []byte {
	body := c.appendHead(nil, id, wire.MethodListen)
	body = append(body, `,"params":{"notifications":{"toolsListChanged":true},"_meta":`...)
	body = c.appendMeta(body, nil, 0, "", "")
	return append(body, "}}"...)
}

// changeStream opens the upstream's change stream and reads it until it
// ends (nil: the upstream ended it gracefully, its listen's result) or
// fails, calling opened once it serves and changed at each
// notifications/tools/list_changed. Anything else on it is skipped.
func (c *client) changeStream(ctx context.Context, opened, changed func()) error {
	if c.closed.Load() {
		return &failure{kind: kindClosed}
	}
	if c.stdio != nil {
		return c.stdio.follow(ctx, opened, changed)
	}
	var (
		hreq       *http.Request
		err        error
		generation uint64
		session    string
	)
	if c.legacy {
		hreq, err = http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
		if err != nil {
			return err
		}
		hreq.Header["Accept"] = []string{"text/event-stream"}
		if generation, session = c.currentSession(); session != "" {
			hreq.Header["Mcp-Session-Id"] = []string{session}
		}
	} else {
		hreq, err = http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(c.listenBody(c.ids.Add(1))))
		if err != nil {
			return err
		}
		hreq.Header["Content-Type"] = contentJSON
		hreq.Header["Accept"] = acceptBoth
		hreq.Header["Mcp-Method"] = []string{wire.MethodListen}
	}
	hreq.Header["Mcp-Protocol-Version"] = c.versionHeader
	if c.creds != nil {
		if err := c.creds.apply(ctx, hreq.Header); err != nil {
			return err
		}
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch {
	case c.legacy && resp.StatusCode == http.StatusMethodNotAllowed:
		return errNoStream
	case c.legacy && resp.StatusCode == http.StatusNotFound && session != "":
		// Either the upstream lost the session (it restarted), or it
		// serves no GET there (some answer 404, not 405). A ping tells: in
		// a lost session it is answered 404 too, and the call makes a new
		// session (client.call), in which the stream is opened next (asked
		// again in the lost one, it would be 404 until a poll made one);
		// answered in this one, the upstream offers no stream.
		pctx, cancel := context.WithTimeout(ctx, c.connectTimeout)
		defer cancel()
		if err := c.probe(pctx); err != nil {
			return fmt.Errorf("HTTP 404, and a ping failed: %w", err)
		}
		if now, _ := c.currentSession(); now == generation {
			return errNoStream
		}
		return errors.New("HTTP 404: the upstream had lost the session; a new one is made")
	case resp.StatusCode == http.StatusUnauthorized && c.creds != nil:
		// The token that got it is dropped, as at a call's 401
		// (client.call), so that the stream opened next carries a fresh
		// one, not the refused one until a poll's 401 drops it.
		c.creds.refused(ctx, hreq.Header)
		return errors.New("HTTP 401: the upstream refused the credentials")
	case resp.StatusCode != http.StatusOK:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	case mediaType(resp.Header.Get("Content-Type")) != "text/event-stream":
		return fmt.Errorf("answered %q, not an event stream", resp.Header.Get("Content-Type"))
	}
	if c.legacy {
		opened() // a GET stream has no ack: its answer is its start
	}
	events := newSSEReader(resp.Body, c.maxBytes)
	for {
		data, err := events.next()
		if err != nil {
			if err == io.EOF {
				return errors.New("the stream ended without its result")
			}
			return err
		}
		m, err := parseMessage(data)
		if err != nil {
			return fmt.Errorf("a message on the stream: %w", err)
		}
		switch {
		case m.method == wire.MethodToolsListChanged:
			changed()
		case m.method == wire.MethodListenAcknowledged:
			opened()
		case m.method == "" && m.err != nil:
			return fmt.Errorf("error %d: %s", m.err.code, m.err.message)
		case m.method == "":
			return nil // the listen's result: the upstream ended it
		}
	}
}

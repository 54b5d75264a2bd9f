package upstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
)

// negotiate settles the revision spoken with the upstream: 2026-07-28 when
// its server/discover lists it, otherwise the first 2025 revision the
// gateway may speak that initialize agrees on.
func (c *client) negotiate(ctx context.Context) error {
	var last error
	if c.versions[0] == wire.Version {
		ok, err := c.discover(ctx)
		if ok {
			return nil
		}
		last = err
	}
	if !contains(c.versions, "2025-11-25") && !contains(c.versions, "2025-06-18") {
		return fmt.Errorf("server/discover: %w", last)
	}
	c.legacy = true
	if err := c.initialize(ctx, false); err != nil {
		if last != nil {
			return fmt.Errorf("neither server/discover (%v) nor initialize (%w) succeeded", last, err)
		}
		return fmt.Errorf("initialize: %w", err)
	}
	return nil
}

// discover asks server/discover; ok when the upstream serves 2026-07-28.
func (c *client) discover(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.connectTimeout)
	defer cancel()
	if c.version != wire.Version {
		// Set once: a restarted stdio child's handshake asks again
		// while calls read it.
		c.setVersion(wire.Version)
	}
	id := c.ids.Add(1)
	body := c.appendHead(nil, id, wire.MethodDiscover)
	body = append(body, `,"params":{"_meta":`...)
	body = c.appendMeta(body, nil, 0, "", "")
	body = append(body, "}}"...)
	m, err := c.call(ctx, &request{id: id, method: wire.MethodDiscover, body: body})
	if err != nil {
		return false, err
	}
	if m.err != nil {
		return false, fmt.Errorf("error %d: %s", m.err.code, m.err.message)
	}
	versions, _ := strictjson.Member(m.result, "supportedVersions")
	var list []string
	if err := strictjson.Unmarshal(versions, &list); err != nil {
		return false, errors.New("its supportedVersions is not a list of strings")
	}
	if !contains(list, wire.Version) {
		return false, fmt.Errorf("it serves %v", list)
	}
	if v := advertisesListChanged(m.result); v != c.listChanged {
		// Written only when it changes: a restarted stdio child's
		// handshake asks again while Watch may read it.
		c.listChanged = v
	}
	return true, nil
}

// initialize opens an upstream session with the 2025 era's handshake: the
// initialize request, the revision the upstream answers with checked
// against the ones the gateway may speak, and notifications/initialized.
// A new session (renew) must agree on the revision of the first: calls
// are running in it.
func (c *client) initialize(ctx context.Context, renew bool) error {
	ctx, cancel := context.WithTimeout(ctx, c.connectTimeout)
	defer cancel()
	want := "2025-11-25"
	if !contains(c.versions, want) {
		want = "2025-06-18"
	}
	if renew {
		want = c.version
	} else {
		c.setVersion(want)
	}
	got, session, result, err := c.handshakeHTTP(ctx, want)
	if err != nil {
		return err
	}
	if renew && got != c.version {
		return fmt.Errorf("the upstream's new session is in revision %q, not %q", got, c.version)
	}
	if !renew {
		c.setVersion(got)
		c.listChanged = advertisesListChanged(result)
	}
	c.mu.Lock()
	c.session = session
	c.generation++
	c.mu.Unlock()
	return c.post(ctx, "", initializedBody)
}

var initializedBody = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

// handshakeHTTP sends initialize in revision want, outside any session,
// and returns the revision the upstream answered (checked against the
// ones the gateway may speak), its Mcp-Session-Id and its result. The
// caller sends notifications/initialized in that session.
func (c *client) handshakeHTTP(ctx context.Context, want string) (got, session string, result wire.RawJSON, err error) {
	id := c.ids.Add(1)
	body := c.appendHead(nil, id, wire.MethodInitialize)
	body = append(body, `,"params":{"protocolVersion":"`...)
	body = append(body, want...)
	// The gateway declares what it can relay to a 2025-era client: a
	// request it cannot relay during a call is declined (docs/design.md
	// §10a).
	body = append(body, `","capabilities":`...)
	body = append(body, wire.LegacyCapabilities...)
	body = append(body, `,"clientInfo":`...)
	body = append(body, c.clientInfo...)
	body = append(body, "}}"...)
	m, session, err := c.exchange(ctx, &request{id: id, method: wire.MethodInitialize, body: body}, "")
	if err != nil {
		return "", "", nil, err
	}
	if m.err != nil {
		return "", "", nil, fmt.Errorf("error %d: %s", m.err.code, m.err.message)
	}
	v, _ := strictjson.Member(m.result, "protocolVersion")
	got, _ = strictjson.Unquote(v)
	if got == "" || !contains(c.versions, got) || got == wire.Version {
		return "", "", nil, fmt.Errorf("the upstream answered revision %q, which the gateway does not speak to it", got)
	}
	return got, session, m.result, nil
}

// renewSession makes a new upstream session for the calls that found the
// one of generation lost: the first makes it, the others use it.
func (c *client) renewSession(ctx context.Context, generation uint64) error {
	c.renewing.Lock()
	defer c.renewing.Unlock()
	if now, _ := c.currentSession(); now != generation {
		return nil
	}
	c.log.Info("upstream session lost; making a new one", "upstream", c.name)
	// Not the call's context: the session is the gateway's and serves
	// every call, and one client going away must not leave it half made.
	if err := c.initialize(own(context.WithoutCancel(ctx)), true); err != nil {
		return &failure{kind: kindSessionLost, err: err}
	}
	return nil
}

// appendHead appends a request's first members, leaving the object open.
func (c *client) appendHead(dst []byte, id int64, method string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"method":"`...)
	dst = append(dst, method...)
	return append(dst, '"')
}

// appendMeta appends a request's params._meta object: for 2026-07-28 the
// protocol fields (the client's capabilities passed on, the gateway's
// clientInfo), and in every revision the progress token (when not 0) and
// the trace context.
func (c *client) appendMeta(dst []byte, capabilities wire.RawJSON, progress int64, traceparent, tracestate string) []byte {
	dst = append(dst, '{')
	sep := false
	if !c.legacy {
		dst = append(dst, `"io.modelcontextprotocol/protocolVersion":"`+wire.Version+`","io.modelcontextprotocol/clientCapabilities":`...)
		if capabilities == nil {
			capabilities = wire.RawJSON("{}")
		}
		dst = append(dst, capabilities...)
		dst = append(dst, `,"io.modelcontextprotocol/clientInfo":`...)
		dst = append(dst, c.clientInfo...)
		sep = true
	}
	if progress != 0 {
		if sep {
			dst = append(dst, ',')
		}
		dst = append(dst, `"progressToken":`...)
		dst = strconv.AppendInt(dst, progress, 10)
		sep = true
	}
	if traceparent != "" {
		if sep {
			dst = append(dst, ',')
		}
		dst = append(dst, `"traceparent":`...)
		dst = wire.AppendString(dst, traceparent)
		if tracestate != "" {
			dst = append(dst, `,"tracestate":`...)
			dst = wire.AppendString(dst, tracestate)
		}
	}
	return append(dst, '}')
}

// probe asks the upstream whether it answers, for its open breaker: a
// 2026-07-28 upstream its server/discover, a 2025-era one ping in its
// session (re-made if the upstream lost it). Any JSON-RPC answer, an
// error included, is an upstream that answers.
func (c *client) probe(ctx context.Context) error {
	id := c.ids.Add(1)
	method := wire.MethodDiscover
	if c.legacy {
		method = "ping"
	}
	body := c.appendHead(nil, id, method)
	body = append(body, `,"params":{"_meta":`...)
	body = c.appendMeta(body, nil, 0, "", "")
	body = append(body, "}}"...)
	_, err := c.call(ctx, &request{id: id, method: method, body: body})
	return err
}

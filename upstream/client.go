package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/wire"
)

// client is the gateway's MCP client of one upstream: one HTTP exchange per
// JSON-RPC request, the upstream session of a 2025-era upstream, and the
// limits every exchange is held to.
type client struct {
	name, url string
	u         *url.URL
	// addr and port are the upstream's host and port, for server.address
	// and server.port.
	addr    string
	port    int
	http    *http.Client
	ownHTTP bool
	// posts sends the messages that have no answer (post): the gateway's
	// answers to an upstream's requests during a call, notifications. Not
	// on http's connections, which the calls' streams may all hold while
	// they wait for these very answers.
	posts *http.Client
	// direct is the transport requests go to without http.Client (send).
	direct   http.RoundTripper
	creds    Credentials
	maxBytes int64
	versions []string
	// version is the negotiated revision; fixed once negotiate returns.
	version string
	legacy  bool
	// listChanged is the upstream's tools.listChanged, as negotiate read
	// it: it offers a change stream (changes.go). Fixed once negotiate
	// returns.
	listChanged bool
	// versionHeader is the MCP-Protocol-Version header's value: version.
	versionHeader []string
	log           *slog.Logger

	connectTimeout, callTimeout time.Duration

	// maxHeader bounds an answer's headers; maxBytes bounds them and one
	// message together.
	maxHeader int64

	ids     atomic.Int64
	breaker *breaker
	slots   *shares
	retry   *retries
	hops    *telemetry.Hops
	fails   *telemetry.UpstreamFailures
	// clientInfo is the gateway's Implementation, encoded.
	clientInfo wire.RawJSON
	closed     atomic.Bool
	// conn carries the exchanges: HTTP (httpConn), or a child's pipes
	// (stdioConn, when stdio is set).
	conn  conn
	stdio *stdioConn

	// session is a 2025-era upstream's Mcp-Session-Id ("" when it keeps
	// none), and generation counts the sessions made, so that of many
	// calls that find it lost at once only one makes a new one.
	mu         sync.Mutex
	session    string
	generation uint64
	// renewing lets one call at a time make a new session.
	renewing sync.Mutex
	// sessions, with PerCaller, holds each caller's own session of a
	// 2025-era upstream (sessions_callers.go).
	sessions *callerSessions
}

const (
	defaultCallTimeout    = 60 * time.Second
	defaultIdleTimeout    = 4 * time.Second
	defaultConnectTimeout = 10 * time.Second
	defaultMaxConns       = 64
	defaultMaxInFlight    = 256
	defaultMaxBytes       = 4 << 20

	// defaultMaxHeader is far above what an MCP server's answer carries
	// (a few hundred bytes), and well below net/http's own default
	// (10 MiB, which one answer of a hostile upstream could fill).
	defaultMaxHeader = 64 << 10
)

// knownVersions are the revisions the gateway speaks to an upstream, the
// preferred first.
var knownVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

func newClient(o Options) (*client, error) {
	if o.Command != "" {
		return newStdioClient(o)
	}
	u, err := url.Parse(o.URL) // checked by Options.Validate
	if err != nil {
		return nil, fmt.Errorf("upstream %s: %w", o.Name, err)
	}
	c := &client{
		name:           o.Name,
		url:            o.URL,
		u:              u,
		addr:           u.Hostname(),
		creds:          o.Credentials,
		maxBytes:       orDefault(o.MaxResponseBytes, defaultMaxBytes),
		maxHeader:      orDefault(o.MaxResponseHeaderBytes, defaultMaxHeader),
		callTimeout:    orDefault(o.CallTimeout, defaultCallTimeout),
		connectTimeout: orDefault(o.ConnectTimeout, defaultConnectTimeout),
		slots:          newShares(orDefault(o.MaxInFlight, defaultMaxInFlight)),
		retry:          newRetries(o.RetryIdempotent, orDefault(o.MaxInFlight, defaultMaxInFlight)),
		log:            o.Logger,
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	// The headers count against the answer's limit too: they can be no
	// larger than it.
	c.maxHeader = min(c.maxHeader, c.maxBytes)
	c.port, _ = strconv.Atoi(u.Port())
	if c.port == 0 {
		c.port = map[string]int{"http": 80, "https": 443}[u.Scheme]
	}
	c.versions = knownVersions
	if o.Versions != nil { // checked by Options.Validate
		c.versions = slices.Clone(o.Versions)
	}
	if o.BreakerMinCalls >= 0 {
		c.breaker = newBreaker(breakerConfig{minCalls: o.BreakerMinCalls, interval: o.BreakerProbeInterval}, c.probe, func(open bool, why string) { c.fails.CircuitChanged(open, why) })
	}
	c.http = o.HTTPClient
	if c.http == nil {
		conns := orDefault(o.MaxConns, defaultMaxConns)
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxConnsPerHost = conns
		t.MaxIdleConnsPerHost = conns
		t.MaxIdleConns = conns
		t.IdleConnTimeout = orDefault(o.IdleTimeout, defaultIdleTimeout)
		// The upstream is a known server, not a proxy's target: the
		// environment's proxy settings are not the gateway's route to it.
		t.Proxy = nil
		// What net/http reads of an answer's headers before the gateway
		// sees them: past it, the exchange fails (headersTooLarge).
		t.MaxResponseHeaderBytes = c.maxHeader
		c.http = &http.Client{
			Transport: t,
			// A redirect would carry the gateway's credentials to another
			// address: the gateway follows none.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		c.ownHTTP = true
		// A call posts at most one answer at a time: MaxInFlight more
		// connections at most, few of them kept idle.
		pt := t.Clone()
		pt.MaxConnsPerHost = orDefault(o.MaxInFlight, defaultMaxInFlight)
		pt.MaxIdleConnsPerHost = min(conns, 8)
		c.posts = &http.Client{Transport: pt, CheckRedirect: c.http.CheckRedirect}
	} else {
		c.posts = c.http
	}
	if c.http.Jar == nil && c.http.Timeout == 0 {
		c.direct = c.http.Transport
		if c.direct == nil {
			c.direct = http.DefaultTransport
		}
	}
	c.finish(o)
	c.conn = httpConn{c}
	if o.PerCaller {
		c.sessions = newCallerSessions(c, o.MaxCallers, o.callerIdle)
	}
	return c, nil
}

// finish sets what every client has, whatever carries its exchanges.
func (c *client) finish(o Options) {
	c.hops = newHops(o, c)
	c.fails = telemetry.NewUpstreamFailures(o.MeterProvider, c.log, c.name)
	c.clientInfo = gatewayInfo()
}

func orDefault[T int | int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// request is one JSON-RPC request to the upstream.
type request struct {
	id     int64
	method string
	// name is the Mcp-Name header's value (tools/call: the upstream's tool
	// name) and params the Mcp-Param-* headers, name and value: 2026-07-28
	// only.
	name   []string
	params []string
	body   []byte
	// trace is the W3C traceparent and tracestate, sent as headers too.
	trace [2]string
	// during, when set, receives the requests and notifications the
	// upstream sends on the answer's stream before the answer, with ctx
	// and progress (the gateway's progress token, 0 for none).
	during   func(c *client, ctx context.Context, m message, progress int64) error
	ctx      context.Context
	progress int64
}

// failure is an exchange that did not bring an answer: what went wrong,
// worded for the model (docs/design.md §10a).
type failure struct {
	kind   failureKind
	status int    // HTTP status, for kindStatus, kindRefusedCreds, kindSessionLost
	detail string // what, for kindMalformed and kindCredentials
	err    error  // the cause, for the log
	// sent is the request's header, for kindRefusedCreds: which
	// credentials the upstream refused (Credentials.refused).
	sent http.Header
	// unsent: the request never left the gateway (kindUnreachable), so
	// it may be sent again whatever it is.
	unsent bool
}

type failureKind uint8

const (
	kindUnreachable failureKind = iota + 1
	kindStatus
	kindMalformed
	kindTooLarge
	kindHeadersTooLarge
	kindRefusedCreds
	kindCredentials
	kindSessionLost
	kindUnavailable
	kindBusy
	kindShare
	kindClosed
	kindExited
	kindCallers
)

func (f *failure) Error() string {
	switch {
	case f.err != nil:
		return fmt.Sprintf("%s: %v", f.errorType(), f.err)
	case f.detail != "":
		return f.errorType() + ": " + f.detail
	}
	return f.errorType()
}

func (f *failure) Unwrap() error { return f.err }

// errorType is the failure's error.type (docs/design.md §7).
func (f *failure) errorType() string {
	switch f.kind {
	case kindUnreachable:
		return "upstream_unreachable"
	case kindStatus:
		return strconv.Itoa(f.status)
	case kindMalformed:
		return "upstream_malformed"
	case kindTooLarge, kindHeadersTooLarge:
		return "upstream_too_large"
	case kindRefusedCreds:
		return "upstream_unauthorized"
	case kindCredentials:
		return "upstream_credentials"
	case kindSessionLost:
		return "upstream_session_lost"
	case kindUnavailable:
		return "upstream_unavailable"
	case kindBusy:
		return "upstream_busy"
	case kindShare:
		return "upstream_fair_share"
	case kindClosed:
		return "upstream_closed"
	case kindExited:
		return "upstream_exited"
	case kindCallers:
		return "upstream_busy"
	}
	return "_OTHER"
}

// upstreamFault reports whether the failure says the upstream itself is
// failing, which the breaker counts.
func (f *failure) upstreamFault() bool {
	switch f.kind {
	case kindUnreachable, kindMalformed, kindExited:
		return true
	case kindStatus:
		return f.status >= 500
	}
	return false
}

// call sends req and returns the upstream's answer, making a new upstream
// session when a 2025-era upstream has lost its own, fresh credentials
// when the upstream refused the cached ones, and a fresh connection when
// none could be made: once, since the upstream did not run a request it
// answered that way, or never received.
func (c *client) call(ctx context.Context, req *request) (message, error) {
	retried := false
	for {
		own, generation, session := c.sessionOf(ctx)
		m, _, err := c.exchange(ctx, req, session)
		var f *failure
		if retried || !errors.As(err, &f) {
			return m, err
		}
		switch f.kind {
		case kindUnreachable:
			if !f.unsent {
				return m, err
			}
			// A fresh connection may reach another replica behind the
			// upstream's address.
		case kindSessionLost:
			renew := c.renewSession
			if own != nil {
				renew = func(ctx context.Context, generation uint64) error { return c.sessions.renew(ctx, own, generation) }
			}
			if err := renew(ctx, generation); err != nil {
				return m, err
			}
		case kindRefusedCreds:
			if c.creds == nil || !c.creds.refused(ctx, f.sent) {
				return m, err
			}
		default:
			return m, err
		}
		retried = true
	}
}

// exchange sends req and returns the upstream's answer to it, over the
// client's conn. The answer's Mcp-Session-Id (HTTP) is returned for
// initialize.
func (c *client) exchange(ctx context.Context, req *request, session string) (message, string, error) {
	if c.closed.Load() {
		return message{}, "", &failure{kind: kindClosed}
	}
	return c.conn.exchange(ctx, req, session)
}

// post sends a message that has no answer: a notification, or the
// gateway's response to the upstream's request.
func (c *client) post(ctx context.Context, method string, body []byte) error {
	return c.conn.post(ctx, method, body)
}

// conn is what carries a client's messages to its upstream and back: an
// HTTP exchange each (httpConn), or the pipes of a child process the
// gateway runs (stdioConn). Everything else of a client (names, limits,
// the breaker, listing, the answers) is the same for both.
type conn interface {
	// exchange sends req and waits for its answer, handing the messages
	// the upstream sends meanwhile for it to req.during.
	exchange(ctx context.Context, req *request, session string) (message, string, error)
	// post sends a message that has no answer.
	post(ctx context.Context, method string, body []byte) error
	// close ends the connection: the upstream session, or the child.
	close() error
}

// httpConn is an upstream reached over Streamable HTTP.
type httpConn struct{ c *client }

func (h httpConn) exchange(ctx context.Context, req *request, session string) (message, string, error) {
	return h.c.exchangeHTTP(ctx, req, session)
}
func (h httpConn) post(ctx context.Context, method string, body []byte) error {
	return h.c.postHTTP(ctx, method, body)
}
func (h httpConn) close() error { return h.c.closeHTTP() }

// exchangeHTTP is one HTTP exchange: req posted, and its answer read, from
// a JSON body or from the events of a stream. The answer's Mcp-Session-Id
// is returned for initialize.
func (c *client) exchangeHTTP(ctx context.Context, req *request, session string) (message, string, error) {
	h := make(http.Header, 8)
	h["Content-Type"] = contentJSON
	h["Accept"] = acceptBoth
	if req.method != wire.MethodInitialize {
		h["Mcp-Protocol-Version"] = c.versionHeader
	}
	if !c.legacy {
		h["Mcp-Method"] = methodHeader(req.method)
		if req.name != nil {
			h["Mcp-Name"] = req.name
		}
		for i := 0; i+1 < len(req.params); i += 2 {
			h["Mcp-Param-"+req.params[i]] = []string{req.params[i+1]}
		}
	}
	if session != "" {
		h["Mcp-Session-Id"] = []string{session}
	}
	if req.trace[0] != "" {
		h["Traceparent"] = []string{req.trace[0]}
		if req.trace[1] != "" {
			h["Tracestate"] = []string{req.trace[1]}
		}
	}
	if c.creds != nil {
		if err := c.creds.apply(ctx, h); err != nil {
			return message{}, "", &failure{kind: kindCredentials, err: err}
		}
	}
	resp, err := c.send(ctx, req.body, h)
	if err != nil {
		if ctx.Err() != nil {
			return message{}, "", ctx.Err()
		}
		if headersTooLarge(err) {
			return message{}, "", &failure{kind: kindHeadersTooLarge, err: err}
		}
		return message{}, "", &failure{kind: kindUnreachable, err: err, unsent: unsent(err)}
	}
	defer resp.Body.Close()
	m, err := c.answer(ctx, req, resp, session)
	if f, ok := err.(*failure); ok && f.kind == kindRefusedCreds {
		f.sent = h
	}
	if err != nil && ctx.Err() != nil {
		return message{}, "", ctx.Err()
	}
	return m, resp.Header.Get("Mcp-Session-Id"), err
}

// send posts body with the headers h. With the client Connect made (or
// any without a cookie jar or a timeout of its own), the request goes
// straight to the client's transport: the gateway follows no redirect
// (a redirect would carry its credentials elsewhere), so http.Client's
// redirect loop, header copies and timers would be all cost.
func (c *client) send(ctx context.Context, body []byte, h http.Header) (*http.Response, error) {
	r := &http.Request{
		Method:     http.MethodPost,
		URL:        c.u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     h,
		// io.NopCloser of a *bytes.Reader is a body net/http knows to be
		// in memory: it writes the headers and the body in one write,
		// where any other body type has the headers flushed first, a
		// second system call on every request.
		Body:          io.NopCloser(bytes.NewReader(body)),
		GetBody:       func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
		ContentLength: int64(len(body)),
		Host:          c.u.Host,
	}
	r = r.WithContext(ctx)
	if c.direct != nil {
		return c.direct.RoundTrip(r)
	}
	return c.http.Do(r)
}

// methodHeader returns the Mcp-Method header of method, shared for the
// methods the gateway sends.
func methodHeader(method string) []string {
	switch method {
	case wire.MethodToolsCall:
		return toolsCallHeader
	case wire.MethodToolsList:
		return toolsListHeader
	case wire.MethodDiscover:
		return discoverHeader
	}
	return []string{method}
}

// Header values shared by every request: net/http reads a request's
// header values and never writes them, and the gateway replaces a value
// (Header.Set) rather than change one in place.
var (
	toolsCallHeader = []string{wire.MethodToolsCall}
	toolsListHeader = []string{wire.MethodToolsList}
	discoverHeader  = []string{wire.MethodDiscover}
)

var (
	contentJSON = []string{"application/json"}
	acceptBoth  = []string{"application/json, text/event-stream"}
)

// answer reads the upstream's answer to req from resp.
func (c *client) answer(ctx context.Context, req *request, resp *http.Response, session string) (message, error) {
	switch {
	case resp.StatusCode == http.StatusNotFound && session != "":
		// A 2025-era server answers 404 to a session it no longer knows.
		return message{}, &failure{kind: kindSessionLost, status: resp.StatusCode}
	case resp.StatusCode == http.StatusUnauthorized:
		return message{}, &failure{kind: kindRefusedCreds, status: resp.StatusCode}
	}
	// The headers and the message together are at most maxBytes: what
	// the gateway holds of one answer at once.
	budget := c.maxBytes - headerBytes(resp)
	if budget < 0 {
		return message{}, &failure{kind: kindTooLarge}
	}
	media := mediaType(resp.Header.Get("Content-Type"))
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	switch {
	case media == "text/event-stream" && ok:
		return c.stream(ctx, req, resp.Body, budget)
	case media == "application/json":
		body, err := readLimited(resp.Body, resp.ContentLength, budget)
		if err != nil {
			return message{}, c.readFailure(err)
		}
		m, perr := parseMessage(body)
		if perr == nil && m.err != nil && resp.StatusCode == http.StatusBadRequest && session != "" &&
			strings.Contains(strings.ToLower(m.err.message), "session") {
			// Some 2025-era servers answer 400 rather than 404 to a
			// session they no longer know (server-everything's express
			// wrapper of the TypeScript SDK: -32000 "Bad Request: No
			// valid session ID provided", after a restart): a lost session
			// all the same, or the upstream never serves again.
			return message{}, &failure{kind: kindSessionLost, status: resp.StatusCode}
		}
		if perr == nil && (m.err != nil || ok) {
			// A JSON-RPC error is the answer whatever the status
			// (2026-07-28 servers answer some with 400).
			return c.check(req, m)
		}
		if !ok {
			return message{}, &failure{kind: kindStatus, status: resp.StatusCode}
		}
		return message{}, &failure{kind: kindMalformed, detail: perr.Error()}
	case !ok:
		return message{}, &failure{kind: kindStatus, status: resp.StatusCode}
	}
	return message{}, &failure{kind: kindMalformed, detail: fmt.Sprintf("the answer's Content-Type is %q", resp.Header.Get("Content-Type"))}
}

// check accepts m as the answer to req.
func (c *client) check(req *request, m message) (message, error) {
	if m.method != "" || !sameID(m.id, req.id) {
		// A JSON-RPC error with a null id answers a request the server
		// could not read: it is the answer all the same.
		if m.method == "" && m.id == nil && m.err != nil {
			return m, nil
		}
		return message{}, &failure{kind: kindMalformed, detail: "the answer is not a response to the request"}
	}
	return m, nil
}

// stream reads the events of a text/event-stream answer until the response
// to req, handing the messages before it to req.during; max bounds each
// event.
func (c *client) stream(ctx context.Context, req *request, body io.Reader, max int64) (message, error) {
	sse := newSSEReader(body, max)
	for {
		data, err := sse.next()
		if err != nil {
			if errors.Is(err, errTooLarge) {
				return message{}, &failure{kind: kindTooLarge}
			}
			if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
				return message{}, &failure{kind: kindMalformed, detail: "the stream ended without an answer"}
			}
			return message{}, &failure{kind: kindUnreachable, err: err}
		}
		if len(bytes.TrimSpace(data)) == 0 {
			// An event without a message: the priming event a 2025-11-25
			// server that can resume its streams sends first (an event id
			// and an empty data field, for Last-Event-ID), or a keep-alive.
			continue
		}
		m, err := parseMessage(data)
		if err != nil {
			return message{}, &failure{kind: kindMalformed, detail: "an event of the stream: " + err.Error()}
		}
		if m.method == "" {
			if sameID(m.id, req.id) || (m.id == nil && m.err != nil) {
				return m, nil
			}
			continue // an answer to nothing of this request's
		}
		if req.during != nil {
			if err := req.during(c, req.ctx, m, req.progress); err != nil {
				return message{}, err
			}
		}
	}
}

// headerBytes is the size of resp's status line and header fields as
// HTTP/1.1 writes them: what an HTTP/2 answer's would be too, once
// decoded.
func headerBytes(resp *http.Response) int64 {
	n := int64(len("HTTP/1.1 \r\n\r\n") + len(resp.Status))
	for k, vs := range resp.Header {
		for _, v := range vs {
			n += int64(len(k) + len(": \r\n") + len(v))
		}
	}
	return n
}

// headersTooLarge reports whether err is net/http refusing an answer whose
// headers are past the transport's MaxResponseHeaderBytes (HTTP/1.1) or
// its header list size (HTTP/2). net/http has no value for either error:
// they are told by their text (TestOutcomeHeadersTooLarge holds it).
func headersTooLarge(err error) bool {
	s := err.Error()
	return strings.Contains(s, "server response headers exceeded") ||
		strings.Contains(s, "response header list larger than")
}

// readFailure words an error reading a JSON answer.
func (c *client) readFailure(err error) error {
	if errors.Is(err, errTooLarge) {
		return &failure{kind: kindTooLarge}
	}
	return &failure{kind: kindUnreachable, err: err}
}

// readLimited reads r to its end, or fails with errTooLarge past max
// bytes: a larger answer is not buffered.
// size is the answer's Content-Length, -1 when unknown: a known one
// sizes the buffer, and one past max is refused before a byte is read.
func readLimited(r io.Reader, size, max int64) ([]byte, error) {
	if size > max {
		return nil, errTooLarge
	}
	if size < 0 {
		size = 512
	}
	b := make([]byte, 0, size+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > max {
			return nil, errTooLarge
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// sameID reports whether the raw id is the integer id.
func sameID(raw wire.RawJSON, id int64) bool {
	var buf [20]byte
	return string(raw) == string(strconv.AppendInt(buf[:0], id, 10))
}

// postHTTP sends a message that has no answer (a notification, or the
// gateway's response to the upstream's request): 202 is success.
func (c *client) postHTTP(ctx context.Context, method string, body []byte) error {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	h := hreq.Header
	h["Content-Type"] = contentJSON
	h["Accept"] = acceptBoth
	h["Mcp-Protocol-Version"] = []string{c.version}
	if _, _, session := c.sessionOf(ctx); session != "" {
		h["Mcp-Session-Id"] = []string{session}
	}
	if !c.legacy && method != "" {
		h["Mcp-Method"] = []string{method}
	}
	if c.creds != nil {
		if err := c.creds.apply(ctx, h); err != nil {
			return err
		}
	}
	resp, err := c.posts.Do(hreq)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

func (c *client) currentSession() (uint64, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.generation, c.session
}

// close ends the upstream's connection: the breaker's probes, and a
// 2025-era upstream's session and the idle connections, or the child.
func (c *client) close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.breaker.close()
	return c.conn.close()
}

// closeHTTP ends a 2025-era upstream's sessions (the shared one and each
// caller's) and the idle connections.
func (c *client) closeHTTP() error {
	if c.sessions != nil {
		c.sessions.close()
	}
	var err error
	if _, session := c.currentSession(); session != "" {
		err = c.deleteSession(session)
	}
	if c.ownHTTP {
		c.http.CloseIdleConnections()
		c.posts.CloseIdleConnections()
	}
	return err
}

// gatewayInfo is the clientInfo the gateway sends: wymcp, at the version
// of the module the binary was built with.
func gatewayInfo() wire.RawJSON {
	version := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/wymcp/wymcp" && d.Version != "" {
				version = d.Version
			}
		}
	}
	b := append([]byte(`{"name":"wymcp","version":`), wire.AppendString(nil, version)...)
	return append(b, '}')
}

// mediaType returns the media type of a Content-Type value, lower case,
// without its parameters.
func mediaType(v string) string {
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	v = strings.TrimSpace(v)
	for i := 0; i < len(v); i++ {
		if c := v[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(v)
		}
	}
	return v
}

// setVersion fixes the revision spoken with the upstream.
func (c *client) setVersion(v string) {
	c.version = v
	c.versionHeader = []string{v}
}

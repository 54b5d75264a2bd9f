package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/wire"
)

// stdioConn is an upstream the gateway runs: a child process that speaks
// MCP on its stdin and stdout, one JSON-RPC message a line
// (docs/design.md §10d). The requests of every caller share the one pipe,
// told apart by their ids, which are the gateway's own (client.ids), so
// an answer goes to the request that has its id and to no other. The
// child is an actor's (childActor), under a supervisor (restarts) that
// starts it again when it exits or stops answering.
type stdioConn struct {
	c    *client
	spec childSpec
	sys  *actor.ActorSystem
	pid  *actor.PID
	sup  *restarts

	mu sync.Mutex
	// owned is the child the actor runs, and ready the one calls go to:
	// owned once its handshake is done, nil while there is none.
	owned, ready *child
	// retryAt is, while ready is nil, when the next start is due.
	retryAt time.Time
	closing bool
	// negotiated: the first handshake settled the revision; the next
	// children must speak it too.
	negotiated bool
	// first receives the first start's outcome, for Connect; started
	// says it was sent.
	first   chan error
	started bool
	// starts, when set (tests), receives each ready child's pid.
	starts chan int
	// restartNow, when set (tests), starts a failed child's successor
	// before its wait is over: a test of the wait need not race it.
	restartNow chan struct{}
	// perCaller: this child is one caller's (callerConns), so a request of
	// the child's is about a call of that caller's whatever is in flight.
	perCaller bool
	// ownSys: sys is this conn's to shut down (not a shared one's).
	ownSys bool
	// changed, while Watch follows the child (follow), is told of each
	// notifications/tools/list_changed and of each new child.
	changed func()
	// readied, while follow waits for a child to listen to, is closed
	// when the next one is ready (start).
	readied chan struct{}

	// answering bounds the goroutines answering the child's own requests
	// that no call can take.
	answering chan struct{}
	stderrLog telemetry.Limiter
	noiseLog  telemetry.Limiter
}

// child is one run of the upstream's program.
type child struct {
	conn  *stdioConn
	proc  *process
	stdin *os.File
	// writing is held while a line is written: one at a time.
	writing chan struct{}
	// dead is closed once the child has exited and its output is read;
	// why says why, written before.
	dead chan struct{}
	why  error
	// kill ends the process at once, once.
	killOnce sync.Once
	// calls are the requests in flight on this child, by id.
	mu    sync.Mutex
	calls map[int64]*pending
	// check asks the health loop for a ping now: a call timed out.
	check chan struct{}
	// readDone is closed when its stdout has been read to its end, and
	// exited when its process has ended.
	readDone, exited chan struct{}
	pidNum           int
}

// newChild is a started child: its process, the writing end of its stdin
// and its pid.
func newChild(proc *process, stdin *os.File, pid int) *child {
	return &child{
		proc:     proc,
		stdin:    stdin,
		writing:  make(chan struct{}, 1),
		dead:     make(chan struct{}),
		calls:    map[int64]*pending{},
		check:    make(chan struct{}, 1),
		readDone: make(chan struct{}),
		exited:   make(chan struct{}),
		pidNum:   pid,
	}
}

// settle takes the request id out of ch's calls, and returns it (nil when
// none is in flight): its answer, or its answer too large to read, is its
// one outcome, so that a later line naming the same id (a second answer)
// finds no call rather than racing the first in exchange's select.
func (ch *child) settle(id int64) *pending {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	p := ch.calls[id]
	delete(ch.calls, id)
	return p
}

// pending is one request in flight on a child.
type pending struct {
	answer chan message // the child's response
	during chan message // the messages the child sends for it meanwhile
	failed chan error   // its response could not be taken (too large)
	// call: a tools/call, which may be handed the child's own requests.
	call bool
	// listen: the gateway's subscriptions/listen (stdio_listen.go), handed
	// its acknowledgement and its end; it is no call, and never makes
	// another call's requests uncertain.
	listen bool
}

const (
	// duringQueue bounds what a call has not yet taken of the child's
	// messages for it (progress, requests): past it, progress is dropped
	// (it is advisory) and a request is declined.
	duringQueue = 16
	// maxAnswering bounds the goroutines answering the child's requests
	// that no call takes; past it they are dropped, and the child waits
	// for what it asked for as it chose to.
	maxAnswering = 16
	// maxStderrLine bounds a line of the child's stderr in the log.
	maxStderrLine = 1024
	// idPeek is how much of the start and end of a line past the limit is
	// kept to find its id (JSON-RPC libraries write it first or last).
	idPeek = 64
)

// Supervision's figures (docs/design.md §10d); variables so that tests
// can make them short.
var (
	// restartFirst is the first restart's wait, doubled per failure in a
	// row up to restartMax.
	restartFirst = 250 * time.Millisecond
	restartMax   = 30 * time.Second
	// restartBudget restarts within restartWindow; past it the upstream
	// is down for downWait, then tried afresh.
	restartBudget = 5
	restartWindow = time.Minute
	downWait      = time.Minute
	// healthEvery is how often an idle child is pinged.
	healthEvery = 15 * time.Second
	// stopGrace is each step's wait when a child is stopped: stdin
	// closed, then SIGTERM, then SIGKILL.
	stopGrace = 2 * time.Second
)

// handshakeKey marks a context whose exchanges go to one child, ready or
// not: its handshake's and its health pings'.
type handshakeKey struct{}

func newStdioClient(o Options) (*client, error) {
	spec, err := newChildSpec(o)
	if err != nil {
		return nil, fmt.Errorf("upstream %s: %w", o.Name, err)
	}
	c := &client{
		name:           o.Name,
		url:            "stdio:" + spec.path,
		addr:           filepath.Base(spec.path),
		maxBytes:       orDefault(o.MaxResponseBytes, defaultMaxBytes),
		callTimeout:    orDefault(o.CallTimeout, defaultCallTimeout),
		connectTimeout: orDefault(o.ConnectTimeout, defaultConnectTimeout),
		slots:          newShares(orDefault(o.MaxInFlight, defaultMaxInFlight)),
		retry:          newRetries(o.RetryIdempotent, orDefault(o.MaxInFlight, defaultMaxInFlight)),
		log:            o.Logger,
		versions:       knownVersions,
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	c.maxHeader = c.maxBytes
	if o.Versions != nil {
		c.versions = append([]string(nil), o.Versions...)
	}
	if o.BreakerMinCalls >= 0 {
		c.breaker = newBreaker(breakerConfig{minCalls: o.BreakerMinCalls, interval: o.BreakerProbeInterval}, c.probe, func(open bool, why string) { c.fails.CircuitChanged(open, why) })
	}
	c.finish(o)
	s := &stdioConn{c: c, spec: spec.forCaller("shared"), answering: make(chan struct{}, maxAnswering), first: make(chan error, 1)}
	s.stderrLog.Interval = 100 * time.Millisecond
	c.conn, c.stdio = s, s
	if o.PerCaller {
		c.conn = newCallerConns(c, s, spec, o.MaxCallers, o.callerIdle)
	}
	return c, nil
}

// open starts the child and waits for its first handshake, within ctx.
func (s *stdioConn) open(ctx context.Context) error {
	if s.sys == nil {
		s.sys, s.ownSys = newActorSystem(), true
	}
	s.pid = startSupervision(s)
	select {
	case err := <-s.first:
		return err
	case <-ctx.Done():
		return fmt.Errorf("the child did not complete its handshake: %w", ctx.Err())
	}
}

// childFor returns the child req goes to: the one ctx names (a handshake,
// a health ping), or the ready one. While none is ready (a restart, or an
// upstream down past its restart budget) the call is answered at once:
// it does not wait for the child.
func (s *stdioConn) childFor(ctx context.Context) (*child, error) {
	if ch, ok := ctx.Value(handshakeKey{}).(*child); ok {
		return ch, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closing:
		return nil, &failure{kind: kindClosed}
	case s.ready != nil:
		return s.ready, nil
	}
	wait := max(time.Until(s.retryAt), 0)
	// Rounded up: "in 0s" would invite a retry that fails the same way.
	wait = (wait + 100*time.Millisecond - 1).Truncate(100 * time.Millisecond)
	wait = max(wait, 100*time.Millisecond)
	return nil, &failure{kind: kindUnavailable, detail: wait.String(), err: fmt.Errorf("its process is not running; the next start in %s", wait)}
}

// exchange writes req's line to the child and waits for the answer with
// its id, handling what the child sends for it meanwhile.
func (s *stdioConn) exchange(ctx context.Context, req *request, _ string) (message, string, error) {
	ch, err := s.childFor(ctx)
	if err != nil {
		return message{}, "", err
	}
	p := &pending{answer: make(chan message, 1), during: make(chan message, duringQueue), failed: make(chan error, 1), call: req.during != nil}
	ch.mu.Lock()
	ch.calls[req.id] = p
	ch.mu.Unlock()
	defer func() {
		ch.mu.Lock()
		delete(ch.calls, req.id)
		ch.mu.Unlock()
	}()
	if err := s.write(ctx, ch, req.body); err != nil {
		return message{}, "", err
	}
	// What the child sent for the call before its answer is handled
	// first: the reader queued it first (dispatch), in the child's order.
	answered := func(m message) (message, string, error) {
		for {
			select {
			case d := <-p.during:
				s.during(ctx, ch, req, d)
				continue
			default:
			}
			m, err := s.c.check(req, m)
			return m, "", err
		}
	}
	for {
		select {
		case m := <-p.answer:
			return answered(m)
		case err := <-p.failed:
			return message{}, "", err
		case m := <-p.during:
			s.during(ctx, ch, req, m)
		case <-ch.dead:
			// An outcome read before the child died (its answer, or its
			// answer too large) is the outcome.
			select {
			case m := <-p.answer:
				return answered(m)
			case err := <-p.failed:
				return message{}, "", err
			default:
			}
			return message{}, "", ch.failure()
		case <-ctx.Done():
			if req.method != wire.MethodInitialize {
				// The stdio transport's cancellation, in both eras.
				go s.cancelled(ch, req.id, ctx.Err())
			}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				// A child past a call's deadline may have stopped
				// answering: the health loop asks it now.
				select {
				case ch.check <- struct{}{}:
				default:
				}
			}
			return message{}, "", ctx.Err()
		}
	}
}

// cancelled tells the child that the gateway gave up request id
// (notifications/cancelled), within connectTimeout. Best effort.
func (s *stdioConn) cancelled(ch *child, id int64, why error) {
	ctx, cancel := context.WithTimeout(own(context.Background()), s.c.connectTimeout)
	defer cancel()
	_ = s.write(ctx, ch, cancelBody(id, why))
}

// failure is the answer to a call whose child exited before it answered.
func (ch *child) failure() *failure {
	return &failure{kind: kindExited, err: ch.why}
}

// during handles a message the child sent for req before its answer:
// progress goes to the client, and the child's request is answered as an
// HTTP upstream's is (call.go's answerUpstream), on this child's pipe.
func (s *stdioConn) during(ctx context.Context, ch *child, req *request, m message) {
	if m.id == nil {
		if req.progress != 0 {
			s.c.relayProgress(req.ctx, m.params, req.progress)
		}
		return
	}
	body := s.c.answerUpstream(req.ctx, m)
	_ = s.write(ctx, ch, body)
}

// post writes a notification (or a response) to the ready child, or to
// the one ctx names.
func (s *stdioConn) post(ctx context.Context, _ string, body []byte) error {
	ch, err := s.childFor(ctx)
	if err != nil {
		return err
	}
	return s.write(ctx, ch, body)
}

// write writes body and a newline to the child, one line at a time, within
// ctx and connectTimeout: a child that does not read its stdin holds only
// its own calls, each no longer than that. A line cut short leaves the
// stream unreadable, and a child that reads nothing for connectTimeout has
// stopped answering: either way it is killed (and restarted).
func (s *stdioConn) write(ctx context.Context, ch *child, body []byte) error {
	select {
	case ch.writing <- struct{}{}:
	case <-ch.dead:
		return ch.failure()
	case <-ctx.Done():
		return ctx.Err()
	}
	held := true
	defer func() {
		if held {
			<-ch.writing
		}
	}()
	deadline := time.Now().Add(s.c.connectTimeout)
	ctxDeadline, bounded := ctx.Deadline()
	if bounded && ctxDeadline.Before(deadline) {
		deadline = ctxDeadline
	}
	_ = ch.stdin.SetWriteDeadline(deadline)
	line := append(body[:len(body):len(body)], '\n')
	n, err := ch.stdin.Write(line)
	if err == nil {
		return nil
	}
	switch {
	case n > 0 && errors.Is(err, os.ErrDeadlineExceeded) && bounded && !deadline.Before(ctxDeadline):
		// The call's deadline came in the middle of its line: the rest is
		// written without it (as any line, within connectTimeout), so
		// that the stream stays readable; the call is over.
		held = false
		go func() {
			defer func() { <-ch.writing }()
			_ = ch.stdin.SetWriteDeadline(time.Now().Add(s.c.connectTimeout))
			if _, err := ch.stdin.Write(line[n:]); err != nil {
				ch.kill(fmt.Errorf("it read nothing of its stdin for %s", s.c.connectTimeout))
			}
		}()
		<-ctx.Done() // its deadline, the same instant as the write's
		return ctx.Err()
	case n > 0:
		ch.kill(fmt.Errorf("a line to its stdin was cut short: %w", err))
	case errors.Is(err, os.ErrDeadlineExceeded) && bounded && !deadline.Before(ctxDeadline):
		<-ctx.Done() // its deadline, the same instant as the write's
		return ctx.Err()
	case errors.Is(err, os.ErrDeadlineExceeded):
		ch.kill(fmt.Errorf("it read nothing of its stdin for %s", s.c.connectTimeout))
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		ch.kill(fmt.Errorf("writing to its stdin: %w", err))
	}
	<-ch.dead
	return ch.failure()
}

// read reads the child's stdout to its end, a line at a time, each at most
// maxBytes: a longer one is not held, its call is answered with the
// too-large failure, and reading goes on at the next line.
func (s *stdioConn) read(ch *child, out *os.File) {
	defer close(ch.readDone)
	defer out.Close()
	br := bufio.NewReaderSize(out, 64<<10)
	var (
		line       []byte
		over       bool
		head, tail []byte
	)
	for {
		frag, err := br.ReadSlice('\n')
		switch {
		case over:
			tail = keepTail(tail, frag)
		case int64(len(line)+len(frag)) > s.c.maxBytes+1: // the newline is not the message's
			over = true
			head = append(head[:0], line[:min(len(line), idPeek)]...)
			if len(head) < idPeek {
				head = append(head, frag[:min(len(frag), idPeek-len(head))]...)
			}
			tail = keepTail(tail[:0], frag)
			line = nil
		default:
			line = append(line, frag...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				s.c.log.Warn("upstream's stdout could not be read", "upstream", s.c.name, "error", err.Error())
			}
			// The end of its stdout is the child's exit, as a rule; a child
			// that closed it and lives on cannot answer.
			select {
			case <-ch.exited:
			case <-time.After(time.Second):
				ch.kill(errors.New("it closed its stdout"))
			}
			return
		}
		if over {
			s.tooLarge(ch, head, tail)
			over = false
			continue
		}
		if m := bytes.TrimSpace(line); len(m) > 0 {
			s.dispatch(ch, m)
		}
		// The messages handed on keep their line: the next is a new one.
		line = nil
	}
}

// keepTail appends frag to tail and keeps the last idPeek bytes.
func keepTail(tail, frag []byte) []byte {
	tail = append(tail, frag...)
	if len(tail) > idPeek {
		tail = append(tail[:0], tail[len(tail)-idPeek:]...)
	}
	return tail
}

// tooLarge answers the call whose line was past maxBytes, when its id can
// be read where JSON-RPC libraries write it (first, after "jsonrpc", or
// last); a line whose id is not there is dropped and logged, and its call
// waits for its deadline. A line that shows a method is a request of the
// child's, whose id is the child's own: it fails no call of the gateway's.
func (s *stdioConn) tooLarge(ch *child, head, tail []byte) {
	id, ok := idAt(head, tail)
	if ok && !hasMethod(head, tail) {
		if p := ch.settle(id); p != nil {
			p.failed <- &failure{kind: kindTooLarge} // its only outcome
			return
		}
	}
	s.noise("a line larger than the limit, not read", "limit", s.c.maxBytes)
}

// idAt finds a response's id at the start of its line ({"jsonrpc":"2.0",
// "id":N or {"id":N) or at its end ("id":N}).
func idAt(head, tail []byte) (int64, bool) {
	for _, prefix := range []string{`{"jsonrpc":"2.0","id":`, `{"id":`} {
		if rest, ok := bytes.CutPrefix(head, []byte(prefix)); ok {
			end := bytes.IndexAny(rest, ",}")
			if end > 0 {
				if id, err := strconv.ParseInt(string(rest[:end]), 10, 64); err == nil {
					return id, true
				}
			}
		}
	}
	t := bytes.TrimRight(tail, " \t\r\n")
	if rest, ok := bytes.CutSuffix(t, []byte("}")); ok {
		i := bytes.LastIndex(rest, []byte(`"id":`))
		if i >= 0 {
			if id, err := strconv.ParseInt(string(bytes.TrimSpace(rest[i+len(`"id":`):])), 10, 64); err == nil {
				return id, true
			}
		}
	}
	return 0, false
}

// hasMethod reports whether the top-level members seen at a line's start
// (head, up to its first object or array) or at its end (tail, after its
// last one) include "method": the line is a request or a notification.
func hasMethod(head, tail []byte) bool {
	if len(head) > 0 {
		top := head[1:]
		if i := bytes.IndexAny(top, "{["); i >= 0 {
			top = top[:i]
		}
		if bytes.Contains(top, []byte(`"method":`)) {
			return true
		}
	}
	t := bytes.TrimRight(tail, " \t\r\n")
	t = bytes.TrimSuffix(t, []byte("}"))
	if i := bytes.LastIndexAny(t, "}]"); i >= 0 {
		t = t[i+1:]
	}
	return bytes.Contains(t, []byte(`"method":`))
}

// dispatch hands one message of the child's to whom it is for: a response
// to the request with its id; progress to the call with its token; a
// request of the child's to the one call in flight (the only one it can
// be about), otherwise answered on no caller's behalf (declined).
// Anything else is dropped: nothing the child sends grows what the
// gateway holds.
func (s *stdioConn) dispatch(ch *child, line []byte) {
	m, err := parseMessage(line)
	if err != nil {
		s.noise("a line of its stdout that is not JSON-RPC, dropped", "error", err.Error())
		return
	}
	switch {
	case m.method == "":
		id, err := strconv.ParseInt(string(m.id), 10, 64)
		if err != nil {
			s.noise("a response to no request of the gateway's, dropped", "id", string(m.id))
			return
		}
		if p := ch.settle(id); p != nil {
			p.answer <- m // its only outcome: settle took the call
		}
	case m.id == nil:
		switch m.method {
		case wire.MethodToolsListChanged:
			s.tellChanged()
			return
		case wire.MethodListenAcknowledged, methodCancelled:
			s.toListen(ch, m)
			return
		case "notifications/progress":
		default:
			return
		}
		token, ok := progressToken(m.params)
		if !ok {
			return
		}
		ch.mu.Lock()
		p := ch.calls[token]
		ch.mu.Unlock()
		if p != nil {
			select {
			case p.during <- m:
			default: // advisory: dropped when the call is behind
			}
		}
	default:
		// Whose call the request is about is certain only when the child
		// is one caller's, or one call is in flight on it (the gateway's
		// listen, which is no call, aside).
		ch.mu.Lock()
		var only *pending
		n := 0
		for _, p := range ch.calls {
			if p.listen {
				continue
			}
			n++
			if p.call && only == nil {
				only = p
			}
		}
		if n != 1 && !s.perCaller {
			only = nil
		}
		ch.mu.Unlock()
		if only != nil && only.call {
			select {
			case only.during <- m:
				return
			default:
			}
		}
		s.answerAlone(ch, m)
	}
}

// progressToken reads a progress notification's token as the gateway's
// (an integer).
func progressToken(params wire.RawJSON) (int64, bool) {
	raw, _ := strictjson.Member(params, "progressToken")
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

// answerAlone answers a request of the child's that no call can take, on
// no caller's behalf: declined as an HTTP upstream's is (answerUpstream).
func (s *stdioConn) answerAlone(ch *child, m message) {
	select {
	case s.answering <- struct{}{}:
	default:
		s.noise("a request of the child's dropped: too many unanswered", "method", m.method)
		return
	}
	go func() {
		defer func() { <-s.answering }()
		ctx, cancel := context.WithTimeout(own(context.Background()), s.c.connectTimeout)
		defer cancel()
		_ = s.write(ctx, ch, s.c.answerUpstream(ctx, m))
	}()
}

// noise logs what the child sent that the gateway drops, throttled.
func (s *stdioConn) noise(msg string, args ...any) {
	ok, suppressed := s.noiseLog.Allow(time.Now())
	if !ok {
		return
	}
	args = append(args, "upstream", s.c.name)
	if suppressed > 0 {
		args = append(args, "suppressed", suppressed)
	}
	s.c.log.Warn("upstream child: "+msg, args...)
}

// stderr reads the child's stderr to its end into the log, a line at a
// time (each cut at maxStderrLine), at most ten lines a second, the rest
// counted: a chatty child never blocks on a full pipe, and never floods
// the log.
func (s *stdioConn) stderr(pid int, r *os.File) {
	defer r.Close()
	br := bufio.NewReaderSize(r, maxStderrLine)
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line) < maxStderrLine {
			line = append(line, frag[:min(len(frag), maxStderrLine-len(line))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if text := bytes.TrimRight(line, "\r\n"); len(text) > 0 {
			if ok, suppressed := s.stderrLog.Allow(time.Now()); ok {
				args := []any{"upstream", s.c.name, "pid", pid, "line", string(text)}
				if suppressed > 0 {
					args = append(args, "suppressed", suppressed)
				}
				s.c.log.Info("upstream stderr", args...)
			}
		}
		line = line[:0]
		if err != nil {
			return
		}
	}
}

// health pings a child every healthEvery, and at once when a call on it
// timed out: one that does not answer within connectTimeout is killed,
// which restarts it.
func (s *stdioConn) health(ch *child) {
	t := time.NewTicker(healthEvery)
	defer t.Stop()
	for {
		select {
		case <-ch.dead:
			return
		case <-t.C:
		case <-ch.check:
		}
		ctx, cancel := context.WithTimeout(context.WithValue(own(context.Background()), handshakeKey{}, ch), s.c.connectTimeout)
		err := s.c.probe(ctx)
		cancel()
		var f *failure
		if err != nil && !(errors.As(err, &f) && f.kind == kindExited) {
			ch.kill(fmt.Errorf("it did not answer a ping within %s: %w", s.c.connectTimeout, err))
		}
	}
}

// close stops the child (stdin closed, SIGTERM, SIGKILL: stopChild) and
// its supervision.
func (s *stdioConn) close() error {
	s.mu.Lock()
	s.closing = true
	s.ready = nil
	s.mu.Unlock()
	if s.sys == nil || s.pid == nil {
		return nil
	}
	_, _ = s.sys.Root.StopFuture(s.pid).Result()
	if s.ownSys {
		s.sys.Shutdown()
	}
	return nil
}

// kill ends the child's process group at once; why is what its calls are
// told.
func (ch *child) kill(why error) {
	ch.killOnce.Do(func() {
		ch.why = why
		ch.proc.kill()
	})
}

// Command wymcp serves an MCP 2026-07-28 tools endpoint over Streamable HTTP
// with one of its built-in tool sets.
//
//	go run ./cmd/wymcp                      # the demo set on http://127.0.0.1:8080/mcp
//	go run ./cmd/wymcp -addr :9000 -allow-origin https://app.example
//
// It prints one line to stdout once the listener is open,
// "wymcp listening on http://<addr><path>" (and a second,
// "wymcp metrics on http://<addr>/metrics", with -metrics-addr), and logs
// to stderr through one slog handler (-log-format text or json: logging.go).
// Besides the MCP endpoint it serves GET /healthz (alive) and GET /readyz
// (ready for calls; 503 once a drain begins). On SIGINT or SIGTERM it
// drains (drain.go has the timeline): /readyz turns 503, every answer
// closes its connection, new connections are refused (or, with
// -drain-accept, accepted until -drain-delay ends; without it, a probe of
// /readyz on a new connection is refused), the connections in hand wind down for up to
// -drain-delay (5 s), the calls in flight finish and are answered (up to
// -shutdown-timeout, 65 s, more: longer than any demo tool's deadline), and
// it exits 0. A call still running when -shutdown-timeout ends is cut
// short: it is answered, HTTP 200 and an isError result saying the server
// is shutting down, before its connection closes, and the exit status is
// still 0, since every call admitted was answered.
//
// With -upstreams FILE it is also a gateway (package gateway; gateway.go,
// upstreams.go): the tools of the upstream MCP servers the file lists are
// served beside the -tools set (-tools none: instead of it), each call
// forwarded, at -path or on the file's servers: views, each at its path.
// They are connected before anything is served; their tools are followed
// while it serves (at each upstream's ttlMs, or its refresh interval), and
// SIGHUP reads the file again; either replaces the served tools without a
// restart.
//
// Exit statuses: 0 after a stop (or -h); 1 when the server cannot start
// or serve (a listener or an OpenTelemetry exporter that fails; an
// upstream down is tried again in the background, never failing the
// start); 2 for a bad command line (a bad -upstreams file included). A
// second signal ends the process at once, killed by that signal (a shell
// reports 128 + its number: 143 for SIGTERM).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/protocol"
)

// version is the binary's version: the default of -version, which every
// result's _meta sends in serverInfo.
const version = "0.1.0"

func main() {
	signalled, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// After the first signal, restore the default handling so that a
		// second one ends the process without waiting for the drain, and
		// only then begin the drain: a signal sent once the drain shows
		// (readiness 503) must find the default handling in place.
		<-signalled.Done()
		stop()
		cancel()
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	cancel()
	os.Exit(exitCode(err, os.Stderr))
}

// usageError is a bad command line: exit status 2, as flag.ExitOnError does.
// reported marks an error the flag package has already printed.
type usageError struct {
	err      error
	reported bool
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// loggedError is an error run has logged already, through the run's
// logger: exit status 1, and nothing more on stderr.
type loggedError struct{ err error }

func (e loggedError) Error() string { return e.err.Error() }
func (e loggedError) Unwrap() error { return e.err }

// exitCode maps run's error to the process status, reporting it on stderr
// unless it was.
func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	var le loggedError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &le):
		return 1
	case errors.As(err, &ue):
		if !ue.reported {
			fmt.Fprintln(stderr, "wymcp:", err)
		}
		return 2
	default:
		fmt.Fprintln(stderr, "wymcp:", err)
		return 1
	}
}

// config is the parsed command line.
type config struct {
	addr, path, toolSet string
	// name and version are -name and -version: the serverInfo every
	// result names (serverName has the default of name).
	name, version string
	// stateKeyFile is -state-key-file; its keys are in opts.StateKeys.
	stateKeyFile string
	opts         wymcp.Options
	auth         authFlags
	// The http.Server's limits on slow and abusive clients.
	readHeaderTimeout, readTimeout, idleTimeout time.Duration
	maxHeaderBytes                              int
	// The stop (drain.go).
	drainDelay, shutdownTimeout time.Duration
	drainAccept                 bool
	// logFormat is -log-format: logText or logJSON.
	logFormat string
	// metricsAddr is -metrics-addr: where Prometheus scrapes; "" for none.
	metricsAddr string
	// upstreamsFile is -upstreams, and upstreams the file as read at
	// start (nil without the flag).
	upstreamsFile string
	upstreams     *upstreamsConfig
}

// The health endpoints, outside the MCP path (drain.go).
const (
	healthzPath = "/healthz"
	readyzPath  = "/readyz"
)

// envAddr is the variable that, set, is the default of -addr. The
// container image sets it instead of passing -addr, so that its health
// check (deploy/healthcheck -addr-env) probes the address the server
// listens on, whatever it is.
const envAddr = "WYMCP_ADDR"

// usageHead and usageEnv frame the flags in -h: what the binary does, and
// the environment variables, the only way to configure its telemetry.
const (
	usageHead = `Usage: wymcp [flags]

wymcp serves an MCP 2026-07-28 tools endpoint over Streamable HTTP, with
GET /healthz and GET /readyz beside it. Once listening it prints
"wymcp listening on <URL>" to stdout; it logs to stderr.

Flags:
`
	usageEnv = `
Environment:
  ` + envAddr + `
    	the default of -addr (the container image sets it, and its health check
    	probes it)
  OTEL_SDK_DISABLED=true
    	install no telemetry
  OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER
    	otlp, console (to stderr) or none; unset, a signal is sent over OTLP
    	only when an OTLP endpoint is set for it
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT
    	the collector, an http or https URL (http://localhost:4318)
  OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL
    	http/protobuf (the default) or grpc
  OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    	the resource (service.name defaults to wymcp)
  Other OTEL_* variables (headers, TLS, timeouts, sampling, batching, the
  export interval) are read by the OpenTelemetry SDK and its exporters.
  A bad value of one named above exits 2 with a line naming it.
`
)

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("wymcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageHead)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), usageEnv)
	}
	defaultAddr := "127.0.0.1:8080"
	if v := os.Getenv(envAddr); v != "" {
		defaultAddr = v
	}
	fs.StringVar(&c.addr, "addr", defaultAddr, "TCP `address` to listen on (port 0 picks a free port); the default is $"+envAddr+" when set")
	fs.StringVar(&c.path, "path", "/mcp", "URL `path` of the MCP endpoint")
	fs.StringVar(&c.toolSet, "tools", "demo", "tool `set` to serve: "+strings.Join(toolSetNames(), ", ")+" (none: only the tools of -upstreams)")
	fs.StringVar(&c.name, "name", "", "server `name` every result's serverInfo (and a 2025-era initialize) names (default: after -tools: wymcp-demo for demo, wymcp-conformance for conformance, wymcp for none)")
	fs.StringVar(&c.version, "version", version, "server `version` every result's serverInfo names")
	fs.StringVar(&c.upstreamsFile, "upstreams", "", "YAML (or JSON) `file` of upstream MCP servers whose tools are served too, each under its prefix (deploy/upstreams.example.yaml); re-read on SIGHUP")
	versions := fs.String("versions", "2026-07-28", "protocol `revisions` served, comma-separated: 2026-07-28 and any of 2025-11-25, 2025-06-18, whose clients (initialize, then the 2025 shapes) are then served on the same endpoint, statelessly")
	fs.Func("allow-origin", "browser `origin` allowed besides loopback ones (repeatable)", func(s string) error {
		c.opts.AllowedOrigins = append(c.opts.AllowedOrigins, s)
		return nil
	})
	fs.Func("allow-host", "`host` allowed in the Host header (DNS-rebinding protection; repeatable); on a non-loopback listener, the only ones allowed", func(s string) error {
		c.opts.AllowedHosts = append(c.opts.AllowedHosts, s)
		return nil
	})
	fs.Func("trusted-proxies", "comma-separated `CIDRs` of proxies (nginx, a load balancer) whose X-Forwarded-For is believed: a caller without auth is told apart by the address they forward for (rate limits, listen streams per caller, perCaller children, an upstream's fair shares and circuit breaker); repeatable", func(v string) error {
		for _, f := range strings.Split(v, ",") {
			p, err := parsePrefix(strings.TrimSpace(f))
			if err != nil {
				return err
			}
			c.opts.TrustedProxies = append(c.opts.TrustedProxies, p)
		}
		return nil
	})
	fs.IntVar(&c.opts.MaxInFlight, "max-in-flight", 0, "`requests` answered at once before 503 + Retry-After (0: 4096, negative: unbounded)")
	fs.IntVar(&c.opts.MaxListenStreams, "max-listen-streams", 0, "subscriptions/listen `streams` open at once, every caller's, before 503 + Retry-After; served when the tool set can change (-upstreams, -tools conformance); streams take no -max-in-flight place (0: 1024, negative: unbounded)")
	fs.IntVar(&c.opts.MaxListenStreamsPerCaller, "max-listen-streams-per-caller", 0, "subscriptions/listen `streams` one caller holds at once (the authenticated subject, else the client's address: see -trusted-proxies) before 429 (0: 16, negative: unbounded)")
	fs.Int64Var(&c.opts.MaxBodyBytes, "max-body", 0, "largest request body in `bytes` (0: 4 MiB)")
	fs.Int64Var(&c.opts.AnswerBudget, "answer-budget", 0, "`bytes` of tools/call answers held at once for clients still to read them; a call that finds it spent is refused 503 + Retry-After before its tool runs (0: 64 MiB, negative: unbounded)")
	fs.DurationVar(&c.readHeaderTimeout, "read-header-timeout", 5*time.Second, "time a client has to send a request's headers (slowloris)")
	fs.DurationVar(&c.readTimeout, "read-timeout", 30*time.Second, "time a client has to send a whole request, headers and body")
	fs.DurationVar(&c.idleTimeout, "idle-timeout", 120*time.Second, "how long an idle keep-alive connection is kept open")
	fs.IntVar(&c.maxHeaderBytes, "max-header-bytes", 64<<10, "largest request line and headers in `bytes`; past it, 431")
	fs.DurationVar(&c.opts.WriteTimeout, "write-timeout", 30*time.Second, "time a client has to take one answer (not the tool's run time); a client that stops reading loses its place")
	fs.DurationVar(&c.drainDelay, "drain-delay", 5*time.Second, "on SIGTERM, how long the server stays a lame duck (/readyz 503, every answer closing its connection) while the connections it has wind down; longer than a proxy's idle keep-alive to it (nginx: upstream keepalive_timeout) and than a balancer's time to notice /readyz; 0: stop at once")
	fs.BoolVar(&c.drainAccept, "drain-accept", false, "keep accepting new connections during -drain-delay, for a balancer that routes by /readyz (a Kubernetes Service); by default they are refused from SIGTERM on, which a proxy that does not probe (nginx open source) resends elsewhere")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 65*time.Second, "after -drain-delay, how long calls in flight have to finish and be answered; above the longest call (a tool's deadline, 60 s by default, plus 1 s). A call still running then is answered as cut short (an isError result saying the server is shutting down) and its connection closed")
	c.auth.register(fs)
	fs.StringVar(&c.stateKeyFile, "state-key-file", "", "`file` of the keys that seal multi-round-trip requestState: one per line, newest first, each the standard base64 of 32 random bytes (openssl rand -base64 32); replicas must share it. Without it a random key is made at start")
	fs.DurationVar(&c.opts.StateTTL, "state-ttl", 0, "how long a multi-round-trip requestState stays valid: the client's time to answer (0: 5m)")
	fs.StringVar(&c.logFormat, "log-format", logText, "`format` of the log on stderr: text (slog's key=value lines; a multi-line value such as a stack follows its line, indented) or json (one object per line, for a log collector)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://`host:port`/metrics, on a listener of its own (port 0 picks a free port, printed on stdout); off by default")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		// The flag package has already printed the error and the usage.
		return nil, usageError{err: err, reported: true}
	}
	if fs.NArg() > 0 {
		return nil, usageError{err: fmt.Errorf("unexpected arguments: %q", fs.Args())}
	}
	// serverInfo's name and version are required strings (wymcp.New).
	if strings.TrimSpace(c.version) == "" {
		return nil, usageError{err: errors.New("-version must not be empty")}
	}
	if c.name != "" && strings.TrimSpace(c.name) == "" {
		return nil, usageError{err: errors.New("-name must not be blank")}
	}
	var err error
	if c.opts.Versions, err = parseVersions(*versions); err != nil {
		return nil, usageError{err: fmt.Errorf("-versions %q: %w", *versions, err)}
	}
	// A zero or negative limit would mean "none" to net/http (or fall back
	// to another timeout); refuse it rather than serve unprotected.
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"read-header-timeout", c.readHeaderTimeout}, {"read-timeout", c.readTimeout}, {"idle-timeout", c.idleTimeout}, {"write-timeout", c.opts.WriteTimeout}, {"shutdown-timeout", c.shutdownTimeout}} {
		if d.v <= 0 {
			return nil, usageError{err: fmt.Errorf("-%s %v must be positive", d.name, d.v)}
		}
	}
	if c.logFormat != logText && c.logFormat != logJSON {
		return nil, usageError{err: fmt.Errorf("-log-format %q: want text or json", c.logFormat)}
	}
	if c.metricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.metricsAddr); err != nil {
			return nil, usageError{err: fmt.Errorf("-metrics-addr %q: want host:port", c.metricsAddr)}
		}
	}
	if c.drainDelay < 0 {
		return nil, usageError{err: fmt.Errorf("-drain-delay %v must not be negative (0: no drain)", c.drainDelay)}
	}
	if c.maxHeaderBytes <= 0 {
		return nil, usageError{err: fmt.Errorf("-max-header-bytes %d must be positive", c.maxHeaderBytes)}
	}
	// http.ServeMux panics on a pattern it cannot parse; refuse it here.
	if !strings.HasPrefix(c.path, "/") || strings.ContainsAny(c.path, " \t{}") {
		return nil, usageError{err: fmt.Errorf("-path %q must start with / and hold no spaces or braces", c.path)}
	}
	if c.path == healthzPath || c.path == readyzPath {
		return nil, usageError{err: fmt.Errorf("-path %q is taken by a health endpoint", c.path)}
	}
	if err := c.auth.validate(c.addr); err != nil {
		return nil, usageError{err: err}
	}
	if c.opts.StateTTL < 0 {
		return nil, usageError{err: fmt.Errorf("-state-ttl %v must not be negative", c.opts.StateTTL)}
	}
	if c.upstreamsFile != "" {
		if c.upstreams, err = loadUpstreams(c.upstreamsFile, c.auth.enabled()); err != nil {
			return nil, usageError{err: err}
		}
	} else if c.toolSet == toolSetNone {
		return nil, usageError{err: errors.New("-tools none needs -upstreams: there would be no tool to serve")}
	}
	if c.stateKeyFile != "" {
		keys, err := readStateKeys(c.stateKeyFile)
		if err != nil {
			return nil, usageError{err: err}
		}
		c.opts.StateKeys = keys
	}
	return c, nil
}

// run is the whole program: it serves until ctx is done, then shuts down
// gracefully and returns nil. It writes the start lines to stdout and logs
// to stderr.
//
// A bad command line or configuration is a usageError, reported as a plain
// line before anything is logged (exit status 2). From the logger on, any
// other failure is logged through it and returned as a loggedError (exit
// status 1), so that with -log-format json even the last line is JSON.
// Nothing is logged before everything that can fail has succeeded: the
// telemetry lines, the -state-key-file warning and "serving" come after
// the listeners are open, so a fatal error is the first line of a failed
// start.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	return serve(ctx, c, stdout, stderr)
}

// serve is run once the command line is parsed.
func serve(ctx context.Context, c *config, stdout, stderr io.Writer) error {
	ts, err := buildToolSet(c.toolSet)
	if err != nil {
		return err
	}
	var change *toolChange
	if toolSets[c.toolSet].changes && c.upstreams == nil {
		if change, err = newToolChange(); err != nil {
			return err
		}
		ts = append(ts, change.trigger)
		c.opts.ToolsChange = true
	}
	if ts, err = c.auth.scopeTools(ts); err != nil {
		return err
	}
	logger := newLogger(c.logFormat, stderr)
	defer useLogger(logger)()
	c.opts.Logger = logger
	fail := func(err error) error {
		if _, ok := errors.AsType[usageError](err); ok {
			return err
		}
		logger.Error("wymcp: fatal", "err", err)
		return loggedError{err}
	}

	var prom sdkmetric.Reader
	var promHandler http.Handler
	if c.metricsAddr != "" {
		if prom, promHandler, err = newPrometheus(logger); err != nil {
			return fail(err)
		}
	}
	tel, err := setupOTel(ctx, os.Getenv, stderr, logger, prom)
	if err != nil {
		return fail(err)
	}
	// Deferred, so it runs after the drain below: the spans of the last
	// calls are flushed too.
	defer flushOTel(tel, logger)
	c.opts.TracerProvider, c.opts.MeterProvider = tel.tracerProvider, tel.meterProvider

	// Listen first, so the line names the real address (-addr with port 0),
	// and so that the server's own URL, the default audience of its tokens,
	// is known. Nothing is served from the listener until everything that
	// can fail is done, so /readyz is never 200 before calls can be served.
	l, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fail(err)
	}
	ln := &closeOnceListener{Listener: l}
	base := fmt.Sprintf("http://%s", ln.Addr())
	views := c.views()
	serverURL := base + views[0].Path
	// The gateway (gateway.go): the tool set, then the upstreams, which
	// New connects before anything is served: "listening" means their
	// tools are served. Their CLIENT spans and hop metrics go where the
	// server's telemetry goes.
	if c.upstreams != nil {
		// A SIGHUP may change the set, even of a file without upstreams.
		c.opts.ToolsChange = true
	}
	opts := gateway.Options{
		Info:      protocol.Implementation{Name: c.serverName(), Version: c.version},
		Server:    c.opts,
		Tools:     ts,
		Upstreams: upstreamOptions(c.upstreams),
		Views:     gatewayViews(c.upstreams),
	}
	var prms []*authMount
	if c.auth.enabled() {
		if prms, err = c.viewAuth(ctx, &opts, ts, base, logger); err != nil {
			ln.Close()
			return fail(err)
		}
	}
	gw, err := gateway.New(ctx, opts)
	if err != nil {
		ln.Close()
		return fail(err)
	}
	// Deferred after flushOTel, so run before it: after the drain (the
	// stop below, whose Shutdown closes it already), and at once on a
	// failed start.
	defer gw.Close()
	if ctx.Err() != nil {
		// Stopped while connecting: nothing was served.
		ln.Close()
		return gw.Shutdown(context.WithoutCancel(ctx))
	}
	if change != nil {
		// No upstreams: the gateway's one server serves the set, and the
		// trigger replaces it there (toolchange.go).
		change.bind(gw.View(""), ts)
	}
	if c.upstreams != nil {
		// SIGHUP re-reads the file (reloader.reload).
		rl := newReloader(gw, c.upstreams, c.auth.enabled(), logger)
		hup, done := make(chan os.Signal, 1), make(chan struct{})
		signal.Notify(hup, syscall.SIGHUP)
		defer func() {
			signal.Stop(hup)
			close(done)
		}()
		go func() {
			for {
				select {
				case <-hup:
					rl.reload(ctx)
				case <-ctx.Done():
					return
				case <-done:
					return
				}
			}
		}()
	}
	var metrics *metricsServer
	if c.metricsAddr != "" {
		if metrics, err = listenMetrics(c.metricsAddr, promHandler, logger); err != nil {
			ln.Close()
			return fail(errors.Join(err, gw.Shutdown(context.WithoutCancel(ctx))))
		}
		// After the MCP server has stopped (deferred calls run last first):
		// a drain can be watched to its end.
		defer metrics.close()
	}

	mux := http.NewServeMux()
	paths := make([]string, len(views))
	for i, v := range views {
		if c.curated() {
			mux.Handle(exactPattern(v.Path), gw.View(v.Path))
		} else {
			mux.Handle(c.path, gw.View(""))
		}
		paths[i] = v.Path
	}
	mux.HandleFunc("GET "+healthzPath, healthz)
	mux.Handle("GET "+readyzPath, gw.ReadinessHandler())
	for _, m := range prms {
		// RFC 9728 Protected Resource Metadata, where MCP clients look for
		// it: the path-inserted well-known URI, then (one resource only)
		// the root one.
		for pattern, h := range m.metadata.Routes() {
			mux.Handle(pattern, h)
			if m.onlyFirst {
				break
			}
		}
	}
	conns := &connTracker{}
	httpSrv := &http.Server{
		Addr:    c.addr,
		Handler: closeWhileDraining(gw, mux),
		// Headers must arrive promptly (slowloris); the body, bounded by
		// -max-body, within ReadTimeout.
		ReadHeaderTimeout: c.readHeaderTimeout,
		ReadTimeout:       c.readTimeout,
		// No WriteTimeout: it would cut off the answer of any call longer
		// than it, and a tool runs up to its own deadline (60 s by default,
		// ten minutes for sleep). The per-tool deadlines bound each answer.
		WriteTimeout:   0,
		IdleTimeout:    c.idleTimeout,
		MaxHeaderBytes: c.maxHeaderBytes,
		ErrorLog:       slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		// The stop waits on the connections' states (drain.go).
		ConnState: conns.track,
	}

	fmt.Fprintf(stdout, "wymcp listening on %s\n", serverURL)
	metricsURL := ""
	if metrics != nil {
		metricsURL = metrics.url
		fmt.Fprintf(stdout, "wymcp metrics on %s\n", metricsURL)
		go metrics.serve(logger)
	}
	tel.logStart(logger, metricsURL)
	if c.stateKeyFile == "" {
		logger.Warn("no -state-key-file: multi-round-trip requestState is sealed with a random key made at start; " +
			"a call waiting for the client's input will not survive a restart, nor be served by another replica")
	}
	logger.Info("serving", "addr", ln.Addr().String(), "path", strings.Join(paths, ","), "name", c.serverName(), "version", c.version, "tools", c.toolSet, "upstreams", len(opts.Upstreams), "versions", strings.Join(c.opts.Versions, ","))

	served := make(chan error, 1)
	go func() { served <- httpSrv.Serve(ln) }()

	select {
	case err := <-served:
		// The listener failed; nothing is being served any more.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.shutdownTimeout)
		defer cancel()
		return fail(errors.Join(err, gw.Shutdown(sctx)))
	case <-ctx.Done():
	}

	st := &stopper{hs: httpSrv, ln: ln, conns: conns, srv: gw, logger: logger,
		delay: c.drainDelay, accept: c.drainAccept, timeout: c.shutdownTimeout}
	if err := st.stop(); err != nil {
		return fail(err)
	}
	if err := <-served; !ln.servedUntilClosed(err) {
		return fail(err)
	}
	logger.Info("stopped")
	return nil
}

// serverName is the serverInfo name: -name, or the tool set's own
// (toolSet.serverName).
func (c *config) serverName() string {
	if c.name != "" {
		return c.name
	}
	return toolSets[c.toolSet].serverName
}

// servableVersions are the revisions -versions may name: what wymcp serves.
var servableVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

// parseVersions reads -versions: revisions wymcp serves, comma-separated,
// 2026-07-28 among them, none twice.
func parseVersions(list string) ([]string, error) {
	var out []string
	for v := range strings.SplitSeq(list, ",") {
		v = strings.TrimSpace(v)
		switch {
		case !slices.Contains(servableVersions, v):
			return nil, fmt.Errorf("%q is not one of %s", v, strings.Join(servableVersions, ", "))
		case slices.Contains(out, v):
			return nil, fmt.Errorf("%s is listed twice", v)
		}
		out = append(out, v)
	}
	if !slices.Contains(out, "2026-07-28") {
		return nil, errors.New("2026-07-28 must be listed")
	}
	return out, nil
}

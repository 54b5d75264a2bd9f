// Command wymcp serves an MCP 2026-07-28 tools endpoint over Streamable HTTP
// with one of its built-in tool sets.
//
//	go run ./cmd/wymcp                      # the demo set on http://127.0.0.1:8080/mcp
//	go run ./cmd/wymcp -addr :9000 -allow-origin https://app.example
//
// It prints one line to stdout once the listener is open,
// "wymcp listening on http://<addr><path>", logs to stderr, and on SIGINT or
// SIGTERM stops accepting connections, lets the calls in flight finish and
// be answered (up to 30 s), and exits 0. A second signal exits at once.
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
	"strings"
	"syscall"
	"time"

	"github.com/wymcp/wymcp"
)

// version is the demo server's version, sent in every result's _meta.
const version = "0.1.0"

// shutdownTimeout bounds the graceful part of shutdown: calls still running
// after it are abandoned and run returns the context's error.
const shutdownTimeout = 30 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, restore the default handling so that a
		// second one ends the process without waiting for the drain.
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
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

// exitCode maps run's error to the process status, reporting it on stderr.
func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
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
	// stateKeyFile is -state-key-file; its keys are in opts.StateKeys.
	stateKeyFile string
	opts         wymcp.Options
	// The http.Server's limits on slow and abusive clients.
	readHeaderTimeout, readTimeout, idleTimeout time.Duration
	maxHeaderBytes                              int
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("wymcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "TCP `address` to listen on (port 0 picks a free port)")
	fs.StringVar(&c.path, "path", "/mcp", "URL `path` of the MCP endpoint")
	fs.StringVar(&c.toolSet, "tools", "demo", "tool `set` to serve: "+strings.Join(toolSetNames(), ", "))
	fs.Func("allow-origin", "browser `origin` allowed besides loopback ones (repeatable)", func(s string) error {
		c.opts.AllowedOrigins = append(c.opts.AllowedOrigins, s)
		return nil
	})
	fs.Func("allow-host", "Host `value` allowed (DNS-rebinding protection; repeatable); on a non-loopback listener, the only ones allowed", func(s string) error {
		c.opts.AllowedHosts = append(c.opts.AllowedHosts, s)
		return nil
	})
	fs.IntVar(&c.opts.MaxInFlight, "max-in-flight", 0, "`requests` answered at once before 503 + Retry-After (0: 4096, negative: unbounded)")
	fs.Int64Var(&c.opts.MaxBodyBytes, "max-body", 0, "largest request body in `bytes` (0: 4 MiB)")
	fs.DurationVar(&c.readHeaderTimeout, "read-header-timeout", 5*time.Second, "time a client has to send a request's headers (slowloris)")
	fs.DurationVar(&c.readTimeout, "read-timeout", 30*time.Second, "time a client has to send a whole request, headers and body")
	fs.DurationVar(&c.idleTimeout, "idle-timeout", 120*time.Second, "how long an idle keep-alive connection is kept open")
	fs.IntVar(&c.maxHeaderBytes, "max-header-bytes", 64<<10, "largest request line and headers in `bytes`; past it, 431")
	fs.DurationVar(&c.opts.WriteTimeout, "write-timeout", 30*time.Second, "time a client has to take one answer (not the tool's run time); a client that stops reading loses its place")
	fs.StringVar(&c.stateKeyFile, "state-key-file", "", "`file` of the keys that seal multi-round-trip requestState: one per line, newest first, each the standard base64 of 32 random bytes (openssl rand -base64 32); replicas must share it. Without it a random key is made at start")
	fs.DurationVar(&c.opts.StateTTL, "state-ttl", 0, "how long a multi-round-trip requestState stays valid: the client's time to answer (0: 5m)")
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
	// A zero or negative limit would mean "none" to net/http (or fall back
	// to another timeout); refuse it rather than serve unprotected.
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"read-header-timeout", c.readHeaderTimeout}, {"read-timeout", c.readTimeout}, {"idle-timeout", c.idleTimeout}, {"write-timeout", c.opts.WriteTimeout}} {
		if d.v <= 0 {
			return nil, usageError{err: fmt.Errorf("-%s %v must be positive", d.name, d.v)}
		}
	}
	if c.maxHeaderBytes <= 0 {
		return nil, usageError{err: fmt.Errorf("-max-header-bytes %d must be positive", c.maxHeaderBytes)}
	}
	// http.ServeMux panics on a pattern it cannot parse; refuse it here.
	if !strings.HasPrefix(c.path, "/") || strings.ContainsAny(c.path, " \t{}") {
		return nil, usageError{err: fmt.Errorf("-path %q must start with / and hold no spaces or braces", c.path)}
	}
	if c.opts.StateTTL < 0 {
		return nil, usageError{err: fmt.Errorf("-state-ttl %v must not be negative", c.opts.StateTTL)}
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
// gracefully and returns nil. It writes the one "listening" line to stdout
// and logs to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	ts, err := buildToolSet(c.toolSet)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	c.opts.Logger = logger
	if c.opts.StateKeys == nil {
		logger.Warn("no -state-key-file: multi-round-trip requestState is sealed with a random key made at start; " +
			"a call waiting for the client's input will not survive a restart, nor be served by another replica")
	}
	tel, err := setupOTel(ctx, os.Getenv, stderr)
	if err != nil {
		return err
	}
	// Deferred, so it runs after the drain below: the spans of the last
	// calls are flushed too.
	defer flushOTel(tel, logger)
	c.opts.TracerProvider, c.opts.MeterProvider = tel.tracerProvider, tel.meterProvider
	srv, err := wymcp.New(wymcp.Implementation{Name: "wymcp-demo", Version: version}, &c.opts, ts...)
	if err != nil {
		return err
	}

	mux := http.NewServeMux()
	mux.Handle(c.path, srv)
	httpSrv := &http.Server{
		Addr:    c.addr,
		Handler: mux,
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
	}

	// Listen first, so the line names the real address (-addr with port 0).
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wymcp listening on http://%s%s\n", ln.Addr(), c.path)
	logger.Info("serving", "addr", ln.Addr().String(), "path", c.path, "tools", c.toolSet, "count", len(ts))

	served := make(chan error, 1)
	go func() { served <- httpSrv.Serve(ln) }()

	select {
	case err := <-served:
		// The listener failed; nothing is being served any more.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		return errors.Join(err, srv.Shutdown(sctx))
	case <-ctx.Done():
	}

	logger.Info("shutting down", "timeout", shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	// http.Server.Shutdown closes the listener and waits for every handler
	// to return, so calls in flight are answered; then the MCP server stops
	// its actors.
	if err := httpSrv.Shutdown(sctx); err != nil {
		// Handlers still running at the deadline (a client that stopped
		// reading, a tool past its grace) must not hold the process: close
		// their connections and report the unclean stop.
		_ = httpSrv.Close()
		return fmt.Errorf("http shutdown: %w", err)
	}
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("mcp shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

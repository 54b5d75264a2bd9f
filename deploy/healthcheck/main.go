// Command healthcheck probes one URL and exits 0 when it answers 200 OK,
// 1 otherwise (2 for a bad command line). It is the container image's
// HEALTHCHECK: the final image (distroless) has no shell and no curl, so a
// tiny static binary does it.
//
//	healthcheck [-timeout 2s] http://127.0.0.1:8080/readyz
//	healthcheck [-timeout 2s] -addr-env WYMCP_ADDR /readyz
//
// With -addr-env the URL is built from the listen address in that
// environment variable, the one cmd/wymcp takes as its -addr: the image
// sets it once, for the server and its health check alike, so the check
// follows the server to another address. A listen address on every
// interface (0.0.0.0:8080, :8080, [::]:8080) is probed on the loopback
// address of its family.
//
// It follows no redirects and uses no proxy (HTTP_PROXY is ignored): the
// probe is of this container, on its loopback address. Standard library
// only.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 2*time.Second, "how long to wait for the answer")
	addrEnv := fs.String("addr-env", "", "the environment `variable` holding the server's listen address (host:port); the argument is then the path to probe")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: healthcheck [-timeout d] URL\n       healthcheck [-timeout d] -addr-env VARIABLE PATH")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 || *timeout <= 0 {
		fs.Usage()
		return 2
	}
	target, hint := fs.Arg(0), ""
	if *addrEnv != "" {
		addr := getenv(*addrEnv)
		base, err := loopbackURL(addr)
		if err != nil {
			fmt.Fprintf(stderr, "healthcheck: $%s=%q: %v\n", *addrEnv, addr, err)
			return 2
		}
		if !strings.HasPrefix(target, "/") {
			fmt.Fprintf(stderr, "healthcheck: with -addr-env, %q must be a path\n", target)
			return 2
		}
		target = base + target
		hint = fmt.Sprintf(" (the address is $%s=%s: set it, not -addr, to move the server)", *addrEnv, addr)
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "healthcheck: %q is not an http(s) URL\n", target)
		return 2
	}
	if err := probe(u.String(), *timeout); err != nil {
		fmt.Fprintf(stderr, "healthcheck: %v%s\n", err, hint)
		return 1
	}
	fmt.Fprintln(stdout, "healthcheck: ok")
	return 0
}

// loopbackURL is the http URL of a listen address, host:port: an
// unspecified host (empty, 0.0.0.0, ::) is the loopback address of its
// family, since that is where a prober in the same container reaches it.
func loopbackURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", errors.New("not a listen address (host:port)")
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return "", errors.New("the port must be a number from 1 to 65535")
	}
	switch ip := net.ParseIP(host); {
	case host == "" || (ip != nil && ip.Equal(net.IPv4zero)):
		host = "127.0.0.1"
	case ip != nil && ip.Equal(net.IPv6unspecified):
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// probe GETs url once: nil for 200, an error for anything else.
func probe(url string, timeout time.Duration) error {
	c := &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return errors.New(url + ": " + resp.Status)
	}
	return nil
}

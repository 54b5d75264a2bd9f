// Command healthcheck probes one URL and exits 0 when it answers 200 OK,
// 1 otherwise. It is the container image's HEALTHCHECK: the final image
// (distroless) has no shell and no curl, so a tiny static binary does it.
//
//	healthcheck [-timeout 2s] http://127.0.0.1:8080/readyz
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
	"net/http"
	"net/url"
	"os"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 2*time.Second, "how long to wait for the answer")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: healthcheck [-timeout d] URL")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || *timeout <= 0 {
		fs.Usage()
		return 2
	}
	u, err := url.Parse(fs.Arg(0))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "healthcheck: %q is not an http(s) URL\n", fs.Arg(0))
		return 2
	}
	if err := probe(u.String(), *timeout); err != nil {
		fmt.Fprintln(stderr, "healthcheck:", err)
		return 1
	}
	fmt.Fprintln(stdout, "healthcheck: ok")
	return 0
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

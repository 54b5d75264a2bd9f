// Package leanhttp is an HTTP/1.1 client transport for one upstream, written
// for the bench's hop measurement (servers/gateway-lean): how far the
// gateway's CPU per forwarded call goes down when its client path is
// leaner than net/http's Transport, with no change to the library (it is
// given to upstream.Options.HTTPClient).
//
// A request is written by the calling goroutine on an idle keep-alive
// connection as one write (request line, headers, body), and its answer
// read by the same goroutine: no per-connection read and write loops, no
// channel hand-offs, no header map cloning. The answer is read whole before
// RoundTrip returns (Content-Length or chunked), so an event stream is
// delivered when it ends, not as it arrives: enough for the bench's echo,
// not a general client.
package leanhttp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Transport is a RoundTripper to the one host:port Addr.
type Transport struct {
	// Addr is the upstream's host:port; every request goes there.
	Addr string
	// MaxIdle bounds the connections kept between requests; 0 means 64.
	MaxIdle int

	mu   sync.Mutex
	idle []*conn
}

type conn struct {
	nc  net.Conn
	br  *bufio.Reader
	buf []byte
}

var errProto = errors.New("leanhttp: malformed HTTP response")

func (t *Transport) get() (*conn, error) {
	t.mu.Lock()
	if n := len(t.idle); n > 0 {
		c := t.idle[n-1]
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		return c, nil
	}
	t.mu.Unlock()
	nc, err := net.DialTimeout("tcp", t.Addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &conn{nc: nc, br: bufio.NewReaderSize(nc, 8<<10), buf: make([]byte, 0, 1024)}, nil
}

func (t *Transport) put(c *conn) {
	max := t.MaxIdle
	if max <= 0 {
		max = 64
	}
	t.mu.Lock()
	if len(t.idle) < max {
		t.idle = append(t.idle, c)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	c.nc.Close()
}

// CloseIdleConnections closes the connections kept idle.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, c := range idle {
		c.nc.Close()
	}
}

// RoundTrip sends r and reads its whole answer.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	c, err := t.get()
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	if ctx.Done() != nil {
		// The call's deadline or cancellation unblocks the connection; it
		// is not reused after.
		stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	resp, keep, err := c.roundTrip(r)
	if err != nil {
		c.nc.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if keep && ctx.Err() == nil {
		t.put(c)
	} else {
		c.nc.Close()
	}
	return resp, nil
}

func (c *conn) roundTrip(r *http.Request) (*http.Response, bool, error) {
	b := c.buf[:0]
	b = append(b, r.Method...)
	b = append(b, ' ')
	b = append(b, r.URL.RequestURI()...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	if r.Host != "" {
		b = append(b, r.Host...)
	} else {
		b = append(b, r.URL.Host...)
	}
	b = append(b, "\r\n"...)
	for k, vs := range r.Header {
		for _, v := range vs {
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	var body []byte
	if r.Body != nil {
		var err error
		if r.ContentLength > 0 {
			body = make([]byte, r.ContentLength)
			_, err = io.ReadFull(r.Body, body)
		} else {
			body, err = io.ReadAll(r.Body)
		}
		r.Body.Close()
		if err != nil {
			return nil, false, err
		}
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	b = append(b, body...)
	c.buf = b
	if _, err := c.nc.Write(b); err != nil {
		return nil, false, err
	}
	return c.read()
}

// read reads one response: the status line, the headers, and a
// Content-Length or chunked body.
func (c *conn) read() (*http.Response, bool, error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return nil, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return nil, false, errProto
	}
	s := line[9:12]
	status := int(s[0]-'0')*100 + int(s[1]-'0')*10 + int(s[2]-'0')
	resp := &http.Response{StatusCode: status, Status: strconv.Itoa(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: make(http.Header, 4), ContentLength: -1}
	keep, chunked := true, false
	for {
		line, err = c.br.ReadSlice('\n')
		if err != nil {
			return nil, false, err
		}
		if len(line) <= 2 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			return nil, false, errProto
		}
		name, val := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch string(name) {
		case "Content-Length":
			n, err := strconv.ParseInt(string(val), 10, 64)
			if err != nil || n < 0 {
				return nil, false, errProto
			}
			resp.ContentLength = n
		case "Transfer-Encoding":
			chunked = string(val) == "chunked"
		case "Connection":
			keep = string(val) != "close"
		case "Content-Type":
			resp.Header["Content-Type"] = []string{contentType(val)}
		case "Date":
		default:
			k := http.CanonicalHeaderKey(string(name))
			resp.Header[k] = append(resp.Header[k], string(val))
		}
	}
	var body []byte
	switch {
	case chunked:
		resp.ContentLength = -1
		for {
			line, err := c.br.ReadSlice('\n')
			if err != nil {
				return nil, false, err
			}
			n, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.SplitN(line, []byte(";"), 2)[0])), 16, 64)
			if err != nil || n < 0 {
				return nil, false, errProto
			}
			if n == 0 {
				for {
					line, err := c.br.ReadSlice('\n')
					if err != nil {
						return nil, false, err
					}
					if len(line) <= 2 {
						break
					}
				}
				break
			}
			start := len(body)
			body = append(body, make([]byte, n)...)
			if _, err := io.ReadFull(c.br, body[start:]); err != nil {
				return nil, false, err
			}
			if _, err := c.br.Discard(2); err != nil {
				return nil, false, err
			}
		}
	case resp.ContentLength >= 0:
		body = make([]byte, resp.ContentLength)
		if _, err := io.ReadFull(c.br, body); err != nil {
			return nil, false, err
		}
	default:
		return nil, false, fmt.Errorf("leanhttp: an answer without a length")
	}
	resp.Body = &bodyReader{Reader: *bytes.NewReader(body)}
	return resp, keep, nil
}

// contentType interns the usual values.
func contentType(v []byte) string {
	switch string(v) {
	case "application/json":
		return "application/json"
	case "text/event-stream":
		return "text/event-stream"
	}
	return string(v)
}

type bodyReader struct{ bytes.Reader }

func (*bodyReader) Close() error { return nil }

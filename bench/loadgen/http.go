package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// response is one parsed HTTP/1.1 response. body aliases the conn's buffer
// and is valid until the next read.
type response struct {
	status int
	close  bool
	body   []byte
}

var errProto = errors.New("malformed HTTP response")

// readResponse reads one response: the status line, the headers, and a
// Content-Length or chunked body. It allocates only to grow buf.
func readResponse(r *bufio.Reader, buf []byte) (response, []byte, error) {
	var resp response
	line, err := r.ReadSlice('\n')
	if err != nil {
		return resp, buf, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return resp, buf, errProto
	}
	s := line[9:12]
	resp.status = int(s[0]-'0')*100 + int(s[1]-'0')*10 + int(s[2]-'0')
	cl := -1
	chunked := false
	for {
		line, err = r.ReadSlice('\n')
		if err != nil {
			return resp, buf, err
		}
		if len(line) <= 2 { // "\r\n"
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			return resp, buf, errProto
		}
		name, val := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case len(name) == 14 && asciiEqualFold(name, "content-length"):
			n := 0
			for _, c := range val {
				if c < '0' || c > '9' {
					return resp, buf, errProto
				}
				n = n*10 + int(c-'0')
			}
			cl = n
		case len(name) == 17 && asciiEqualFold(name, "transfer-encoding"):
			chunked = asciiEqualFold(val, "chunked")
		case len(name) == 10 && asciiEqualFold(name, "connection"):
			resp.close = asciiEqualFold(val, "close")
		}
	}
	buf = buf[:0]
	switch {
	case chunked:
		for {
			line, err = r.ReadSlice('\n')
			if err != nil {
				return resp, buf, err
			}
			n, ok := parseHex(line)
			if !ok {
				return resp, buf, errProto
			}
			if n == 0 {
				// Trailers, then the empty line.
				for {
					line, err = r.ReadSlice('\n')
					if err != nil {
						return resp, buf, err
					}
					if len(line) <= 2 {
						break
					}
				}
				break
			}
			start := len(buf)
			buf = grow(buf, n)
			if _, err = io.ReadFull(r, buf[start:start+n]); err != nil {
				return resp, buf, err
			}
			if _, err = r.Discard(2); err != nil {
				return resp, buf, err
			}
		}
	case cl >= 0:
		buf = grow(buf, cl)
		if _, err = io.ReadFull(r, buf[:cl]); err != nil {
			return resp, buf, err
		}
	default:
		if resp.status == 204 || resp.status == 304 || resp.status/100 == 1 {
			break
		}
		return resp, buf, fmt.Errorf("%w: no Content-Length and not chunked", errProto)
	}
	resp.body = buf
	return resp, buf, nil
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), 2*(len(b)+n))
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

func parseHex(line []byte) (int, bool) {
	n, digits := 0, 0
	for _, c := range line {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return n, digits > 0 // ";ext" or "\r\n"
		}
		n = n<<4 | int(d)
		digits++
		if digits > 8 {
			return 0, false
		}
	}
	return n, digits > 0
}

func asciiEqualFold[T ~string | ~[]byte](b []byte, s T) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c, d := b[i], s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= d && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}

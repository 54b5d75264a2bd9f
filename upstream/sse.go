package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// sseReader reads the events of a text/event-stream answer (the HTML
// living standard's event stream format, which MCP's Streamable HTTP
// uses): data lines joined by "\n" make an event's data, a blank line ends
// it, comments and the event, id and retry fields are skipped (the gateway
// neither resumes a stream nor names events). An event's data larger than
// max is an error: the rest of the stream is not read.
type sseReader struct {
	r   *bufio.Reader
	max int64
	buf []byte
	// held is what followed a lone CR that ended an event: the lines of
	// the next one, read already.
	held []byte
}

// errTooLarge is an answer, or one event of it, past the size limit.
var errTooLarge = errors.New("answer too large")

func newSSEReader(r io.Reader, max int64) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 4096), max: max}
}

// next returns the next event's data, valid until the next call; io.EOF
// when the stream ends (an event cut off by the end is dropped, as the
// format says).
func (s *sseReader) next() ([]byte, error) {
	s.buf = s.buf[:0]
	has := false
	for {
		lines := s.held
		if lines != nil {
			s.held = nil
		} else {
			var err error
			if lines, err = s.line(); err != nil {
				return nil, err
			}
		}
		// A lone CR ends a line too: what ReadSlice returned may be
		// several lines.
		for rest := lines; ; {
			line := rest
			i := bytes.IndexByte(rest, '\r')
			if i >= 0 {
				line, rest = rest[:i], rest[i+1:]
			}
			done, err := s.field(line, &has)
			if err != nil {
				return nil, err
			}
			if done {
				if i >= 0 {
					s.held = bytes.Clone(rest)
				}
				return s.buf, nil
			}
			if i < 0 {
				break
			}
		}
	}
}

// field takes one line of an event: done reports the blank line that
// ends an event with data.
func (s *sseReader) field(line []byte, has *bool) (done bool, err error) {
	if len(line) == 0 {
		return *has, nil
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	if string(field) != "data" {
		return false, nil // a comment (empty field), event, id, retry, or unknown
	}
	if *has {
		s.buf = append(s.buf, '\n')
	}
	if int64(len(s.buf)+len(value)) > s.max {
		return false, errTooLarge
	}
	s.buf = append(s.buf, value...)
	*has = true
	return false, nil
}

// line returns the next line without its end (CRLF, LF or CR), reading no
// more than max bytes for it.
func (s *sseReader) line() ([]byte, error) {
	var long []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if int64(len(long)+len(chunk)) > s.max {
				return nil, errTooLarge
			}
			long = append(long, chunk...)
			continue
		}
		if err != nil {
			if err == io.EOF && (len(chunk) > 0 || len(long) > 0) {
				// A last line without its end: the event it belongs to is
				// incomplete, and is dropped by the caller seeing EOF next.
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line := chunk
		if long != nil {
			if int64(len(long)+len(chunk)) > s.max {
				return nil, errTooLarge
			}
			line = append(long, chunk...)
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		return line, nil
	}
}

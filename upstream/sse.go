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
	// long gathers a line longer than r's buffer.
	long []byte
	// cr reports that the last line ended in a CR: an LF first in the
	// next is the rest of that line's end.
	cr bool
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
		line, err := s.line()
		if err != nil {
			return nil, err
		}
		done, err := s.field(line, &has)
		if err != nil {
			return nil, err
		}
		if done {
			return s.buf, nil
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

// line returns the next line without its end (CRLF, LF or CR), valid
// until the next call, reading no more than max bytes for it. A CR ends
// its line at once, so that a stream whose lines end in CR alone is read
// as it comes: an LF right after it is skipped with the next line.
func (s *sseReader) line() ([]byte, error) {
	s.long = s.long[:0]
	for {
		if s.r.Buffered() == 0 {
			if _, err := s.r.Peek(1); err != nil {
				if err == io.EOF && len(s.long) > 0 {
					// A last line without its end: the event it belongs
					// to is incomplete, and is dropped.
					return nil, io.ErrUnexpectedEOF
				}
				return nil, err
			}
		}
		b, _ := s.r.Peek(s.r.Buffered())
		if s.cr {
			s.cr = false
			if b[0] == '\n' {
				_, _ = s.r.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			if int64(len(s.long)+len(b)) > s.max {
				return nil, errTooLarge
			}
			s.long = append(s.long, b...)
			_, _ = s.r.Discard(len(b))
			continue
		}
		if int64(len(s.long)+i) > s.max {
			return nil, errTooLarge
		}
		s.cr = b[i] == '\r'
		line := b[:i] // r's buffer: not moved before the next call
		if len(s.long) > 0 {
			s.long = append(s.long, line...)
			line = s.long
		}
		_, _ = s.r.Discard(i + 1)
		return line, nil
	}
}

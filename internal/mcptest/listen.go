package mcptest

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Stream is an open SSE answer read frame by frame as it arrives: a
// subscriptions/listen stream, which stays open until the server ends it
// or the test closes it.
type Stream struct {
	Resp   *http.Response
	frames chan Frame
	cancel context.CancelFunc
	// done is closed by Close: read stops sending.
	done chan struct{}
	once sync.Once
}

// Frame is one thing a stream sent: the data of a message event, or a
// comment line (its text after the colon, as sent).
type Frame struct {
	Data    string
	Comment string
}

// streamWait bounds the wait for a stream's next frame: a test that waits
// longer has hung, and fails rather than stalling the run.
const streamWait = 30 * time.Second

// Listen sends r and returns its answer as a Stream once the headers have
// arrived, whatever the status: the test reads Resp, then the frames. The
// stream is closed at the test's end.
func (e *Endpoint) Listen(t testing.TB, r RPC) *Stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := r.Request(ctx, e.URL)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("%s: %v", req.Method, err)
	}
	s := &Stream{Resp: resp, frames: make(chan Frame, 64), cancel: cancel, done: make(chan struct{})}
	t.Cleanup(s.Close)
	go s.read()
	return s
}

// read turns the body into frames until it ends.
func (s *Stream) read() {
	defer close(s.frames)
	sc := bufio.NewScanner(s.Resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var f Frame
		switch {
		case strings.HasPrefix(line, "data: "):
			f.Data = strings.TrimPrefix(line, "data: ")
		case strings.HasPrefix(line, ":"):
			f.Comment = strings.TrimPrefix(line, ":")
		case line == "", line == "event: message":
			continue
		default:
			f.Comment = "unexpected line: " + line
		}
		select {
		case s.frames <- f:
		case <-s.done:
			return
		}
	}
}

// Next returns the stream's next frame, false once the stream has ended.
func (s *Stream) Next(t testing.TB) (Frame, bool) {
	t.Helper()
	select {
	case f, ok := <-s.frames:
		return f, ok
	case <-time.After(streamWait):
		t.Fatalf("no frame from the stream in %v", streamWait)
		return Frame{}, false
	}
}

// NextData returns the data of the stream's next message event, skipping
// comments; it fails the test if the stream ends first.
func (s *Stream) NextData(t testing.TB) string {
	t.Helper()
	for {
		f, ok := s.Next(t)
		if !ok {
			t.Fatal("the stream ended before its next message")
		}
		if f.Comment == "" {
			return f.Data
		}
	}
}

// Close ends the stream from the client's side.
func (s *Stream) Close() {
	s.once.Do(func() { close(s.done) })
	s.cancel()
	_ = s.Resp.Body.Close()
}

package upstream

import (
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
)

// A refused connection never carried the request: it is unsent, so the
// call may go again on a fresh connection whatever the tool; any other
// error may have carried it.
func TestUnsent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = http.Post("http://"+addr+"/", "application/json", nil)
	if err == nil || !unsent(err) {
		t.Errorf("a refused connection: %v, unsent %v", err, err != nil && unsent(err))
	}
	if unsent(errors.New("read: connection reset by peer")) {
		t.Error("a reset counted as unsent")
	}
	if unsent(&net.OpError{Op: "read", Err: errors.New("reset")}) {
		t.Error("a read error counted as unsent")
	}
}

// The budget starts full, gives its burst, then a fifth of a retry per
// call.
func TestRetriesBudget(t *testing.T) {
	r := newRetries(true, 40)
	n := 0
	for r.take() {
		n++
	}
	if n != 10 {
		t.Fatalf("burst %d, want 10", n)
	}
	for range 5 {
		r.called()
	}
	if !r.take() || r.take() {
		t.Fatal("five calls did not make exactly one retry")
	}
	for range 1000 {
		r.called()
	}
	n = 0
	for r.take() {
		n++
	}
	if n != 10 {
		t.Fatalf("refilled to %d, want the burst, 10", n)
	}
	off := newRetries(false, 40)
	if off.take() {
		t.Fatal("a disabled budget gave a retry")
	}
}

// recordingTransport answers every request with a fixed answer, keeping
// the requests.
type recordingTransport struct{ reqs []*http.Request }

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.reqs = append(rt.reqs, r)
	return &http.Response{StatusCode: 202, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

// A request's body can be had again (GetBody): net/http then sends it
// anew on a fresh connection when the reused one it was given turns out
// closed before the request was written, which it does for no other POST.
func TestSendBodyReplayable(t *testing.T) {
	rt := &recordingTransport{}
	c, err := newClient(Options{Name: "u", URL: "http://127.0.0.1:1/mcp", HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	resp, err := c.send(t.Context(), body, http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r := rt.reqs[0]
	if r.GetBody == nil {
		t.Fatal("no GetBody: net/http cannot send the request again")
	}
	for range 2 {
		rc, err := r.GetBody()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(rc)
		if string(got) != string(body) {
			t.Fatalf("GetBody gave %q", got)
		}
	}
}

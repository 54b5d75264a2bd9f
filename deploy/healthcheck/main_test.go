package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	ready := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/readyz" && ready:
			w.Write([]byte("ok\n"))
		case r.URL.Path == "/readyz":
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.URL.Path == "/slow":
			time.Sleep(500 * time.Millisecond)
		case r.URL.Path == "/moved":
			http.Redirect(w, r, "/readyz", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	cases := []struct {
		name  string
		args  []string
		ready bool
		want  int
	}{
		{"ready", []string{srv.URL + "/readyz"}, true, 0},
		{"draining", []string{srv.URL + "/readyz"}, false, 1},
		{"not found", []string{srv.URL + "/nope"}, true, 1},
		{"redirect is not followed", []string{srv.URL + "/moved"}, true, 1},
		{"timeout", []string{"-timeout", "100ms", srv.URL + "/slow"}, true, 1},
		{"refused", []string{"http://127.0.0.1:1/readyz"}, true, 1},
		{"no URL", nil, true, 2},
		{"not http", []string{"ftp://127.0.0.1/readyz"}, true, 2},
		{"two URLs", []string{srv.URL, srv.URL}, true, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ready = c.ready
			var out, errb bytes.Buffer
			if got := run(c.args, &out, &errb); got != c.want {
				t.Errorf("run(%q) = %d, want %d; stdout %q stderr %q", c.args, got, c.want, out.String(), errb.String())
			}
		})
	}
}

package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
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

	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	env := map[string]string{
		"ANY":    "0.0.0.0:" + port,
		"EMPTY":  ":" + port,
		"LOOP":   "127.0.0.1:" + port,
		"ZERO":   "127.0.0.1:0",
		"NOPORT": "127.0.0.1",
		"DEAD":   "127.0.0.1:1",
	}
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
		{"help", []string{"-h"}, true, 0},
		{"addr-env, all interfaces", []string{"-addr-env", "ANY", "/readyz"}, true, 0},
		{"addr-env, no host", []string{"-addr-env", "EMPTY", "/readyz"}, true, 0},
		{"addr-env, loopback", []string{"-addr-env", "LOOP", "/readyz"}, true, 0},
		{"addr-env, draining", []string{"-addr-env", "LOOP", "/readyz"}, false, 1},
		{"addr-env, refused", []string{"-addr-env", "DEAD", "/readyz"}, true, 1},
		{"addr-env unset", []string{"-addr-env", "UNSET", "/readyz"}, true, 2},
		{"addr-env port 0", []string{"-addr-env", "ZERO", "/readyz"}, true, 2},
		{"addr-env no port", []string{"-addr-env", "NOPORT", "/readyz"}, true, 2},
		{"addr-env with a URL", []string{"-addr-env", "LOOP", srv.URL + "/readyz"}, true, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ready = c.ready
			var out, errb bytes.Buffer
			if got := run(c.args, func(k string) string { return env[k] }, &out, &errb); got != c.want {
				t.Errorf("run(%q) = %d, want %d; stdout %q stderr %q", c.args, got, c.want, out.String(), errb.String())
			}
		})
	}
}

// TestAddrEnvMessages checks what a failing probe by -addr-env says: the
// address it probed, and where that address comes from.
func TestAddrEnvMessages(t *testing.T) {
	env := func(k string) string {
		return map[string]string{"WYMCP_ADDR": "0.0.0.0:1", "BAD": "8080"}[k]
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-addr-env", "WYMCP_ADDR", "/readyz"}, 1,
			`healthcheck: Get "http://127.0.0.1:1/readyz": dial tcp 127.0.0.1:1: connect: connection refused (the address is $WYMCP_ADDR=0.0.0.0:1: set it, not -addr, to move the server)` + "\n"},
		{[]string{"-addr-env", "BAD", "/readyz"}, 2, `healthcheck: $BAD="8080": not a listen address (host:port)` + "\n"},
		{[]string{"-addr-env", "UNSET", "/readyz"}, 2, `healthcheck: $UNSET="": not a listen address (host:port)` + "\n"},
		{[]string{"-addr-env", "WYMCP_ADDR", "readyz"}, 2, `healthcheck: with -addr-env, "readyz" must be a path` + "\n"},
	} {
		var out, errb bytes.Buffer
		if got := run(c.args, env, &out, &errb); got != c.code || errb.String() != c.want {
			t.Errorf("run(%q) = %d, stderr %q; want %d, %q", c.args, got, errb.String(), c.code, c.want)
		}
	}
}

package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
)

// TestRedteam39LateClashFixedByReload: an upstream down at start that
// connects late with a tool whose name another upstream serves is not
// served (the log says to fix the file and reload). Fixing the file by
// giving the other upstream a prefix, and reloading, must serve it: its
// entry did not change, so the reload keeps it pending, and it must still
// be tried, not be left pending for good.
func TestRedteam39LateClashFixedByReload(t *testing.T) {
	t.Parallel()
	_, a := serveOrigin(t, nil, says("hello", "a hello"))
	lateSrv, err := wymcp.New(originInfo, nil, says("hello", "late hello"))
	if err != nil {
		t.Fatal(err)
	}
	var up atomic.Bool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		lateSrv.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	late := hs.URL + "/mcp"

	file := upstreamsFile(t, "", "upstreams:\n  - name: a\n    url: "+a+"\n  - name: late\n    url: "+late+"\n    connectTimeout: 2s\n")
	cfg, err := loadUpstreams(file, false)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	g := newGateway(cfg, false, nil, "the none tool set", logger, nil, nil)
	defer g.close()
	ts, err := g.open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := wymcp.New(originInfo, nil, ts...)
	if err != nil {
		t.Fatal(err)
	}
	g.start(srv)

	// It comes up with a name a serves: not served, logged.
	up.Store(true)
	const clash = "upstream connected, but its tools cannot be served"
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(logs.String(), clash); {
		if time.Now().After(deadline) {
			t.Fatalf("the late upstream's clash was never logged:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The operator fixes the file as told: a prefix for a; late's entry
	// is as it was.
	upstreamsFile(t, file, "upstreams:\n  - name: a\n    url: "+a+"\n    prefix: a_\n  - name: late\n    url: "+late+"\n    connectTimeout: 2s\n")
	g.reload(context.Background())
	want := []string{"a_hello", "hello"}
	for deadline := time.Now().Add(10 * time.Second); ; {
		var names []string
		for _, l := range g.upstreams() {
			if l.u == nil {
				continue
			}
			for _, tool := range l.u.Tools() {
				names = append(names, tool.Name())
			}
		}
		slices.Sort(names)
		if slices.Equal(names, want) && g.ready() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the fix and a reload, the upstreams serve %q, want %q: the late upstream stays pending, never tried again\n%s", names, want, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

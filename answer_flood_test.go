package wymcp_test

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// TestAnswerFloodRSS measures what clients that never read their answers
// cost the process (docs/operations.md, "Answers and slow readers"): 256
// connections each send one call of a tool answering about 3.9 MiB and
// never read, and the peak RSS growth until their calls ran is reported,
// for the library alone and through a gateway fronting an in-process
// upstream (whose own memory is in the figure). It is a measurement, not
// a check: it runs only with WYMCP_ANSWER_FLOOD=1, on loopback, for less
// than a minute.
//
//	WYMCP_ANSWER_FLOOD=1 go test -run TestAnswerFloodRSS -v .
//
// WYMCP_ANSWER_FLOOD_COLD=1 sends the flood before any call has told the
// server how large the tool's answers are.
func TestAnswerFloodRSS(t *testing.T) {
	if os.Getenv("WYMCP_ANSWER_FLOOD") == "" {
		t.Skip("a measurement: set WYMCP_ANSWER_FLOOD=1")
	}
	cold := os.Getenv("WYMCP_ANSWER_FLOOD_COLD") != ""
	const answer = 3_900 << 10
	var runs atomic.Int64
	text := strings.Repeat("x", answer)
	tool, err := tools.NewRaw("big", "Answers 3.9 MiB of text.", []byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			runs.Add(1)
			return &protocol.CallToolResult{Content: []protocol.Content{&protocol.TextContent{Text: text}}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	info := protocol.Implementation{Name: "wymcp-flood", Version: "0.0.1"}

	flood := func(t *testing.T, ep *mcptest.Endpoint, name string) {
		if !cold {
			rep := ep.Send(t, mcptest.ToolCall(name, "{}"))
			rep.ExpectResult(t, "1")
		}
		runtime.GC()
		debug.FreeOSMemory()
		base := rssKiB(t, "VmRSS")
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			t.Fatalf("resetting the peak RSS: %v", err)
		}
		before := runs.Load()
		req, err := mcptest.ToolCall(name, "{}").Request(context.Background(), ep.URL)
		if err != nil {
			t.Fatal(err)
		}
		var wireReq bytes.Buffer
		if err := req.Write(&wireReq); err != nil {
			t.Fatal(err)
		}
		var conns []net.Conn
		for range 256 {
			c, err := net.Dial("tcp", ep.HostPort())
			if err != nil {
				t.Fatal(err)
			}
			// A receive buffer of 4 KiB, as a client that means to stall
			// asks for: the kernel then takes little of the answer for it.
			_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
			conns = append(conns, c)
		}
		for _, c := range conns {
			if _, err := c.Write(wireReq.Bytes()); err != nil {
				t.Fatal(err)
			}
		}
		// The flood's answers are held once every call ran or was refused:
		// until all 256 ran, or none ran for three seconds (within the
		// write timeout, 30 s, which would let the first ones go).
		start, last, ran := time.Now(), time.Now(), runs.Load()
		for ran-before < 256 && time.Since(last) < 3*time.Second && time.Since(start) < 25*time.Second {
			time.Sleep(250 * time.Millisecond)
			if n := runs.Load(); n != ran {
				ran, last = n, time.Now()
			}
		}
		peak := rssKiB(t, "VmHWM")
		t.Logf("%s: requests of %d bytes; %d calls ran of 256; RSS %d MiB before, peak %d MiB: growth %d MiB",
			name, wireReq.Len(), runs.Load()-before, base>>10, peak>>10, (peak-base)>>10)
		for _, c := range conns {
			c.Close()
		}
	}

	t.Run("library", func(t *testing.T) {
		srv, err := wymcp.New(info, &wymcp.Options{Logger: quiet}, tool)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Shutdown(context.Background())
		flood(t, mcptest.Serve(t, srv, info), "big")
	})
	t.Run("gateway", func(t *testing.T) {
		origin, err := wymcp.New(info, &wymcp.Options{Logger: quiet}, tool)
		if err != nil {
			t.Fatal(err)
		}
		defer origin.Shutdown(context.Background())
		up, err := upstream.Connect(context.Background(), upstream.Options{Name: "origin", URL: mcptest.Serve(t, origin, info).URL, Prefix: "o_", Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		defer up.Close()
		gw, err := wymcp.New(info, &wymcp.Options{Logger: quiet}, up.Tools()...)
		if err != nil {
			t.Fatal(err)
		}
		defer gw.Shutdown(context.Background())
		flood(t, mcptest.Serve(t, gw, info), "o_big")
	})
}

// rssKiB reads a field of /proc/self/status, in KiB.
func rssKiB(t *testing.T, field string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

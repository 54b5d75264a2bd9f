//go:build linux

package upstream_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/upstream"
)

// The stdio hop, in process (docs/design.md §10d): the same tools/call of
// echo sent to the fake stdio server (stdio_fake_test.go, 2026-07-28)
// directly over its pipes by a Go client of the benchmark's own, and
// through the gateway (a wymcp server whose tool forwards to it), at one
// call at a time and at 16. cpu-ns/op is the CPU of the gateway's process
// and of the child's together, per call.
//
//	go test -run '^$' -bench StdioHop -benchtime 2s ./upstream/
func BenchmarkStdioHop(b *testing.B) {
	const line = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	b.Run("direct", func(b *testing.B) {
		self, _ := os.Executable()
		cmd := exec.Command(self)
		cmd.Env = []string{fakeStdioEnv + "=modern"}
		in, _ := cmd.StdinPipe()
		outPipe, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { in.Close(); _ = cmd.Wait() }()
		out := bufio.NewReader(outPipe)
		cpu := startCPU(cmd.Process.Pid)
		b.ResetTimer()
		for i := range b.N {
			if _, err := in.Write([]byte(strings.Replace(line, "%d", strconv.Itoa(i+1), 1) + "\n")); err != nil {
				b.Fatal(err)
			}
			got, err := out.ReadString('\n')
			if err != nil || !strings.Contains(got, `"text":"hello"`) {
				b.Fatalf("%q %v", got, err)
			}
		}
		cpu.report(b)
	})
	gateway := func(b *testing.B) (*wymcp.Server, int) {
		o := stdioOpts(b, "modern")
		u, err := upstream.Connect(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = u.Close() })
		s, err := wymcp.New(gatewayInfo, nil, u.Tools()...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Shutdown(context.Background()) })
		// The fake is the reaper's child.
		return s, fakeChildOf(b, upstream.StdioPID(u))
	}
	call := mcptest.ToolCall("g_echo", `{"text":"hello"}`)
	b.Run("gateway", func(b *testing.B) {
		s, pid := gateway(b)
		cpu := startCPU(pid)
		serve(b, s, call)
		cpu.report(b)
	})
	b.Run("gateway-c16", func(b *testing.B) {
		s, pid := gateway(b)
		cpu := startCPU(pid)
		var failed atomic.Bool
		b.SetParallelism(16)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			req, _ := call.Request(context.Background(), "http://127.0.0.1:1/mcp")
			req.RemoteAddr, req.RequestURI = "127.0.0.1:1234", "/mcp"
			w := &discard{h: map[string][]string{}}
			for pb.Next() {
				req.Body = readCloser(call.Body)
				w.status = 0
				clear(w.h)
				s.ServeHTTP(w, req)
				if w.status != 0 && w.status != 200 {
					failed.Store(true)
				}
			}
		})
		if failed.Load() {
			b.Fatal("a call failed")
		}
		cpu.report(b)
	})
}

// cpuMark is the CPU used so far by this process and by one other.
type cpuMark struct {
	pid         int
	self, other int64 // ns
}

func startCPU(pid int) cpuMark { return cpuMark{pid, selfCPU(), procCPU(pid)} }

func (m cpuMark) report(b *testing.B) {
	used := selfCPU() - m.self + procCPU(m.pid) - m.other
	b.ReportMetric(float64(used)/float64(b.N), "cpu-ns/op")
}

func selfCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// procCPU is a process's utime and stime from /proc, in ns (at 100 ticks
// a second, Linux's USER_HZ).
func procCPU(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return (ut + st) * 10_000_000
}

// fakeChildOf finds the child of the reaper pid.
func fakeChildOf(b *testing.B, reaper int) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(reaper) {
			return pid
		}
	}
	b.Fatal("no child of the reaper")
	return 0
}

func readCloser(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }

//go:build linux

package upstream_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wymcp/wymcp/upstream"
)

// stdioPids waits for the fake server's pid file: its pid and its own
// child's.
func stdioPids(t *testing.T, path string) (child, grandchild int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			f := strings.Fields(string(b))
			child, _ = strconv.Atoi(f[0])
			grandchild, _ = strconv.Atoi(f[1])
			return child, grandchild
		}
		if time.Now().After(deadline) {
			t.Fatal("no pid file")
		}
		// The file is written by another process: nothing to wait on.
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether the process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// parent reads a process's parent from /proc.
func parent(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	n, _ := strconv.Atoi(f[1])
	return n
}

// Close stops the child and its own children: no process of theirs is
// left, and none is a zombie.
func TestStdioCloseCleans(t *testing.T) {
	t.Parallel()
	o := stdioOpts(t, "legacy")
	pids := t.TempDir() + "/pids"
	o.Env["WYMCP_FAKE_PIDS"] = pids
	u, err := upstream.Connect(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	child, grandchild := stdioPids(t, pids)
	reaper := parent(t, child)
	if reaper != parent(t, grandchild) && parent(t, grandchild) != child {
		t.Fatalf("unexpected tree: reaper %d, child %d, grandchild's parent %d", reaper, child, parent(t, grandchild))
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{reaper, child, grandchild} {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			t.Errorf("process %d is left (alive %v)", pid, alive(pid))
		}
	}
}

// A gateway SIGKILLed: its stdio child and the child's own child are
// ended by the reaper, which the kernel tells of its parent's death.
// Nothing of them survives (counted in /proc).
func TestStdioNoOrphans(t *testing.T) {
	// The test is the subreaper of what the gateway leaves (the reaper
	// itself), so that it can wait for it rather than init.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, 36, 1, 0); errno != 0 {
		t.Fatal(errno)
	}
	self, _ := os.Executable()
	pids := t.TempDir() + "/pids"
	gw := exec.Command(self)
	gw.Env = []string{fakeStdioEnv + "=gateway", "WYMCP_FAKE_PIDS=" + pids, "PATH=" + os.Getenv("PATH")}
	out, err := gw.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		_ = gw.Process.Kill()
		t.Fatalf("gateway: %q", line)
	}
	child, grandchild := stdioPids(t, pids)
	reaper := parent(t, child)
	if parent(t, reaper) != gw.Process.Pid {
		t.Fatalf("the child's parent %d is not the gateway's child", reaper)
	}
	if err := gw.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = gw.Wait()
	done := make(chan error, 1)
	go func() {
		var st syscall.WaitStatus
		_, err := syscall.Wait4(reaper, &st, 0, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("waiting for the reaper: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the reaper did not end")
	}
	for _, pid := range []int{reaper, child, grandchild} {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			t.Errorf("process %d is left (alive %v)", pid, alive(pid))
		}
	}
}

// TestStdioDirMissing: a Dir that does not exist is named as such, not as
// the reaper's path that could not start in it.
func TestStdioDirMissing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "gone")
	_, err := upstream.Connect(context.Background(), upstream.Options{Name: "a", Command: "/bin/cat", Dir: dir})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("dir %q: not a directory that exists", dir)) {
		t.Fatalf("%v", err)
	}
}

//go:build linux

package upstream

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestStdioSpawnSurvivesItsCaller: a reaper's Pdeathsig belongs to the
// thread that forked it, so a child started from a goroutine that then
// exits locked to its thread (which the runtime ends with it) must live
// on: the reaper takes the thread's end for the gateway's death only when
// the start ran on that thread (startReaper).
func TestStdioSpawnSurvivesItsCaller(t *testing.T) {
	t.Parallel()
	sp := childSpec{path: "/bin/cat", env: []string{"PATH=/usr/bin:/bin"}}
	type spawned struct {
		ch      *child
		out     *os.File
		tid     int
		err     error
		errPipe *os.File
	}
	got, mainFree := make(chan spawned, 1), make(chan struct{})
	defer close(mainFree)
	var start func()
	start = func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if syscall.Gettid() == syscall.Getpid() {
			// The main thread is never ended, only parked: hold it, and
			// start from another.
			go start()
			<-mainFree
			runtime.UnlockOSThread()
			return
		}
		ch, out, errPipe, err := sp.spawn()
		got <- spawned{ch: ch, out: out, errPipe: errPipe, tid: syscall.Gettid(), err: err}
	}
	go start()
	s := <-got
	if s.err != nil {
		t.Fatal(s.err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = s.ch.proc.wait(); close(exited) }()
	t.Cleanup(func() {
		s.ch.stdin.Close() // cat exits, and its reaper with it
		<-exited
		s.out.Close()
		s.errPipe.Close()
	})

	// The thread is gone once the kernel has reaped it, after it told its
	// children (the reaper's Pdeathsig) that it died.
	task := "/proc/self/task/" + strconv.Itoa(s.tid)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d still runs", s.tid)
		}
	}
	// The reaper, had it been told, ends the group and exits: it must not.
	select {
	case <-exited:
		t.Fatalf("the child's reaper exited when the thread that started it ended: %v", waitErr)
	case <-time.After(time.Second):
	}
	lines := bufio.NewReader(s.out)
	if _, err := s.ch.stdin.WriteString("still here\n"); err != nil {
		t.Fatal(err)
	}
	_ = s.out.SetReadDeadline(time.Now().Add(30 * time.Second))
	if line, err := lines.ReadString('\n'); line != "still here\n" {
		t.Fatalf("cat answered %q, %v", line, err)
	}
}

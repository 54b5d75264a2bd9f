package collector

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the child if the test process dies
// first (a go test -timeout panic, a kill), so no collector or server is
// left behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

package deathsig

import (
	"os/exec"
	"syscall"
)

// Set has cmd's process get SIGKILL when the lab's thread that started it
// dies.
func Set(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

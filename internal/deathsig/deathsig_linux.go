package deathsig

import (
	"os/exec"
	"syscall"
)

// Set has cmd's process get SIGKILL when the lab's thread that started it
// dies.
func Set(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

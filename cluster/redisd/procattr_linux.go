package redisd

import (
	"os/exec"
	"syscall"
)

// setProcAttr has the kernel kill the server if the lab dies without
// stopping it (a crash, a SIGKILL), so that no server outlives the lab.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

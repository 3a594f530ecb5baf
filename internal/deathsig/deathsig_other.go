//go:build !linux

package deathsig

import "os/exec"

// Set does nothing where the kernel has no parent-death signal.
func Set(*exec.Cmd) {}

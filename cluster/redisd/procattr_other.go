//go:build !linux

package redisd

import "os/exec"

// setProcAttr does nothing here: only Linux ties a child's life to its
// parent's. Close stops every server; a lab killed outright leaves them.
func setProcAttr(*exec.Cmd) {}

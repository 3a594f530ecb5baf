//go:build !linux

package pgd

import "os/exec"

// owner is the user a server runs as; only Linux runs it as another.
type owner struct{}

func serverOwner() (*owner, error)   { return nil, nil }
func (o *owner) own(string) error    { return nil }
func (o *owner) apply(cmd *exec.Cmd) {}

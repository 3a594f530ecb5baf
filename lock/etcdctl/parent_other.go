//go:build !linux

package etcdctl

// dieWithParent does nothing here: locks run as processes need Linux.
func dieWithParent() {}

// dieWithLab does nothing here, for the same reason.
func dieWithLab(int) {}

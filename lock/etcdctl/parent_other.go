//go:build !linux

package etcdctl

// dieWithParent does nothing here: locks run as processes need Linux.
func dieWithParent() {}

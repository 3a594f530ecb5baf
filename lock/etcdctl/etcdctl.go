// Package etcdctl gives locks that run as processes etcd's own command-line
// client, built from the etcdctl Go module into the program that runs them:
// nothing is downloaded or installed. A program that runs such locks calls
// Serve first thing in main (a test binary, in TestMain); the lab then puts
// a command named etcdctl on each lock process's PATH, which is the program
// itself started again as etcdctl.
package etcdctl

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"go.etcd.io/etcd/etcdctl/v3/ctlv3"
)

// envVar marks a process started as the lab's etcdctl.
const envVar = "LOCKLAB_ETCDCTL"

// Name is the command's name on a lock process's PATH.
const Name = "etcdctl"

var served atomic.Bool

// Serve runs etcdctl and exits if this process was started as the lab's
// etcdctl (the name it was run by is etcdctl and the lab's mark is in its
// environment). Otherwise it returns at once, and from then on Link may
// offer this program as etcdctl.
func Serve() {
	if os.Getenv(envVar) != "" && filepath.Base(os.Args[0]) == Name {
		ctlv3.MustStart()
		os.Exit(0)
	}
	served.Store(true)
}

// Served reports whether Serve was called: without it, this program
// started as etcdctl would run as itself, so Link refuses.
func Served() bool { return served.Load() }

// Link puts an executable named etcdctl in dir — a link to this program —
// and returns the environment entry a process needs for it to act as
// etcdctl.
func Link(dir string) (env string, err error) {
	if !Served() {
		return "", fmt.Errorf("etcdctl: this program does not serve etcdctl (call etcdctl.Serve first thing in main or TestMain)")
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("etcdctl: %w", err)
	}
	if err := os.Symlink(self, filepath.Join(dir, Name)); err != nil {
		return "", fmt.Errorf("etcdctl: %w", err)
	}
	return envVar + "=1", nil
}

package etcdctl

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"go.etcd.io/etcd/etcdctl/v3/ctlv3"

	"github.com/locklab/locklab/lock/etcdlock"
)

// envVar marks a process started as the lab's etcdctl; its value is the
// lab's process id.
const envVar = "LOCKLAB_ETCDCTL"

// Name is the command's name on a lock process's PATH.
const Name = "etcdctl"

// Serve runs etcdctl and exits if this process was started as the lab's
// etcdctl (the name it was run by is etcdctl and the lab's mark is in its
// environment). Otherwise it returns at once, having offered this program
// as etcdctl to every lock process started from then on (etcdlock.OfferTool).
func Serve() {
	if lab := os.Getenv(envVar); lab != "" && filepath.Base(os.Args[0]) == Name {
		dieWithParent()
		if pid, err := strconv.Atoi(lab); err == nil {
			dieWithLab(pid)
		}
		ctlv3.MustStart()
		os.Exit(0)
	}
	etcdlock.OfferTool(Name, Link)
}

// Link puts an executable named etcdctl in dir — a link to this program —
// and returns the environment entry a process needs for it to act as
// etcdctl. It is what Serve offers; a program that did not call Serve
// would run as itself, not as etcdctl.
func Link(dir string) (env string, err error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("etcdctl: %w", err)
	}
	if err := os.Symlink(self, filepath.Join(dir, Name)); err != nil {
		return "", fmt.Errorf("etcdctl: %w", err)
	}
	return envVar + "=" + strconv.Itoa(os.Getpid()), nil
}

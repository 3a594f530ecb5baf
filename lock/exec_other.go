//go:build !linux

package lock

import (
	"fmt"
	"runtime"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// processSupport says why locks cannot run as processes here: the adapter
// needs process groups, SIGSTOP and SIGCONT, a parent-death signal and
// /proc, which only Linux gives it.
func processSupport() error {
	return fmt.Errorf("lock: locks run as processes (%sCOMMAND, etcdctl) need Linux; this is %s", ExecPrefix, runtime.GOOS)
}

// execFactory makes a factory that refuses: see processSupport.
func execFactory(argv []string, _ func(dir string) error) Factory {
	return func(*clientv3.Client, string, Options) (Locker, error) {
		return nil, processSupport()
	}
}

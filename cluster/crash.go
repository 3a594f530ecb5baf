package cluster

import (
	"fmt"
	"sync"

	"github.com/locklab/locklab/internal/pausegate"
)

// ErrCrashed is what a worker stopped at a pause point hears when its client
// crashes there: the process it stands for is dead, and whatever it was about
// to do (a write, a release) never happens.
var ErrCrashed = pausegate.ErrCrashed

// crashHooks are run by Crash, in order, while the client's link is cut.
type crashHooks struct {
	mu    sync.Mutex
	hooks []func()
}

// OnCrash has hook run when the client crashes, after its link is cut and
// before its connection is closed: the lab kills what stands for the
// client's process there (a lock run as a process gets SIGKILL; a Go lock
// is abandoned, never closed, so it sends nothing more).
func (cl *Client) OnCrash(hook func()) {
	cl.crash.mu.Lock()
	defer cl.crash.mu.Unlock()
	cl.crash.hooks = append(cl.crash.hooks, hook)
}

// Crash kills the client as SIGKILL kills a process, and starts it again:
// nothing more it had under way reaches the cluster (no release, no lease
// revoke, no keep-alive), its connections close as a dead process's kernel
// closes them, and it comes back with a new etcd connection (Etcd) and
// nothing else. The server keeps what the client had — its keys and its
// lease — until the lease's TTL ends. A worker stopped at a pause point
// goes on with ErrCrashed.
func (cl *Client) Crash() error {
	cl.proxy.Cut() // from here, nothing the dying client sends gets out
	cl.crash.mu.Lock()
	hooks := cl.crash.hooks
	cl.crash.mu.Unlock()
	for _, h := range hooks {
		h()
	}
	cl.pause.Kill()
	old := cl.Etcd()
	old.Close()      // its goroutines end; what it sends now is held by the cut
	cl.proxy.Sever() // and dropped here: the connections close
	etcd, err := cl.dial()
	if err != nil {
		cl.proxy.Heal()
		return fmt.Errorf("client %s: starting again: %w", cl.name, err)
	}
	cl.etcd.Store(etcd)
	cl.proxy.Heal()
	return nil
}

// Redial closes the client's etcd connection and opens a new one, as a
// process started again connects anew: the lab's run engine, which cuts
// and severs the link itself, calls it when the client crashes.
func (cl *Client) Redial() error {
	cl.Etcd().Close()
	etcd, err := cl.dial()
	if err != nil {
		return fmt.Errorf("client %s: starting again: %w", cl.name, err)
	}
	cl.etcd.Store(etcd)
	return nil
}

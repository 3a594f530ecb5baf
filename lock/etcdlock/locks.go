package etcdlock

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Lock describes one built-in lock on etcd: everything the lab knows of
// it, in one place.
type Lock = lock.Descriptor[*clientv3.Client]

// locks are the built-in locks, in a fixed order.
var locks = []Lock{
	{Name: "etcd-mutex", Factory: NewMutex,
		About: "etcd's own concurrency.Mutex as it ships: queue of keys, ~100 ms per contended hand-off (watch resync)",
		Weak:  map[string]string{"lost-acquire": "liveness", "retried-release": "validity"}},
	{Name: "queue", Factory: NewQueue,
		About: "locklab's revision queue: the same queue, hand-off in one commit and one read"},
	{Name: "ttl-poll", Factory: NewTTLPoll,
		About: "Redis SET NX PX on etcd: one key with a lease, retried every 50 ms, no fairness"},
	{Name: "single-key-watch", Factory: NewSingleKeyWatch,
		About: "one key, every waiter watches it and races on delete: the thundering herd"},
	{Name: "etcd-election", Factory: NewElection,
		About: "etcd's own concurrency.Election as it ships, as a lock: Campaign acquires, Resign releases",
		Weak: map[string]string{"expire-while-waiting": "expired-waiter", "expire-while-waiting-lapse": "expired-waiter",
			"lost-acquire": "liveness", "retried-release": "validity"}},
	{Name: "etcdctl", Factory: NewEtcdctl,
		About: "etcd's own `etcdctl lock` command, run as a process (lock/etcdlock/etcdctl-lock.sh): one session per grant"},
	{Name: "etcd-mutex-retry-safe", Factory: NewMutexRetrySafe, Adapter: true,
		About: "etcd-mutex with what the contract asks for added: a failed Lock removes its key, a " +
			"release ends only the grant it is given"},
	{Name: "etcd-election-retry-safe", Factory: NewElectionRetrySafe, Adapter: true,
		About: "etcd-election with what the contract asks for added: Campaign's key read again " +
			"after waiting, a failed Campaign's key removed, a release ends only the grant it is given"},
}

// Locks lists the built-in locks, the ones people use first, then the
// lab's adapters; a fresh slice each call.
func Locks() []Lock { return slices.Clone(locks) }

// Find returns the built-in lock called name.
func Find(name string) (Lock, error) {
	i := slices.IndexFunc(locks, func(l Lock) bool { return l.Name == name })
	if i < 0 {
		return Lock{}, fmt.Errorf("%w %q (locks: %s)", lock.ErrUnknownLock, name, strings.Join(Names(), ", "))
	}
	return locks[i], nil
}

// Builtin returns the built-in locks' factories by name, a fresh map each
// call.
func Builtin() map[string]Factory {
	out := make(map[string]Factory, len(locks))
	for _, l := range locks {
		out[l.Name] = l.Factory
	}
	return out
}

// Names lists the built-in locks people use, in a fixed order.
func Names() []string { return names(false) }

// Adapters lists the lab's own adapters of the locks people use (see
// Lock.Adapter).
func Adapters() []string { return names(true) }

func names(adapters bool) []string {
	var out []string
	for _, l := range locks {
		if l.Adapter == adapters {
			out = append(out, l.Name)
		}
	}
	return out
}

// Lookup returns the built-in lock called name, or the lock run as a
// process by "exec:COMMAND" (see Exec).
func Lookup(name string) (Factory, error) {
	if cmd, ok := strings.CutPrefix(name, process.ExecPrefix); ok {
		return Exec(cmd)
	}
	l, err := Find(name)
	return l.Factory, err
}

package lock

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// deadlineIgnored is etcd's Mutex waited on with a context of its own — the
// caller's values, none of its deadline (a lock that waits on
// context.Background, or on a context it made once): an acquire whose
// caller gave up at its deadline goes on waiting, and when the lock comes
// free it is granted to nobody, while the next client waits behind it.
// Known bad: gave-up catches it (the deadline check).
type deadlineIgnored struct{ Locker }

// NewDeadlineIgnored returns the ignores-deadline known-bad lock.
func NewDeadlineIgnored(client *clientv3.Client, name string, opts Options) (Locker, error) {
	l, err := NewMutex(client, name, opts)
	if err != nil {
		return nil, err
	}
	return deadlineIgnored{l}, nil
}

func (l deadlineIgnored) Acquire(ctx context.Context) (Grant, error) {
	return l.Locker.Acquire(context.WithoutCancel(ctx)) // the bug
}

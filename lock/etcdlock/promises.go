package etcdlock

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/knownbad"
)

// NewDeadlineIgnored returns the ignores-deadline known-bad lock: etcd's
// Mutex waited on with a context of its own (knownbad.IgnoringDeadline).
// Known bad: gave-up catches it (the deadline check).
func NewDeadlineIgnored(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	return knownbad.IgnoringDeadlineFactory(NewMutex)(client, name, opts)
}

// lostUntold is etcd's Mutex whose grants carry a Lost that never closes —
// a channel made for the grant and forgotten, or one closed only by
// Release: the holder is never told that its lease is gone, and works on
// under a lock the next client now holds. Known bad: holder-told catches
// it (the told-lost check).
type lostUntold struct{ lock.Locker }

// NewLostUntold returns the lost-untold known-bad lock.
func NewLostUntold(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	l, err := NewMutex(client, name, opts)
	if err != nil {
		return nil, err
	}
	return lostUntold{l}, nil
}

func (l lostUntold) Acquire(ctx context.Context) (lock.Grant, error) {
	g, err := l.Locker.Acquire(ctx)
	if err == nil {
		g.Lost = make(chan struct{}) // the bug: nothing ever closes it
	}
	return g, err
}

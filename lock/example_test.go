package lock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/resource"
)

// simpleLock is a user's own lock: put-if-absent on one key, no lease, no
// fencing token. Wrapping it in the contract takes a type and a Factory.
type simpleLock struct {
	cli *clientv3.Client
	key string
}

func newSimpleLock(cli *clientv3.Client, name string, _ lock.Options) (lock.Locker, error) {
	return &simpleLock{cli: cli, key: "my-locks/" + name}, nil
}

func (l *simpleLock) Acquire(ctx context.Context) (lock.Grant, error) {
	for {
		resp, err := l.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(l.key), "=", 0)).
			Then(clientv3.OpPut(l.key, "held")).Commit()
		if err != nil {
			return lock.Grant{}, err
		}
		if resp.Succeeded {
			return lock.Grant{}, nil // no token: this lock cannot fence
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return lock.Grant{}, ctx.Err()
		}
	}
}

func (l *simpleLock) Release(ctx context.Context, _ lock.Grant) error {
	_, err := l.cli.Delete(ctx, l.key)
	return err
}

func (l *simpleLock) Lease() clientv3.LeaseID { return 0 }
func (l *simpleLock) Close() error            { return nil }

// A user puts their own lock under test through a Factory. A lock without a
// fencing token can protect an unfenced resource, but a fenced one refuses it
// instead of pretending.
func Example() {
	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Config{Members: 3})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	cl, _ := c.NewClient("c1", "m1")

	var factory etcdlock.Factory = newSimpleLock
	l, _ := factory(cl.Etcd(), "orders", lock.Options{})
	g, err := l.Acquire(ctx)
	fmt.Println("acquired:", err == nil, "token:", g.Token)

	s, err := resource.CriticalSection(ctx, &resource.Unfenced{}, cl.Etcd(), g, cl)
	fmt.Println("unfenced write accepted:", s.Accepted, err)
	_, err = resource.CriticalSection(ctx, &resource.Fenced{}, cl.Etcd(), g, cl)
	fmt.Println("fenced refuses:", errors.Is(err, lock.ErrNoToken))
	fmt.Println("released:", l.Release(ctx, g) == nil)
	// Output:
	// acquired: true token: 0
	// unfenced write accepted: true <nil>
	// fenced refuses: true
	// released: true
}

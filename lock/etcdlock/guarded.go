package etcdlock

import (
	"context"
	"fmt"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
)

func init() {
	resource.Register(resource.Kept{Name: GuardedResource, Store: "etcd", NeedsToken: true,
		About: "a counter in etcd, written only if the writer's lock key is unchanged",
		Make:  func(key string) resource.Resource { return &Guarded{Key: key} }})
}

// Guarded is a counter kept in etcd at Key, written with a Txn that succeeds
// only if the writer's lock key still exists with the writer's revision —
// etcd's own recommendation (If(mutex.IsOwner())).
type Guarded struct {
	Key string
}

// Name is "etcd-guarded".
func (*Guarded) Name() string { return GuardedResource }

// GuardedResource is the name Guarded is registered under: a counter in
// etcd written only while the writer's lock key is unchanged.
const GuardedResource = "etcd-guarded"

// Read reads the counter (zero if never written), linearizably. The guard
// on the write is what fences: it holds only while g's key is still the
// lock's, so a read needs none.
func (r *Guarded) Read(ctx context.Context, conn resource.Conn, _ lock.Grant) (int64, error) {
	client, err := etcdConn(conn)
	if err != nil {
		return 0, err
	}
	resp, err := client.Get(ctx, r.Key)
	if err != nil {
		return 0, err
	}
	if len(resp.Kvs) == 0 {
		return 0, nil
	}
	v, err := strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("lock: counter at %s: %w", r.Key, err)
	}
	return v, nil
}

// Write puts value only while g's lock key is unchanged.
func (r *Guarded) Write(ctx context.Context, conn resource.Conn, g lock.Grant, value int64) (resource.Written, error) {
	client, err := etcdConn(conn)
	if err != nil {
		return resource.Written{}, err
	}
	guard, err := Guard(g)
	if err != nil {
		return resource.Written{}, err
	}
	resp, err := client.Txn(ctx).If(guard).Then(clientv3.OpPut(r.Key, strconv.FormatInt(value, 10))).Commit()
	if err != nil {
		return resource.Written{}, err
	}
	if !resp.Succeeded {
		return resource.Written{Rejection: resource.LockLost, Reason: "lock key gone or replaced: the lock was lost"}, nil
	}
	return resource.Written{Accepted: true}, nil
}

// etcdConn is conn as etcd's client, an error if it is none.
func etcdConn(conn resource.Conn) (*clientv3.Client, error) {
	c, ok := conn.(*clientv3.Client)
	if !ok || c == nil {
		return nil, fmt.Errorf("lock: etcd-guarded is kept in etcd: its reads and writes need an etcd client, got %T", conn)
	}
	return c, nil
}

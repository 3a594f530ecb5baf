package resource

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
)

// Pause points: where a worker can be frozen deterministically.
const (
	AfterAcquire  = "after-acquire"
	BeforeWrite   = "before-write"
	BeforeRelease = "before-release"
)

// PausePoints are where a worker may be frozen (cluster.Client implements it).
type PausePoints interface {
	PausePoint(ctx context.Context, point string) error
}

// Written is what a resource did with a write.
type Written struct {
	Accepted bool
	// Rejection classes a rejected write; Reason says why in words
	// ("stale token 10 < 12").
	Rejection Rejection
	Reason    string
}

// Rejection is why a resource refused a write.
type Rejection string

// The rejections of the built-in resources.
const (
	// StaleToken: the write's fencing token is older than one the store
	// has seen.
	StaleToken Rejection = "stale-token"
	// LockLost: the grant's lock key is gone or replaced.
	LockLost Rejection = "lock-lost"
)

// Resource is a counter a lock protects. Read and Write go through the
// client's own etcd connection where the resource lives in etcd, so a cut or
// paused client cannot reach it either. Both carry the holder's grant: a
// fenced resource fences the whole read-modify-write, not only the write.
// Implementations are safe for concurrent use.
type Resource interface {
	Name() string
	Read(ctx context.Context, client *clientv3.Client, g lock.Grant) (int64, error)
	// Write sets the counter to value with g's fencing token. A rejected
	// write is not an error: Written says why.
	Write(ctx context.Context, client *clientv3.Client, g lock.Grant, value int64) (Written, error)
}

// NewResource returns a fresh resource by name: "unfenced", "fenced" or
// "etcd-guarded" (its counter kept at key).
func NewResource(name, key string) (Resource, error) {
	switch name {
	case "unfenced":
		return &Unfenced{}, nil
	case "fenced":
		return &Fenced{}, nil
	case "etcd-guarded":
		return &Guarded{Key: key}, nil
	}
	return nil, fmt.Errorf("lock: unknown resource %q (resources: %s)", name, strings.Join(Names(), ", "))
}

// ResourceNames lists the resources in a fixed order.
func Names() []string { return []string{"unfenced", "fenced", "etcd-guarded"} }

// Unfenced is an in-memory counter that accepts every write, like a file, a
// cache or an external API with no checks.
type Unfenced struct {
	mu    sync.Mutex
	value int64
}

// Name is "unfenced".
func (*Unfenced) Name() string { return "unfenced" }

// Read returns the counter.
func (u *Unfenced) Read(context.Context, *clientv3.Client, lock.Grant) (int64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.value, nil
}

// Peek returns the counter without taking part in the workload.
func (u *Unfenced) Peek() int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.value
}

// Write always succeeds.
func (u *Unfenced) Write(_ context.Context, _ *clientv3.Client, _ lock.Grant, value int64) (Written, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.value = value
	return Written{Accepted: true}, nil
}

// Fenced is the storage of Kleppmann's fencing argument, fencing the whole
// critical section: every read and write carries the holder's token, the
// store remembers the largest token it has seen on either, and it rejects a
// write whose token is below that.
//
// Why the read must count: fence only the writes, and a stale holder (token
// 10) that read 0 can still write 1 after the new holder (token 12) read 0
// but before it wrote — both writes are accepted, both wrote 1, and an update
// is lost under a perfectly correct lock. Once the new holder's read has
// registered 12, the stale write of 10 is refused.
type Fenced struct {
	mu           sync.Mutex
	value, token int64
}

// Name is "fenced".
func (*Fenced) Name() string { return "fenced" }

// Read returns the counter and registers g's token: no write with an older
// token is accepted after it. A grant without a token is refused with
// ErrNoToken rather than trusted.
func (f *Fenced) Read(_ context.Context, _ *clientv3.Client, g lock.Grant) (int64, error) {
	if g.Token == 0 {
		return 0, lock.ErrNoToken
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.token = max(f.token, g.Token)
	return f.value, nil
}

// Peek returns the counter without registering a token: the lab's look at
// the end of a run, not a reader's.
func (f *Fenced) Peek() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.value
}

// Write accepts value if g's token is at least the largest seen so far by a
// read or a write. A grant without a token is refused with ErrNoToken.
func (f *Fenced) Write(_ context.Context, _ *clientv3.Client, g lock.Grant, value int64) (Written, error) {
	if g.Token == 0 {
		return Written{}, lock.ErrNoToken
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if g.Token < f.token {
		return Written{Rejection: StaleToken, Reason: fmt.Sprintf("stale token %d < %d", g.Token, f.token)}, nil
	}
	f.value, f.token = value, g.Token
	return Written{Accepted: true}, nil
}

// Guarded is a counter kept in etcd at Key, written with a Txn that succeeds
// only if the writer's lock key still exists with the writer's revision —
// etcd's own recommendation (If(mutex.IsOwner())).
type Guarded struct {
	Key string
}

// Name is "etcd-guarded".
func (*Guarded) Name() string { return "etcd-guarded" }

// Read reads the counter (zero if never written), linearizably. The guard
// on the write is what fences: it holds only while g's key is still the
// lock's, so a read needs none.
func (r *Guarded) Read(ctx context.Context, client *clientv3.Client, _ lock.Grant) (int64, error) {
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
func (r *Guarded) Write(ctx context.Context, client *clientv3.Client, g lock.Grant, value int64) (Written, error) {
	guard, err := etcdlock.Guard(g)
	if err != nil {
		return Written{}, err
	}
	resp, err := client.Txn(ctx).If(guard).Then(clientv3.OpPut(r.Key, strconv.FormatInt(value, 10))).Commit()
	if err != nil {
		return Written{}, err
	}
	if !resp.Succeeded {
		return Written{Rejection: LockLost, Reason: "lock key gone or replaced: the lock was lost"}, nil
	}
	return Written{Accepted: true}, nil
}

// Section is what one critical section did.
type Section struct {
	Read int64
	Written
}

// CriticalSection is the workload's critical section: read the counter,
// pass the BeforeWrite pause point, write read+1 with the grant's token.
func CriticalSection(ctx context.Context, r Resource, client *clientv3.Client, g lock.Grant, p PausePoints) (Section, error) {
	v, err := r.Read(ctx, client, g)
	if err != nil {
		return Section{}, err
	}
	if p != nil {
		if err := p.PausePoint(ctx, BeforeWrite); err != nil {
			return Section{Read: v}, err
		}
	}
	w, err := r.Write(ctx, client, g, v+1)
	return Section{Read: v, Written: w}, err
}

package resource

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/locklab/locklab/lock"
)

// Pause points: where a worker can be frozen deterministically. InAcquire
// and InRelease are inside the lock's own work, told apart on the wire:
// after its acquire's first write reached the store, or its release's
// first request, and before the next request does — or right after the
// acquire or release, when it sent nothing more.
const (
	AfterAcquire  = "after-acquire"
	BeforeWrite   = "before-write"
	BeforeRelease = "before-release"
	InAcquire     = "in-acquire"
	InRelease     = "in-release"
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

// Conn is a client's own connection to the store that keeps a resource
// (etcd's *clientv3.Client for etcd-guarded), nil for a resource the lab
// keeps in memory. A store's guarded resource takes its own kind and
// refuses any other.
type Conn any

// Resource is a counter a lock protects. Read and Write go through the
// client's own connection where the resource lives in the lock's store, so
// a cut or paused client cannot reach it either. Both carry the holder's grant: a
// fenced resource fences the whole read-modify-write, not only the write.
// Implementations are safe for concurrent use.
type Resource interface {
	Name() string
	Read(ctx context.Context, client Conn, g lock.Grant) (int64, error)
	// Write sets the counter to value with g's fencing token. A rejected
	// write is not an error: Written says why.
	Write(ctx context.Context, client Conn, g lock.Grant, value int64) (Written, error)
}

// NewResource returns a fresh resource by name: "unfenced", "fenced", or
// one a store keeps ("etcd-guarded", its counter kept at key).
func NewResource(name, key string) (Resource, error) {
	switch name {
	case "unfenced":
		return &Unfenced{}, nil
	case "fenced":
		return &Fenced{}, nil
	}
	if k, ok := KeptBy(name); ok {
		return k.Make(key), nil
	}
	return nil, fmt.Errorf("lock: unknown resource %q (resources: %s)", name, strings.Join(Names(), ", "))
}

// Names lists the resources in a fixed order: the lab's own, then the
// stores', by name (whatever order their packages registered them in).
func Names() []string {
	regMu.Lock()
	defer regMu.Unlock()
	var kept []string
	for _, r := range registered {
		kept = append(kept, r.Name)
	}
	slices.Sort(kept)
	return append([]string{"unfenced", "fenced"}, kept...)
}

// NeedsToken says whether a write to the resource called name is fenced
// by the grant's Token: fenced's is, and a store's that says so; a lock
// whose grants carry none cannot write to it.
func NeedsToken(name string) bool {
	if name == "fenced" {
		return true
	}
	k, ok := KeptBy(name)
	return ok && k.NeedsToken
}

// Kept is a resource a store keeps: a counter in the lock's own store,
// written only while the writer's grant still stands there (etcd's write
// guarded by the grant's key, Redis's by the value at its key).
type Kept struct {
	// Name is the resource's ("etcd-guarded").
	Name string
	// Store is the name of the store that keeps it: a lock of another store
	// writes to it from nowhere, and leaves it out.
	Store string
	// About says what it is, in a line (locklab list).
	About string
	// NeedsToken: the write is guarded by the grant's Token (and Key); a
	// lock whose grants carry no token cannot write it.
	NeedsToken bool
	// Make returns a fresh one whose counter the store keeps at key.
	Make func(key string) Resource
}

var (
	regMu      sync.Mutex
	registered []Kept
)

// Register adds a resource a store keeps. A store's lock package calls it
// from its init function; a name registered twice panics.
func Register(k Kept) {
	regMu.Lock()
	defer regMu.Unlock()
	if k.Name == "unfenced" || k.Name == "fenced" || slices.ContainsFunc(registered, func(r Kept) bool { return r.Name == k.Name }) {
		panic("resource: " + k.Name + " registered twice")
	}
	registered = append(registered, k)
}

// KeptBy is the registration of the resource called name, if a store
// keeps it (false for the lab's own, and for a name nobody registered).
func KeptBy(name string) (Kept, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	i := slices.IndexFunc(registered, func(r Kept) bool { return r.Name == name })
	if i < 0 {
		return Kept{}, false
	}
	return registered[i], true
}

// Unfenced is an in-memory counter that accepts every write, like a file, a
// cache or an external API with no checks.
type Unfenced struct {
	mu    sync.Mutex
	value int64
}

// Name is "unfenced".
func (*Unfenced) Name() string { return "unfenced" }

// Read returns the counter.
func (u *Unfenced) Read(context.Context, Conn, lock.Grant) (int64, error) {
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
func (u *Unfenced) Write(_ context.Context, _ Conn, _ lock.Grant, value int64) (Written, error) {
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
func (f *Fenced) Read(_ context.Context, _ Conn, g lock.Grant) (int64, error) {
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
func (f *Fenced) Write(_ context.Context, _ Conn, g lock.Grant, value int64) (Written, error) {
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

// Section is what one critical section did.
type Section struct {
	Read int64
	Written
}

// CriticalSection is the workload's critical section: read the counter,
// pass the BeforeWrite pause point, write read+1 with the grant's token.
func CriticalSection(ctx context.Context, r Resource, client Conn, g lock.Grant, p PausePoints) (Section, error) {
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

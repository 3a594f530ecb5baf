package lock

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Sentinel errors. Test them with errors.Is.
var (
	// ErrSessionExpired: the lease behind the lock ended — while waiting,
	// before acquiring, or (for Release) while holding. A Locker whose session
	// expired stays unusable; make a new one.
	ErrSessionExpired = errors.New("lock: session expired")
	// ErrNotHeld: Release was given a grant that is no longer held (released
	// already, or lost with its lease). Nothing was deleted.
	ErrNotHeld = errors.New("lock: not held")
	// ErrNoToken: a fenced resource was given a grant without a fencing token.
	ErrNoToken = errors.New("lock: this lock gives no fencing token")
	// ErrBadTTL: Options.TTL is below one second.
	ErrBadTTL = errors.New("lock: lease TTL must be at least 1 second")
	// ErrUnknownLock: no built-in lock of that name.
	ErrUnknownLock = errors.New("lock: unknown lock")
)

// Grant is a held lock, on any store.
type Grant struct {
	// Key is the lock key on the store; "" for a lock that keeps none.
	Key string
	// Value is what the grant wrote at Key, where the store compares it
	// (a Redis lock's random value, which release and renewal check); ""
	// where the key itself is the grant's (etcd: its create revision).
	Value string
	// Token is the fencing token, an integer the store orders: larger for
	// every later grant of the same lock (etcd: the create revision of the
	// lock key; Redis: an INCR taken with the grant). Zero means the lock
	// gives none. An etcd lock whose token is anything else (a counter of
	// its own) leaves Key empty: the lab reads Key at revision Token and
	// fails a grant whose key was not created there.
	Token int64
	// Lease is the lease the grant rests on, as the store numbers it (an
	// etcd lease ID): when the server ends it, the grant is no longer
	// valid. Zero if the store has none (a Redis key's own expiry) or the
	// lock does not say; on etcd the lab then reads the lease of Key as it
	// was at revision Token.
	Lease int64
	// Lost is closed once the lock's client learns its grant is gone (its
	// lease ended, its key expired or is another's). It can lag the
	// server: another client may already hold the lock. Nil when the lock
	// cannot tell.
	Lost <-chan struct{}
}

// Locker is one client's handle on one named lock, on any store.
//
// A Locker is used by one goroutine at a time: Acquire, then Release, then
// Acquire again. Acquire returns ctx's error if ctx ends first, and leaves no
// key of this client behind. If the lease (or the key's expiry) ends while a
// grant is held, the grant is silently lost on the server (another client may
// acquire) — watch Grant.Lost, and fence what you protect. Release and Close
// do their cleanup with the ctx given (Close with its own short timeout).
type Locker interface {
	Acquire(ctx context.Context) (Grant, error)
	Release(ctx context.Context, g Grant) error
	// Close ends the Locker and its lease; a held grant is released (or,
	// where the store has no lease, left to expire).
	Close() error
}

// A Poller is a Locker that waits by polling, on a timer of its own, rather
// than by watching. Polls is how many times it has tried again after
// finding the lock taken: each is a wake-up of the waiter, as a watch event
// is for a watching lock (benchmarks count both).
type Poller interface {
	Polls() int64
}

// Options configure a lock, on any store.
type Options struct {
	// TTL is the lease TTL (etcd) or the key's expiry (Redis) in seconds
	// (etcd raises values below its minimum, 1 s with the lab's default
	// timings). Zero means DefaultTTL.
	TTL int
	// Prefix is prepended to the lock name to form its keys. Empty means
	// DefaultPrefix.
	Prefix string
	// Retry is how long a waiter that polls waits before it tries again.
	// Zero means the lock's own default.
	Retry time.Duration
}

// Defaults for Options fields left zero.
const (
	DefaultTTL    = 1
	DefaultPrefix = "locklab/locks/"
)

// Factory makes a Locker for the lock called name, used through client:
// the store's client for this client's own link (C is *clientv3.Client for
// etcd — etcdlock.Factory —, []*redis.Client for Redis: one primary, or
// Redlock's masters; *zk.Conn for ZooKeeper).
type Factory[C any] func(client C, name string, opts Options) (Locker, error)

// Regression is a deliberately broken lock that reproduces a public lock
// bug. It is not in the default matrix; it exists so that the lab
// proves, on every build, that it still catches the bug: the named scenarios
// must FAIL it on every seed and every resource, fenced and etcd-guarded
// included. A change that lets one pass has cost the lab its power to
// detect.
type Regression struct {
	// Name is the lock's name, after the upstream issue.
	Name string
	// Bug says, in a line, what is wrong with it.
	Bug string
	// Link is the upstream report.
	Link string
	// Scenarios are the catalog scenarios that must catch it.
	Scenarios []string
	// Check is the check whose FAIL catches it.
	Check string
}

// Descriptor describes one lock a store's package runs by name, the same
// way on every store (etcdlock.Lock, redislock.Lock and zklock.Lock are
// Descriptors of their store's client): C is the store's client.
type Descriptor[C any] struct {
	Name string
	// About says in a line what it is.
	About string
	// Story is what locklab explain tells of it beyond About: how it
	// works, what it gets right and what it cannot do, in paragraphs
	// ("" for none).
	Story string
	// Factory makes it.
	Factory Factory[C]
	// Masters is how many independent servers it runs over, each a master
	// of its own (Redlock's five); zero for the store's one set of
	// replicated servers.
	Masters int
	// Via names what stands between its clients and the store, which the
	// store's runs put there ("" for nothing: each client reaches the
	// servers over a link of its own). PostgreSQL's pglock.ViaPgBouncer is
	// a connection pooler in transaction mode.
	Via string
	// Adapter marks the lab's own adapter of a lock people use, made to
	// keep the contract where the lock as shipped does not: run by name,
	// not among those a run of every lock runs (which runs the locks as
	// they ship).
	Adapter bool
	// Program marks a lock its factory runs as a program the lab starts
	// (the process protocol): a run learns what its grants carry from one
	// grant first, as it does of a user's program (its preflight).
	Program bool
	// Weak are the catalog lessons it fails as it ships — by its design,
	// not by a bug of the lab's — each with the check that says so: the
	// lab documents them as FAIL rather than hide them.
	Weak map[string]string
	// Bad describes a known-bad lock: its bug and the lessons that must
	// catch it (nil for a lock people use).
	Bad *Regression
}

// Description is what a Descriptor says of its lock, whatever its store's
// client: what a listing of every store's locks shows.
type Description struct {
	Name, About, Story string
	Adapter            bool
	Weak               map[string]string
	Bad                *Regression
}

// Tell gives each descriptor of ds its story by name, from stories (a
// lock package's init does so).
func Tell[C any](ds []Descriptor[C], stories map[string]string) {
	for i := range ds {
		ds[i].Story = stories[ds[i].Name]
	}
}

// Regressions are the known-bad locks among ds, each with the lessons
// that must catch it and the check that does, in ds's order.
func Regressions[C any](ds []Descriptor[C]) []Regression {
	var out []Regression
	for _, d := range ds {
		if d.Bad != nil {
			out = append(out, *d.Bad)
		}
	}
	return out
}

// Find returns the descriptor of ds called name; false if there is none.
func Find[C any](ds []Descriptor[C], name string) (Descriptor[C], bool) {
	i := slices.IndexFunc(ds, func(d Descriptor[C]) bool { return d.Name == name })
	if i < 0 {
		return Descriptor[C]{}, false
	}
	return ds[i], true
}

// Description is d without its factory.
func (d Descriptor[C]) Description() Description {
	return Description{Name: d.Name, About: d.About, Story: d.Story, Adapter: d.Adapter, Weak: d.Weak, Bad: d.Bad}
}

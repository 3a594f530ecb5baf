package redisrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/redislock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run/engine"
	"github.com/locklab/locklab/run/follow"
)

// scriptMembers is how many members the catalog's scripts name.
const scriptMembers = 3

// Resources are the resources a Redis run protects: the lab's own
// counters, and on one primary redis-guarded, a counter beside the lock's
// key written only while the key holds the writer's grant (Redlock's
// masters are independent: none of them alone can guard a write).
func Resources(masters bool) []string {
	if masters {
		return engine.Counters()
	}
	return append(engine.Counters(), redislock.GuardedResource)
}

// Config describes a run.
type Config struct {
	// Set is the Redis the run uses: one primary and its replicas (every
	// client talks to the primary), or independent masters (Masters: every
	// client talks to each, as Redlock does).
	Set     *redisd.Set
	Masters bool
	Factory redislock.Factory
	TTL     int    // seconds: the lock keys' expiry
	RunID   string // unique per run within the set: keys live under it
	Sinks   []history.Sink
	// Resource names the resources; empty means Resources().
	Resource []string
	Minimum  *history.Minimum
	// OpTimeout bounds one acquire, critical section or release; zero
	// means run.DefaultOpTimeout.
	OpTimeout time.Duration
}

// Env is one run of a Redis lock: the engine's clients and histories on a
// Redis set. Methods are safe for concurrent use by different clients;
// one client does one thing at a time.
type Env struct {
	*engine.Engine
	set     *redisd.Set
	masters bool
	factory redislock.Factory

	mu      sync.Mutex
	leases  int64               // grants so far: each grant's lease is its number
	watched follow.List[*watch] // every grant the sweep follows
	// conns are each client's own client of the primary, through its
	// link, beside its lock's: redis-guarded's reads and writes go where
	// its lock's do.
	conns map[string]*redis.Client
}

// New prepares a run; the engine sweeps its grants, recording on every
// history when a grant's key leaves the server.
func New(cfg Config) (*Env, error) {
	if cfg.Set == nil || cfg.Factory == nil {
		return nil, errors.New("redisrun: a run needs a Redis set and a lock")
	}
	prefix := "locklab/runs/" + cfg.RunID + "/"
	res, err := engine.NewResources("Redis", cfg.Resource, Resources(cfg.Masters), prefix+"counter")
	if err != nil {
		return nil, fmt.Errorf("redisrun: %w", err)
	}
	e := &Env{set: cfg.Set, masters: cfg.Masters, factory: cfg.Factory, conns: map[string]*redis.Client{}}
	eng, err := engine.New(engine.Config{Store: store{e}, Resources: res, Sinks: cfg.Sinks, Minimum: cfg.Minimum,
		Options:   lock.Options{TTL: cfg.TTL, Prefix: prefix},
		OpTimeout: cfg.OpTimeout, Sweep: e.sweep, StoreName: "Redis"})
	if err != nil {
		return nil, err
	}
	e.Engine = eng
	return e, nil
}

// store is the Env as the engine's Store.
type store struct{ e *Env }

// Links opens a client's links: to each master for Redlock, else to the
// primary (every client of a replicated set talks to it).
func (s store) Links(_, member string) ([]*netproxy.Proxy, error) {
	if _, err := s.e.member(member); err != nil {
		return nil, err
	}
	if !s.e.masters {
		p, err := s.e.set.PrimaryLink()
		return []*netproxy.Proxy{p}, err
	}
	return engine.OpenLinks(len(s.e.set.Names()), s.e.set.Link)
}

// Locker makes a client's lock over Redis clients of its own, one behind
// each of its links.
func (s store) Locker(client string, links []*netproxy.Proxy) (lock.Locker, func() error, error) {
	e := s.e
	var rcs []*redis.Client
	for i, p := range links {
		server := e.set.Primary()
		if e.masters {
			server = i
		}
		rcs = append(rcs, e.newRedis(server, p.Addr()))
	}
	// redis-guarded's reads and writes go where the lock's do, through the
	// same link, on a client of their own: sharing the lock's pool, a
	// write under way would send the lock's renewal down a new connection,
	// whose handshake over a slow link outlasts a watchdog's patience (the
	// lab's resource, not the lock, would have made it late).
	all := rcs
	if !e.masters {
		own := e.newRedis(e.set.Primary(), links[0].Addr())
		all = append(slices.Clone(rcs), own)
		e.mu.Lock()
		e.conns[client] = own
		e.mu.Unlock()
	}
	done := func() error {
		var errs []error
		for _, rc := range all {
			errs = append(errs, rc.Close())
		}
		return errors.Join(errs...)
	}
	e.connect(all, links)
	l, err := e.factory(rcs, "lock", e.Options())
	if err != nil {
		done()
		return nil, nil, err
	}
	return l, done, nil
}

// Granted looks at a grant's key once it is recorded, on one primary: a
// key with no expiry rests on no lease — a holder that dies keeps the lock
// for ever — and the history says so (history.ObservedLeaseless).
func (s store) Granted(ctx context.Context, client string, g lock.Grant) {
	if s.e.masters || g.Key == "" {
		return // Redlock's key lives on independent masters, each with its own expiry
	}
	admin := s.e.set.Admin(s.e.set.Primary())
	if admin == nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if ttl, err := admin.PTTL(rctx, g.Key).Result(); err == nil && ttl == -1 {
		s.e.Histories().Leaseless(client, g.Token)
	}
}

// Conn is the client's own connection to the primary, for redis-guarded.
func (s store) Conn(client string) resource.Conn {
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	if c := s.e.conns[client]; c != nil {
		return c
	}
	return nil
}

func (s store) Follow(client string, g lock.Grant) (int64, func(time.Time)) {
	return s.e.follow(client, g)
}
func (s store) Released(lease int64) bool                           { return s.e.released(lease) }
func (s store) Settle(ctx context.Context)                          { s.e.sweep(ctx) }
func (s store) Gone(ctx context.Context, lease int64) (bool, error) { return s.e.gone(ctx, lease) }
func (s store) Left(ctx context.Context) ([]string, error)          { return s.e.left(ctx) }

// Members names the servers as a script does, m1…mN (the set's r1…rN),
// and at least m1…m3: a client's member is only where a script says it
// lives (every client talks to the primary, or to every master), so the
// catalog's scripts, written for three members, run on a Redis of one.
func (e *Env) Members() []string {
	out := make([]string, max(len(e.set.Names()), scriptMembers))
	for i := range out {
		out[i] = fmt.Sprintf("m%d", i+1)
	}
	return out
}

// member is the index of member mN.
func (e *Env) member(name string) (int, error) {
	i := slices.Index(e.Members(), name)
	if i < 0 {
		return 0, fmt.Errorf("unknown member %q (members: %s)", name, strings.Join(e.Members(), ", "))
	}
	return i, nil
}

// Close ends open faults, records each resource's final value, closes the
// run's clients, stops the sweep and removes the run's keys.
func (e *Env) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(e.Finish(ctx, func(ctx context.Context) error { e.sweep(ctx); return nil }, e.final), e.removeKeys(ctx))
}

// final reads a counter the run keeps in Redis (redis-guarded) on the
// primary — the promoted one, after a failover.
func (e *Env) final(ctx context.Context, r resource.Resource) (int64, error) {
	admin := e.set.Admin(e.set.Primary())
	if admin == nil {
		return 0, errors.New("no primary answers")
	}
	return r.Read(ctx, admin, lock.Grant{})
}

// removeKeys deletes every key under the run's prefix on every running
// server that takes writes (by SCAN: a Redis of the user's own may hold
// many keys, and KEYS would block it), and every key a grant named outside
// it (a library that writes a key of its own making from the name it is
// given).
func (e *Env) removeKeys(ctx context.Context) error {
	var errs []error
	outside := e.grantKeysOutside()
	for _, i := range e.servers() {
		admin := e.set.Admin(i)
		if admin == nil {
			continue
		}
		iter := admin.Scan(ctx, 0, e.Options().Prefix+"*", 100).Iterator()
		keys := slices.Clone(outside)
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		err := iter.Err()
		if err == nil && len(keys) > 0 {
			err = admin.Del(ctx, keys...).Err()
		}
		if dead, last := e.set.Died(i); err != nil && dead {
			errs = append(errs, fmt.Errorf("redis-server %s died during the run, not by a fault of the lab's (its last output: %s)",
				e.set.Names()[i], cmp.Or(last, "none")))
		} else if err != nil {
			errs = append(errs, fmt.Errorf("removing the run's keys from %s: %w", e.set.Names()[i], err))
		}
	}
	return errors.Join(errs...)
}

// servers are the servers a grant lives on: every master, or the primary.
func (e *Env) servers() []int {
	if e.masters {
		out := make([]int, len(e.set.Names()))
		for i := range out {
			out[i] = i
		}
		return out
	}
	return []int{e.set.Primary()}
}

// newRedis is a client of server i behind addr (a proxy of the lab's):
// no retries of its own, so a lost answer is the operation's.
// connect has each of a new client's connections made before its lock
// first asks, as an application's Redis clients are long connected when
// its lock is used, and as etcd's client is connected before its first
// step: a lock that gives each server a small share of its TTL to answer
// (Redlock: redsync gives each master five hundredths of it, 50 ms under a
// one-second TTL) would otherwise spend it dialling on a busy machine and
// be refused by every master. A client whose links are cut (one started
// again after a crash) is left to connect on its first ask; what a server
// answers the lock is the lock's own to judge, so a ping that fails is
// not an error here.
func (e *Env) connect(rcs []*redis.Client, links []*netproxy.Proxy) {
	if slices.ContainsFunc(links, (*netproxy.Proxy).IsCut) {
		return
	}
	var wg sync.WaitGroup
	for _, rc := range rcs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), e.OpTimeout())
			defer cancel()
			rc.Ping(ctx) //nolint:errcheck // see above
		})
	}
	wg.Wait()
}

func (e *Env) newRedis(i int, addr string) *redis.Client {
	o := e.set.ClientOptions(i, addr)
	t := e.OpTimeout()
	o.MaxRetries, o.DialTimeout, o.ReadTimeout, o.WriteTimeout = -1, t, t, t
	o.ContextTimeoutEnabled, o.PoolSize = true, 4
	return redis.NewClient(o)
}

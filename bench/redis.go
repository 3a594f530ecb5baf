package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/lock"
)

// RunRedis makes one measurement of a Redis lock on s: cfg.Redis makes it
// (cfg.Factory is not used), over every server as a master if cfg.Masters
// (Redlock), else on the primary. Each client reaches the servers through
// links of its own, as in the lab's runs. A polling lock's wake-ups are its
// tries after the first, counted off its links; there are no elections.
func RunRedis(ctx context.Context, s *redisd.Set, cfg Config) (Result, error) {
	if cfg.Redis == nil {
		return Result{}, errors.New("bench: no Redis lock factory")
	}
	return runOn(ctx, cfg, func(cfg Config, name string, _ int) (*redisWorker, error) {
		return newRedisWorker(s, cfg, name)
	})
}

// runOn makes one measurement of workers made by newWorker, one per
// client, on one lock name of the measurement's own, and closes them.
func runOn[C contender](ctx context.Context, cfg Config, newWorker func(cfg Config, name string, i int) (C, error)) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	run := runs.Add(1)
	name := fmt.Sprintf("lock-%08x-%d", rand.Uint32(), run) // not cfg.Lock: an exec: lock's names a command
	var workers []C
	for i := range cfg.Clients {
		if err := ctx.Err(); err != nil { // interrupted while the clients start
			closeAll(workers)
			return Result{}, err
		}
		w, err := newWorker(cfg, name, i)
		if err != nil {
			closeAll(workers)
			return Result{}, fmt.Errorf("bench: %s: %w", cfg.Lock, err)
		}
		workers = append(workers, w)
	}
	defer closeAll(workers)
	return measure(ctx, cfg, workers, nil)
}

// redisWorker is one measured Redis client: its links, its clients and
// its Locker.
type redisWorker struct {
	links  []*netproxy.Proxy
	rcs    []*redis.Client
	locker lock.Locker
	sent   atomic.Int64 // request chunks its links carried
	tries  atomic.Int64 // an acquire's tries after its first, all acquires
}

func newRedisWorker(s *redisd.Set, cfg Config, name string) (*redisWorker, error) {
	w := &redisWorker{}
	link := func(i int) (*netproxy.Proxy, error) {
		if cfg.Masters {
			return s.Link(i)
		}
		return s.PrimaryLink()
	}
	n := 1
	if cfg.Masters {
		n = len(s.Names())
	}
	for i := range n {
		p, err := link(i)
		if err != nil {
			w.close()
			return nil, err
		}
		p.SetTap(func() (func([]byte), func([]byte)) {
			return func(b []byte) {
				if b != nil { // nil: the connection ended
					w.sent.Add(1)
				}
			}, func([]byte) {}
		})
		w.links = append(w.links, p)
		o := s.ClientOptions(max(i, s.Primary()), p.Addr())
		o.MaxRetries = -1
		w.rcs = append(w.rcs, redis.NewClient(o))
	}
	l, err := cfg.Redis(w.rcs, name, lock.Options{TTL: cfg.TTL, Prefix: cfg.Prefix})
	if err != nil {
		w.close()
		return nil, err
	}
	w.locker = l
	return w, nil
}

func (w *redisWorker) acquire(ctx context.Context) (func(context.Context) error, error) {
	before := w.sent.Load()
	g, err := w.locker.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	if tries := (w.sent.Load() - before) / int64(len(w.links)); tries > 1 {
		w.tries.Add(tries - 1)
	}
	return func(ctx context.Context) error { return w.locker.Release(ctx, g) }, nil
}

func (w *redisWorker) wakeups() int64  { return w.tries.Load() }
func (w *redisWorker) requests() int64 { return w.sent.Load() }

func (w *redisWorker) close() {
	if w.locker != nil {
		w.locker.Close()
	}
	for _, rc := range w.rcs {
		rc.Close()
	}
	for _, p := range w.links {
		p.Close()
	}
}

// RedisFloor measures the least a hand-off can cost on s's primary (its
// first master): one SET followed by one GET from one client through a
// link of its own, samples times (see Floor).
func RedisFloor(ctx context.Context, s *redisd.Set, samples int) (Distribution, error) {
	if samples < 1 {
		return Distribution{}, fmt.Errorf("bench: floor: want at least 1 sample, got %d", samples)
	}
	server := max(s.Primary(), 0)
	p, err := s.Link(server)
	if err != nil {
		return Distribution{}, fmt.Errorf("bench: floor: %w", err)
	}
	defer p.Close()
	o := s.ClientOptions(server, p.Addr())
	o.MaxRetries = -1
	rc := redis.NewClient(o)
	defer rc.Close()
	key := fmt.Sprintf("locklab/bench/floor-%08x-%d", rand.Uint32(), runs.Add(1))
	defer rc.Del(context.WithoutCancel(ctx), key)
	ds := make([]time.Duration, 0, samples)
	for i := range samples {
		t0 := time.Now()
		if err := rc.Set(ctx, key, i, 0).Err(); err != nil {
			return Distribution{}, fmt.Errorf("bench: floor: %w", err)
		}
		if err := rc.Get(ctx, key).Err(); err != nil {
			return Distribution{}, fmt.Errorf("bench: floor: %w", err)
		}
		ds = append(ds, time.Since(t0))
	}
	return Summarise(ds), nil
}

package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/lock"
)

// RunZooKeeper makes one measurement of a ZooKeeper lock on ens:
// cfg.ZooKeeper or cfg.ZooKeeperExec makes it (cfg.Factory is not used), each client on a
// session of its own over links of its own to every server, its first
// server in turn. A waiter's wake-ups are the watch notifications its
// links carried while it acquired, read off the wire: a recipe whose
// waiter watches only the node before its own is woken about once per
// grant; one that watches the lock's parent, by every change of it (the
// herd). There are no elections to count.
func RunZooKeeper(ctx context.Context, ens *zkd.Ensemble, cfg Config) (Result, error) {
	if (cfg.ZooKeeper == nil) == (cfg.ZooKeeperExec == nil) {
		return Result{}, errors.New("bench: want one ZooKeeper lock factory")
	}
	return runOn(ctx, cfg, func(cfg Config, name string, i int) (*zkWorker, error) {
		return newZkWorker(ens, cfg, name, i)
	})
}

// zkWorker is one measured ZooKeeper client: its links, its session and
// its Locker.
type zkWorker struct {
	links    []*netproxy.Proxy
	conn     *zk.Conn
	locker   lock.Locker
	sent     atomic.Int64 // request chunks its links carried
	notified atomic.Int64 // watch notifications its links carried
}

// newZkWorker is client i, its links to every server starting at i's.
func newZkWorker(ens *zkd.Ensemble, cfg Config, name string, i int) (*zkWorker, error) {
	w := &zkWorker{}
	n := len(ens.Names())
	addrs := make([]string, n)
	for k := range n {
		p, err := ens.Link((i + k) % n)
		if err != nil {
			w.close()
			return nil, err
		}
		p.SetTap(func() (func([]byte), func([]byte)) {
			count := zkd.Notifications()
			return func(b []byte) {
					if b != nil { // nil: the connection ended
						w.sent.Add(1)
					}
				}, func(b []byte) {
					w.notified.Add(int64(count(b)))
				}
		})
		w.links = append(w.links, p)
		addrs[k] = p.Addr()
	}
	opts := lock.Options{TTL: cfg.TTL, Prefix: cfg.Prefix}
	var l lock.Locker
	var err error
	if cfg.ZooKeeperExec != nil {
		l, err = cfg.ZooKeeperExec(addrs, name, opts) // it makes its own session over the links
	} else if w.conn, _, err = zk.Connect(addrs, time.Duration(cfg.TTL)*time.Second, zk.WithLogger(zkd.Silent{})); err == nil {
		err = hasSession(w.conn)
		if err == nil {
			l, err = cfg.ZooKeeper(w.conn, name, opts)
		}
	}
	if err != nil {
		w.close()
		return nil, err
	}
	w.locker = l
	return w, nil
}

// sessionWait bounds how long a worker's session may take to be given: a
// fresh ensemble's JVMs take seconds over their first requests on a busy
// machine, and a measurement that began before would time the session,
// not the lock.
const sessionWait = 30 * time.Second

// hasSession waits until c has its session.
func hasSession(c *zk.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), sessionWait)
	defer cancel()
	return poll.Until(ctx, "a ZooKeeper session", 10*time.Millisecond, func(context.Context) (bool, error) {
		return c.State() == zk.StateHasSession, nil
	})
}

func (w *zkWorker) acquire(ctx context.Context) (func(context.Context) error, error) {
	return acquire(ctx, w.locker)
}

func (w *zkWorker) wakeups() int64  { return w.notified.Load() }
func (w *zkWorker) requests() int64 { return w.sent.Load() }

func (w *zkWorker) close() {
	if w.locker != nil {
		w.locker.Close()
	}
	if w.conn != nil {
		w.conn.Close()
	}
	for _, p := range w.links {
		p.Close()
	}
}

// ZooKeeperFloor measures the least a hand-off can cost on ens: one write
// (a setData, through the quorum) followed by one read, from one client
// through a link of its own to the first server, samples times (see
// Floor).
func ZooKeeperFloor(ctx context.Context, ens *zkd.Ensemble, samples int) (Distribution, error) {
	if samples < 1 {
		return Distribution{}, fmt.Errorf("bench: floor: want at least 1 sample, got %d", samples)
	}
	p, err := ens.Link(0)
	if err != nil {
		return Distribution{}, fmt.Errorf("bench: floor: %w", err)
	}
	defer p.Close()
	c, _, err := zk.Connect([]string{p.Addr()}, 10*time.Second, zk.WithLogger(zkd.Silent{}))
	if err != nil {
		return Distribution{}, fmt.Errorf("bench: floor: %w", err)
	}
	defer c.Close()
	node, err := c.Create(fmt.Sprintf("/locklab-floor-%08x-%d", rand.Uint32(), runs.Add(1)), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	if err != nil {
		return Distribution{}, fmt.Errorf("bench: floor: %w", err)
	}
	ds := make([]time.Duration, 0, samples)
	for i := range samples {
		if ctx.Err() != nil {
			return Distribution{}, ctx.Err()
		}
		t0 := time.Now()
		if _, err := c.Set(node, []byte{byte(i)}, -1); err != nil {
			return Distribution{}, fmt.Errorf("bench: floor: %w", err)
		}
		if _, _, err := c.Get(node); err != nil {
			return Distribution{}, fmt.Errorf("bench: floor: %w", err)
		}
		ds = append(ds, time.Since(t0))
	}
	return Summarise(ds), nil
}

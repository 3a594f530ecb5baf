package pgbench

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/cluster/pgd"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/pglock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/run/pgrun"
)

func init() { bench.RegisterStore(bench.Store{Name: pgrun.Store, Locks: names, Open: open}) }

// names are the PostgreSQL locks bench measures by name: those people use
// (a known-bad one is a lesson's, not a measurement's).
func names() []string {
	var out []string
	for _, l := range pglock.Locks() {
		if l.Bad == nil {
			out = append(out, l.Name)
		}
	}
	return out
}

// lockOf is the lock called name if it runs on PostgreSQL: one of the
// lab's PostgreSQL locks, or a lock run as a process on store.
func lockOf(name, store string) (pglock.Factory, bool) {
	if l, err := pglock.Find(name); err == nil {
		return l.Factory, true
	}
	command, ok := strings.CutPrefix(name, process.ExecPrefix)
	if !ok || store != pgrun.Store {
		return nil, false
	}
	f, err := pglock.Exec(command)
	return f, err == nil // an error was told when the flags were read
}

// open starts a server for the lock called name, if it is PostgreSQL's,
// and measures its hand-off floor.
func open(ctx context.Context, name, store string) (*bench.Opened, bool, error) {
	f, ok := lockOf(name, store)
	if !ok {
		return nil, false, nil
	}
	srv, err := pgd.Start(ctx, pgd.Options{})
	if err != nil {
		return nil, true, err
	}
	floor, err := Floor(ctx, srv, bench.FloorSamples)
	if err != nil {
		srv.Close()
		return nil, true, err
	}
	return &bench.Opened{Floor: floor, FloorOf: fmt.Sprintf("a PostgreSQL server (one UPDATE + one SELECT, %d samples)", bench.FloorSamples),
		Close: func() { srv.Close() },
		Measure: func(cfg bench.Config) (bench.Result, error) {
			cfg.ClusterCPU = srv.CPU
			return bench.RunContenders(ctx, cfg, func(cfg bench.Config, name string, _ int) (bench.Contender, error) {
				return newContender(srv, f, cfg, name)
			})
		}}, true, nil
}

// contender is one measured PostgreSQL client: its link and its lock.
type contender struct {
	link   *netproxy.Proxy
	locker lock.Locker
	sent   atomic.Int64 // request chunks its link carried
}

func newContender(srv *pgd.Server, f pglock.Factory, cfg bench.Config, name string) (*contender, error) {
	p, err := srv.Link()
	if err != nil {
		return nil, err
	}
	c := &contender{link: p}
	p.SetTap(func() (func([]byte), func([]byte)) {
		return func(b []byte) {
			if b != nil {
				c.sent.Add(1)
			}
		}, nil
	})
	ccfg, err := pgrun.ConnConfig(p.Addr(), time.Duration(cfg.TTL)*time.Second)
	if err == nil {
		c.locker, err = f(ccfg, name, lock.Options{TTL: cfg.TTL, Prefix: cfg.Prefix})
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *contender) Locker() lock.Locker { return c.locker }
func (c *contender) Requests() int64     { return c.sent.Load() }

// Wakeups are a polling lock's polls (pg-try); a lock that waits in the
// server is woken by the server alone, once, when it is granted.
func (c *contender) Wakeups() int64 {
	if p, ok := c.locker.(lock.Poller); ok {
		return p.Polls()
	}
	return 0
}

func (c *contender) Close() {
	if c.locker != nil {
		c.locker.Close()
	}
	c.link.Close()
}

// Floor measures the least a hand-off can cost on srv: one committed
// UPDATE followed by one SELECT, from one client through a link of its
// own, samples times.
func Floor(ctx context.Context, srv *pgd.Server, samples int) (bench.Distribution, error) {
	if samples < 1 {
		return bench.Distribution{}, fmt.Errorf("pgbench: floor: want at least 1 sample, got %d", samples)
	}
	p, err := srv.Link()
	if err != nil {
		return bench.Distribution{}, err
	}
	defer p.Close()
	cfg, err := pgrun.ConnConfig(p.Addr(), time.Minute)
	if err != nil {
		return bench.Distribution{}, err
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return bench.Distribution{}, fmt.Errorf("pgbench: floor: %w", err)
	}
	defer c.Close(context.Background())
	for _, sql := range []string{"CREATE TEMP TABLE floor (v int)", "INSERT INTO floor VALUES (0)"} {
		if _, err := c.Exec(ctx, sql); err != nil {
			return bench.Distribution{}, fmt.Errorf("pgbench: floor: %w", err)
		}
	}
	ds := make([]time.Duration, 0, samples)
	for range samples {
		if ctx.Err() != nil {
			return bench.Distribution{}, ctx.Err()
		}
		t0 := time.Now()
		if _, err := c.Exec(ctx, "UPDATE floor SET v = v + 1"); err != nil {
			return bench.Distribution{}, fmt.Errorf("pgbench: floor: %w", err)
		}
		var v int
		if err := c.QueryRow(ctx, "SELECT v FROM floor").Scan(&v); err != nil {
			return bench.Distribution{}, fmt.Errorf("pgbench: floor: %w", err)
		}
		ds = append(ds, time.Since(t0))
	}
	return bench.Summarise(ds), nil
}

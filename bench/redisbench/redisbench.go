package redisbench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/redislock"
	"github.com/locklab/locklab/run/redisrun"
)

func init() {
	bench.RegisterStore(bench.Store{Name: redisrun.Store, Locks: redislock.Names, Open: open})
}

// lockOf is the lock called name if it runs on Redis — one of the lab's
// Redis locks, or a lock run as a process on store (one primary, or
// Redlock's masters) — and how many independent masters it takes.
func lockOf(name, store string) (redislock.Factory, int, bool) {
	if l, err := redislock.Find(name); err == nil {
		return l.Factory, l.Masters, true
	}
	command, ok := strings.CutPrefix(name, process.ExecPrefix)
	if !ok || store != redisrun.Store && store != redisrun.MastersStore {
		return nil, 0, false
	}
	f, err := redislock.Exec(command)
	if err != nil {
		return nil, 0, false // checked when the flags were read
	}
	if store == redisrun.MastersStore {
		return f, redislock.RedlockMasters, true
	}
	return f, 0, true
}

// open starts Redis for the lock called name, if it is Redis's, and
// measures its hand-off floor.
func open(ctx context.Context, name, store string) (*bench.Opened, bool, error) {
	f, masters, ok := lockOf(name, store)
	if !ok {
		return nil, false, nil
	}
	var (
		s   *redisd.Set
		err error
	)
	if masters > 0 {
		s, err = redisd.StartIndependent(ctx, masters, redisd.Options{})
	} else {
		s, err = redisd.StartReplicated(ctx, 2, redisd.Options{})
	}
	if err != nil {
		return nil, true, err
	}
	floor, err := bench.RedisFloor(ctx, s, bench.FloorSamples)
	if err != nil {
		s.Close()
		return nil, true, err
	}
	cpu := func() (time.Duration, error) { return s.CPU(ctx) }
	return &bench.Opened{Floor: floor, FloorOf: fmt.Sprintf("a Redis primary (one SET + one GET, %d samples)", bench.FloorSamples),
		Close: func() { s.Close() },
		Measure: func(cfg bench.Config) (bench.Result, error) {
			cfg.Factory, cfg.Redis, cfg.Masters, cfg.ClusterCPU = nil, f, masters > 0, cpu
			return bench.RunRedis(ctx, s, cfg)
		}}, true, nil
}

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/redislock"
)

// storeBench is the store a lock not etcd's is measured on, started for
// it: Redis (a primary and two replicas, or Redlock's five masters) or a
// ZooKeeper ensemble of three.
type storeBench struct {
	floor bench.Distribution
	// measure measures the lock on it, the servers' CPU apart from the
	// clients'.
	measure func(bench.Config) (bench.Result, error)
	close   func()
}

// benchRedisLock is the lock called name if it runs on Redis — one of the
// lab's Redis locks, or an exec: lock with --store redis or redlock — and
// how many independent masters it takes.
func benchRedisLock(name, store string) (redislock.Factory, int, bool) {
	if l, err := redislock.Find(name); err == nil {
		return l.Factory, l.Masters, true
	}
	command, ok := strings.CutPrefix(name, process.ExecPrefix)
	if !ok || store != "redis" && store != "redlock" {
		return nil, 0, false
	}
	f, err := redislock.Exec(command)
	if err != nil {
		return nil, 0, false // checked when the flags were read
	}
	if store == "redlock" {
		return f, redislock.RedlockMasters, true
	}
	return f, 0, true
}

// openRedisBench starts Redis for a lock taking masters independent
// masters (zero: a primary and two replicas) and measures its hand-off
// floor, printing it (and recording it in report) the first time.
func openRedisBench(ctx context.Context, masters int, f redislock.Factory, stdout io.Writer, report *benchReport) (*storeBench, error) {
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
		return nil, err
	}
	floor, err := bench.RedisFloor(ctx, s, floorSamples)
	if err != nil {
		s.Close()
		return nil, err
	}
	if report.RedisFloor == nil {
		report.RedisFloor = &floor
		fmt.Fprintf(stdout, "hand-off floor on a Redis primary (one SET + one GET, %d samples): p50 %s ms, p90 %s ms, p99 %s ms\n",
			floorSamples, ms(floor.P50), ms(floor.P90), ms(floor.P99))
	}
	cpu := func() (time.Duration, error) { return s.CPU(ctx) }
	return &storeBench{floor: floor, close: func() { s.Close() },
		measure: func(cfg bench.Config) (bench.Result, error) {
			cfg.Factory, cfg.Redis, cfg.Masters, cfg.ClusterCPU = nil, f, masters > 0, cpu
			return bench.RunRedis(ctx, s, cfg)
		}}, nil
}

// openStoreBench starts the store the lock called name runs on, if it is
// not etcd — Redis or ZooKeeper (see benchRedisLock, benchZkLock) — and
// measures its floor; false for an etcd lock.
func openStoreBench(ctx context.Context, name, store string, stdout io.Writer, report *benchReport) (*storeBench, bool, error) {
	if rf, masters, ok := benchRedisLock(name, store); ok {
		sb, err := openRedisBench(ctx, masters, rf, stdout, report)
		return sb, true, err
	}
	if zf, zexec, ok := benchZkLock(name, store); ok {
		sb, err := openZkBench(ctx, zf, zexec, stdout, report)
		return sb, true, err
	}
	return nil, false, nil
}

package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/zklock"
)

// zkLockNames are the ZooKeeper locks bench measures by name: those people
// use (the known-bad one is a lesson's, not a measurement's).
func zkLockNames() []string {
	var out []string
	for _, l := range zklock.Locks() {
		if l.Bad == nil {
			out = append(out, l.Name)
		}
	}
	return out
}

// benchZkLock is the lock called name if it runs on ZooKeeper: one of the
// lab's ZooKeeper locks (its factory), or an exec: lock with --store
// zookeeper (its exec factory).
func benchZkLock(name, store string) (zklock.Factory, zklock.ExecFactory, bool) {
	if l, err := zklock.Find(name); err == nil {
		return l.Factory, nil, true
	}
	command, ok := strings.CutPrefix(name, process.ExecPrefix)
	if !ok || store != "zookeeper" {
		return nil, nil, false
	}
	f, err := zklock.Exec(command)
	if err != nil {
		return nil, nil, false // checked when the flags were read
	}
	return nil, f, true
}

// openZkBench starts an ensemble of three for a ZooKeeper lock and measures
// its hand-off floor, printing it (and recording it in report) the first
// time.
func openZkBench(ctx context.Context, f zklock.Factory, exec zklock.ExecFactory, stdout io.Writer, report *benchReport) (*storeBench, error) {
	ens, err := zkd.Start(ctx, 3, zkd.Options{})
	if err != nil {
		return nil, err
	}
	floor, err := bench.ZooKeeperFloor(ctx, ens, floorSamples)
	if err != nil {
		ens.Close()
		return nil, err
	}
	if report.ZooKeeperFloor == nil {
		report.ZooKeeperFloor = &floor
		fmt.Fprintf(stdout, "hand-off floor on a ZooKeeper ensemble of 3 (one setData + one getData, %d samples): p50 %s ms, p90 %s ms, p99 %s ms\n",
			floorSamples, ms(floor.P50), ms(floor.P90), ms(floor.P99))
	}
	return &storeBench{floor: floor, close: func() { ens.Close() },
		measure: func(cfg bench.Config) (bench.Result, error) {
			cfg.Factory, cfg.ZooKeeper, cfg.ZooKeeperExec, cfg.ClusterCPU = nil, f, exec, ens.CPU
			return bench.RunZooKeeper(ctx, ens, cfg)
		}}, nil
}

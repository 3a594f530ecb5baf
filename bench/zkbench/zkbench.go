package zkbench

import (
	"context"
	"fmt"
	"strings"

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/zklock"
	"github.com/locklab/locklab/run/zkrun"
)

func init() { bench.RegisterStore(bench.Store{Name: zkrun.Store, Locks: names, Open: open}) }

// names are the ZooKeeper locks bench measures by name: those people use
// (a known-bad one is a lesson's, not a measurement's).
func names() []string {
	var out []string
	for _, l := range zklock.Locks() {
		if l.Bad == nil {
			out = append(out, l.Name)
		}
	}
	return out
}

// lockOf is the lock called name if it runs on ZooKeeper: one of the
// lab's ZooKeeper locks, or a lock run as a process on store.
func lockOf(name, store string) (zklock.Factory, zklock.ExecFactory, bool) {
	if l, err := zklock.Find(name); err == nil {
		return l.Factory, nil, true
	}
	command, ok := strings.CutPrefix(name, process.ExecPrefix)
	if !ok || store != zkrun.Store {
		return nil, nil, false
	}
	f, err := zklock.Exec(command)
	if err != nil {
		return nil, nil, false // checked when the flags were read
	}
	return nil, f, true
}

// open starts an ensemble of three for the lock called name, if it is
// ZooKeeper's, and measures its hand-off floor.
func open(ctx context.Context, name, store string) (*bench.Opened, bool, error) {
	f, exec, ok := lockOf(name, store)
	if !ok {
		return nil, false, nil
	}
	ens, err := zkd.Start(ctx, 3, zkd.Options{})
	if err != nil {
		return nil, true, err
	}
	floor, err := bench.ZooKeeperFloor(ctx, ens, bench.FloorSamples)
	if err != nil {
		ens.Close()
		return nil, true, err
	}
	return &bench.Opened{Floor: floor, FloorOf: fmt.Sprintf("a ZooKeeper ensemble of 3 (one setData + one getData, %d samples)", bench.FloorSamples),
		Close: func() { ens.Close() },
		Measure: func(cfg bench.Config) (bench.Result, error) {
			cfg.Factory, cfg.ZooKeeper, cfg.ZooKeeperExec, cfg.ClusterCPU = nil, f, exec, ens.CPU
			return bench.RunZooKeeper(ctx, ens, cfg)
		}}, true, nil
}

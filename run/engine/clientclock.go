package engine

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/clockshim"
	"github.com/locklab/locklab/internal/piddir"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/run"
)

// clientClocks are the clients' own wall clocks, for a run that moves
// them (Config.ClientShim): one file each, in a directory of the run's.
type clientClocks struct {
	shim string
	dir  string
}

// clockOf gives l, c's new lock, the client's own wall clock, if the run
// moves clients' clocks and l is a program the lab starts: the shim is
// preloaded into it, reading c's file, which outlives a crash of the
// program as a machine's clock outlives a process. A lock run inside the
// lab's own process gets none (its clock is the lab's).
func (e *Engine) clockOf(c *client, l lock.Locker) error {
	env, ok := l.(process.Environ)
	e.mu.Lock()
	shim := e.clocks.shim
	e.mu.Unlock()
	if shim == "" || !ok {
		return nil
	}
	c.mu.Lock()
	clk := c.clock
	c.mu.Unlock()
	if clk == nil {
		e.mu.Lock()
		if e.clocks.dir == "" {
			dir, err := piddir.Make("", "clocks")
			if err != nil {
				e.mu.Unlock()
				return fmt.Errorf("the clients' clocks: %w", err)
			}
			e.clocks.dir = dir
		}
		dir := e.clocks.dir
		e.mu.Unlock()
		sub, err := os.MkdirTemp(dir, c.name+"-")
		if err != nil {
			return fmt.Errorf("%s's clock: %w", c.name, err)
		}
		if clk, err = clockshim.New(sub); err != nil {
			return fmt.Errorf("%s's clock: %w", c.name, err)
		}
		c.mu.Lock()
		c.clock = clk
		c.mu.Unlock()
	}
	env.AddEnv(clk.Env(shim)...)
	return nil
}

// MoveClientClocks has every lock run as a program made from now on —
// each client's, before its first step — run with the clock shim (shim,
// clockshim.Build's path) preloaded, reading a clock of its client's own,
// which JumpClientClock moves; as Config.ClientShim does from the start.
func (e *Engine) MoveClientClocks(shim string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.clocks.shim = shim
}

// removeClocks removes the clients' clock files, once their programs
// have ended.
func (e *Engine) removeClocks() error {
	e.mu.Lock()
	dir := e.clocks.dir
	e.clocks.dir = ""
	e.mu.Unlock()
	if dir == "" {
		return nil
	}
	return os.RemoveAll(dir)
}

// ownClock is client name's own wall clock, for step; an error where its
// lock runs inside the lab's own process, on the lab's clock.
func (e *Engine) ownClock(name, step string) (*clockshim.Clock, error) {
	c, err := e.client(name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	clk := c.clock
	c.mu.Unlock()
	if clk == nil {
		return nil, fmt.Errorf("%s %s: the lab moves the clock of a lock run as a program, with the clock shim preloaded "+
			"into it; %s's lock runs inside the lab's own process, on the lab's clock", step, name, name)
	}
	return clk, nil
}

// JumpClientClock moves client's own wall clock by offset (negative: back)
// until heal sets it right: a jump-clock fault on every history. Only a
// lock run as a program has a clock the lab can move (the run's
// Config.ClientShim preloaded into it); a Go lock reads the lab's own.
func (e *Engine) JumpClientClock(ctx context.Context, name string, offset time.Duration) (run.Outcome, error) {
	clk, err := e.ownClock(name, "jump-clock")
	if err != nil {
		return run.Outcome{}, err
	}
	_, err = e.Apply(ctx, faults.Fault{Kind: faults.JumpClock, Client: name, Offset: faults.Duration(offset)},
		func(_ context.Context, in *faults.Injection) error {
			if err := clk.Jump(offset); err != nil {
				return err
			}
			in.SetTarget(fmt.Sprintf("its clock %s off", history.Signed(clk.Offset())))
			in.SetUndo(func(context.Context) error { return clk.Reset() })
			return nil
		})
	if err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.ClockJumped, Client: name, For: clk.Offset()}, nil
}

// DriftClientClock runs client's own wall clock at rate times the
// machine's (0.5: half as fast) until heal sets it right: a drift-clock
// fault on every history. Only a lock run as a program has a clock the
// lab can move, as for JumpClientClock.
func (e *Engine) DriftClientClock(ctx context.Context, name string, rate float64) (run.Outcome, error) {
	clk, err := e.ownClock(name, "drift-clock")
	if err != nil {
		return run.Outcome{}, err
	}
	_, err = e.Apply(ctx, faults.Fault{Kind: faults.DriftClock, Client: name, Rate: rate},
		func(_ context.Context, in *faults.Injection) error {
			if err := clk.Drift(rate); err != nil {
				return err
			}
			in.SetTarget(fmt.Sprintf("its clock at ×%s", strconv.FormatFloat(rate, 'f', -1, 64)))
			in.SetUndo(func(context.Context) error { return clk.Reset() })
			return nil
		})
	if err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.ClockDrifts, Client: name, Rate: rate}, nil
}

package redisrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/run"
)

// openFault is a fault on the timeline not yet ended, and how to end it.
type openFault struct {
	id     int
	spec   history.FaultSpec
	target string
	undo   func() error
}

// faultStart records a fault's start on every history; its id ends it.
func (e *Env) faultStart(spec history.FaultSpec, target string) int {
	e.mu.Lock()
	e.faultID++
	id := e.faultID
	e.mu.Unlock()
	e.each(func(r *history.Recorder) { r.Fault(id, true, spec, target, nil) })
	return id
}

// faultEnd records a fault's end on every history.
func (e *Env) faultEnd(id int, spec history.FaultSpec, target string, err error) {
	e.each(func(r *history.Recorder) { r.Fault(id, false, spec, target, err) })
}

// open records a fault's start and keeps it until Heal (or its own end).
func (e *Env) open(spec history.FaultSpec, target string, undo func() error) int {
	id := e.faultStart(spec, target)
	e.mu.Lock()
	e.faults = append(e.faults, openFault{id, spec, target, undo})
	e.mu.Unlock()
	return id
}

// end ends the open fault id, if it is still open.
func (e *Env) end(id int) error {
	e.mu.Lock()
	i := slices.IndexFunc(e.faults, func(f openFault) bool { return f.id == id })
	if i < 0 {
		e.mu.Unlock()
		return nil
	}
	f := e.faults[i]
	e.faults = slices.Delete(e.faults, i, i+1)
	e.mu.Unlock()
	var err error
	if f.undo != nil {
		err = f.undo()
	}
	e.faultEnd(f.id, f.spec, f.target, err)
	return err
}

// Heal undoes every fault still open: links heal, paused clients resume.
func (e *Env) Heal(context.Context) (run.Outcome, error) {
	e.mu.Lock()
	ids := make([]int, len(e.faults))
	for i, f := range e.faults {
		ids[i] = f.id
	}
	e.mu.Unlock()
	var errs []error
	for _, id := range slices.Backward(ids) {
		errs = append(errs, e.end(id))
	}
	if err := errors.Join(errs...); err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Healed}, nil
}

// Pause arms a pause of client at point and returns at once: the client
// stops when its work reaches the point, its links cut, until Resume.
func (e *Env) Pause(ctx context.Context, name, point string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	if err := c.gate.Arm(point); err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.WillPause, Client: name, Point: point}, nil
}

// WaitPaused waits until client's armed pause has stopped it; the pause
// is on the timeline from then until Resume.
func (e *Env) WaitPaused(ctx context.Context, name string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	at, err := c.gate.WaitPaused(ctx)
	if err != nil {
		return run.Outcome{}, err
	}
	spec := history.FaultSpec{Kind: history.FaultPauseClient, Client: name, Point: at}
	id := e.open(spec, at, func() error {
		c.gate.Resume(c.unpark)
		return nil
	})
	c.mu.Lock()
	c.pauseID = id
	c.mu.Unlock()
	return run.Outcome{Kind: run.Paused, Client: name, Point: at}, nil
}

// Resume ends client's pause: its links heal, then its work goes on.
func (e *Env) Resume(_ context.Context, name string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	c.mu.Lock()
	id := c.pauseID
	c.pauseID = 0
	c.mu.Unlock()
	if id == 0 {
		return run.Outcome{}, fmt.Errorf("%s is not paused", name)
	}
	return run.Outcome{Kind: run.Resumed, Client: name}, e.end(id)
}

// Cut cuts client's links, both ways, until Heal.
func (e *Env) Cut(_ context.Context, name string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	c.cut()
	e.open(history.FaultSpec{Kind: history.FaultCutClient, Client: name}, name, func() error {
		c.heal()
		return nil
	})
	return run.Outcome{Kind: run.Cut, Client: name}, nil
}

// Blip cuts client's links for d, then heals them.
func (e *Env) Blip(ctx context.Context, name string, d time.Duration) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	c.cut()
	id := e.open(history.FaultSpec{Kind: history.FaultCutClient, Client: name}, name, func() error {
		c.heal()
		return nil
	})
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
	if err := e.end(id); err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Cut, Client: name, For: d}, ctx.Err()
}

// Delay has client's links delay every message by d each way until Heal.
func (e *Env) Delay(_ context.Context, name string, d time.Duration) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	for _, p := range c.links {
		p.SetDelay(d)
	}
	e.open(history.FaultSpec{Kind: history.FaultDelayClient, Client: name, Delay: int64(d)}, name, func() error {
		for _, p := range c.links {
			p.SetDelay(0)
		}
		return nil
	})
	return run.Outcome{Kind: run.Delayed, Client: name, For: d}, nil
}

// Isolate cuts member off from the other members: on a replicated set,
// the replication between it and the others is held (the primary's writes
// stop reaching its replicas), while clients still reach it.
func (e *Env) Isolate(_ context.Context, member string) (run.Outcome, error) {
	i, err := e.member(member)
	if err != nil {
		return run.Outcome{}, err
	}
	switch {
	case e.masters:
		return run.Outcome{}, errors.New("isolate: independent masters replicate nothing: there is nothing to cut them off from")
	case e.set.External():
		return run.Outcome{}, errors.New("isolate: the replication of a Redis of your own is out of the lab's reach")
	}
	var links []interface {
		Cut()
		Heal()
	}
	for j := range e.set.Names() {
		if p := e.set.Replication(j); p != nil && (i == e.set.Primary() || j == i) {
			links = append(links, p)
		}
	}
	for _, p := range links {
		p.Cut()
	}
	e.open(history.FaultSpec{Kind: history.FaultIsolateMember, Member: member}, member, func() error {
		for _, p := range links {
			p.Heal()
		}
		return nil
	})
	return run.Outcome{Kind: run.Isolated, Member: member}, nil
}

// errNotOnRedis answers a command the Redis engine does not do.
func errNotOnRedis(what string) error {
	return fmt.Errorf("%s: not available on Redis (an etcd fault)", what)
}

// Kill is not available on Redis: the failover command kills the primary
// and promotes a replica, as Sentinel would.
func (e *Env) Kill(context.Context, string) (run.Outcome, error) {
	return run.Outcome{}, errors.New("kill: not available on Redis (failover kills the primary and promotes a replica)")
}

// Expire is etcd's: a Redis key's expiry is the lock's to set.
func (e *Env) Expire(context.Context, string, string) (run.Outcome, error) {
	return run.Outcome{}, errNotOnRedis("expire")
}

// AcquireAnswerLost is not available on Redis.
func (e *Env) AcquireAnswerLost(context.Context, string) (run.Outcome, error) {
	return run.Outcome{}, errNotOnRedis("acquire answer=lost")
}

// ReleaseAnswerLost is not available on Redis.
func (e *Env) ReleaseAnswerLost(context.Context, string) (run.Outcome, error) {
	return run.Outcome{}, errNotOnRedis("release answer=lost")
}

// Failover kills the primary and promotes the first replica still
// running, as Sentinel does when the primary stops answering; every other
// replica follows it. The kill is on the timeline from then on (the old
// primary never comes back in a run). The outcome names the holders whose
// lock keys the promoted replica lacked: what asynchronous replication had
// not carried over is gone, and their locks with it.
func (e *Env) Failover(ctx context.Context) (run.Outcome, error) {
	switch {
	case e.masters:
		return run.Outcome{}, errors.New("failover: independent masters have no replicas to fail over to")
	case e.set.External():
		return run.Outcome{}, errors.New("failover: a Redis of your own is not the lab's to fail over")
	}
	old := e.set.Primary()
	next := -1
	for i := range e.set.Names() {
		if i != old && e.set.Admin(i) != nil {
			next = i
			break
		}
	}
	if next < 0 {
		return run.Outcome{}, errors.New("failover: no replica is running")
	}
	from, to := e.Members()[old], e.Members()[next]
	// The old primary never comes back in a run: its window stays open to
	// the end of the history (heal does not end it).
	e.faultStart(history.FaultSpec{Kind: history.FaultKillMember, Member: from}, from)
	e.set.Kill(old)
	// What replication had not carried over is gone: hold every
	// replication link still cut (isolate) as it is until the promotion,
	// then heal them so the replicas follow the new primary.
	if err := e.set.Promote(ctx, next); err != nil {
		return run.Outcome{}, err
	}
	var lacked []string
	for _, w := range e.heldGrants() {
		v, err := e.set.Admin(next).Get(ctx, w.key).Result()
		if err != nil || v != w.value {
			lacked = append(lacked, w.client)
		}
	}
	for _, c := range e.allClients() {
		for _, p := range c.links {
			p.Sever() // connections to the dead primary break; new ones reach the new
		}
	}
	e.sweep(context.WithoutCancel(ctx)) // the lost keys are seen gone now, before anyone is granted again
	return run.Outcome{Kind: run.FailedOver, From: from, Member: to, Lacked: lacked}, nil
}

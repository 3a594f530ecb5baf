package redisrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/run"
)

// Isolate cuts member off from the other members: on a replicated set,
// the replication between it and the others is held (the primary's writes
// stop reaching its replicas), while clients still reach it.
func (e *Env) Isolate(ctx context.Context, member string) (run.Outcome, error) {
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
	_, err = e.Apply(ctx, faults.Fault{Kind: faults.IsolateMember, Member: member}, func(_ context.Context, in *faults.Injection) error {
		for _, p := range links {
			p.Cut()
		}
		in.SetTarget(member)
		in.SetUndo(func(context.Context) error {
			for _, p := range links {
				p.Heal()
			}
			return nil
		})
		return nil
	})
	if err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Isolated, Member: member}, nil
}

// Kill is not available on Redis: the failover command kills the primary
// and promotes a replica, as Sentinel would.
func (e *Env) Kill(context.Context, string) (run.Outcome, error) {
	return run.Outcome{}, e.NotHere("kill", "failover kills the primary and promotes a replica")
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
	_, err := e.Apply(ctx, faults.Fault{Kind: faults.KillMember, Member: from}, func(ctx context.Context, in *faults.Injection) error {
		in.SetTarget(from)
		in.KeepOpen() // the old primary never comes back in a run: heal does not end it
		e.set.Kill(old)
		// What replication had not carried over is gone: every replication
		// link still cut (isolate) stays so until the promotion.
		return e.set.Promote(ctx, next)
	})
	if err != nil {
		return run.Outcome{}, err
	}
	var lacked []string
	for _, h := range e.Holders() {
		v, err := e.set.Admin(next).Get(ctx, h.Grant.Key).Result()
		if err != nil || v != h.Grant.Value {
			lacked = append(lacked, h.Client)
		}
	}
	e.Sever()                           // connections to the dead primary break; new ones reach the new
	e.sweep(context.WithoutCancel(ctx)) // the lost keys are seen gone now, before anyone is granted again
	return run.Outcome{Kind: run.FailedOver, From: from, Member: to, Lacked: lacked}, nil
}

// CutLink cuts client's link to member, one of Redlock's independent
// masters, until heal; its links to the others are left as they are: a
// client that reaches only some of the masters.
func (e *Env) CutLink(ctx context.Context, client, member string) (run.Outcome, error) {
	if !e.masters {
		return run.Outcome{}, e.NotHere("cut member=", "a client of one primary has one link, to the primary: cut cuts it")
	}
	i, err := e.member(member)
	if err != nil {
		return run.Outcome{}, err
	}
	links, err := e.Links(client)
	if err != nil {
		return run.Outcome{}, err
	}
	if i >= len(links) {
		return run.Outcome{}, fmt.Errorf("cut member=%s: %s has no link to %s", member, client, member)
	}
	p := links[i]
	_, err = e.Apply(ctx, faults.Fault{Kind: faults.CutClient, Client: client, Member: member}, func(_ context.Context, in *faults.Injection) error {
		p.Cut()
		in.SetTarget(member)
		in.SetUndo(func(context.Context) error {
			p.Heal()
			return nil
		})
		return nil
	})
	if err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Cut, Client: client, Member: member}, nil
}

package zkrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/run"
)

// Isolate cuts member off from the other servers until heal: its clients
// still reach it, and it stops serving them once it sees the quorum gone
// (they move to another server, within their session).
func (e *Env) Isolate(ctx context.Context, member string) (run.Outcome, error) {
	return run.IsolateMember(ctx, e, member)
}

// Kill kills member as a crash of its machine does until heal, which
// starts it again on its data.
func (e *Env) Kill(ctx context.Context, member string) (run.Outcome, error) {
	return run.KillMember(ctx, e, member)
}

// Fault applies a fault of a server until its Injection's Undo (or heal):
// kill-member and isolate-member of f.Member, kill-leader and
// isolate-leader of the server that leads when it is applied. A killed
// server is started again on its data; an isolated one reaches the others
// again. Its Target names the server.
func (e *Env) Fault(ctx context.Context, f faults.Fault) (*faults.Injection, error) {
	var kill bool
	switch f.Kind {
	case faults.KillMember, faults.KillLeader:
		kill = true
	case faults.IsolateMember, faults.IsolateLeader:
	default:
		return nil, e.NotHere(string(f.Kind), "ZooKeeper's faults of a server are kill and isolate, of it or of the leader")
	}
	return e.Apply(ctx, f, func(ctx context.Context, in *faults.Injection) error {
		i := -1
		if f.Kind == faults.KillLeader || f.Kind == faults.IsolateLeader {
			if i = e.ens.Leader(ctx); i < 0 {
				return errors.New("no server leads the ensemble")
			}
		} else {
			var err error
			if i, err = e.member(f.Member); err != nil {
				return err
			}
		}
		in.SetTarget(e.Members()[i])
		e.mu.Lock()
		e.faulted = e.Members()[i]
		e.mu.Unlock()
		if kill {
			e.ens.Kill(i)
			in.SetUndo(func(ctx context.Context) error { return e.ens.Restart(ctx, i) })
			return nil
		}
		e.ens.Isolate(i)
		in.SetUndo(func(context.Context) error { e.ens.HealPeers(); return nil })
		return nil
	})
}

// KillLeader kills the server that leads, as Kill does a server named: its
// followers drop their clients while they elect another, and every client
// moves to a server that serves it again, within its session.
func (e *Env) KillLeader(ctx context.Context) (run.Outcome, error) {
	return run.KillLeader(ctx, e)
}

// WaitServed waits, after the leader was killed or a server isolated,
// until that server serves nobody and another leads the ensemble (the
// history names it), then until every client has been answered since: a
// server that serves no longer has dropped its clients, and one that has
// not joined the leader answers none.
func (e *Env) WaitServed(ctx context.Context) (run.Outcome, error) {
	e.mu.Lock()
	faulted := e.faulted
	e.mu.Unlock()
	i, err := e.member(faulted)
	if err != nil {
		return run.Outcome{}, errors.New("wait-served: no server was killed or isolated")
	}
	ctx, cancel := context.WithTimeout(ctx, faults.DefaultWait+e.TTLDuration())
	defer cancel()
	err = poll.Until(ctx, faulted+" to serve nobody", 20*time.Millisecond, func(ctx context.Context) (bool, error) {
		return !e.ens.Serves(ctx, i), nil
	})
	if err != nil {
		return run.Outcome{}, err
	}
	leader, err := e.WaitLeader(ctx, faulted)
	if err != nil {
		return run.Outcome{}, err
	}
	e.Histories().Observe(history.ObservedLeader, "", leader)
	if err := e.WaitAnswered(ctx); err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Served}, nil
}

// WaitLeader waits until a server other than member leads the ensemble,
// and names it.
func (e *Env) WaitLeader(ctx context.Context, member string) (string, error) {
	var leader string
	err := poll.Until(ctx, "a leader other than "+member, 20*time.Millisecond, func(ctx context.Context) (bool, error) {
		i := e.ens.Leader(ctx)
		if i < 0 || e.Members()[i] == member {
			return false, nil
		}
		leader = e.Members()[i]
		return true, nil
	})
	return leader, err
}

// CutOff lists no client: every client has a link to every server, and
// moves to another when its own stops serving it, within its session.
func (e *Env) CutOff(string) []string { return nil }

// Leased reports whether client has had a session, read off its links.
func (e *Env) Leased(client string) bool { return e.sessionOf(client) != 0 }

// Expire ends client's session the way a session ends in production (mode
// lapse): its links are cut, the ensemble expires the session once its
// timeout passes with nothing heard, and the links stay cut until heal.
// ZooKeeper has no revoke of another client's session: mode revoke is not
// available. The session is the client's latest, read off its links.
func (e *Env) Expire(ctx context.Context, client, mode string) (run.Outcome, error) {
	if mode != faults.ModeLapse {
		return run.Outcome{}, e.NotHere("expire mode="+mode, "ZooKeeper ends a session only when its timeout passes: mode=lapse")
	}
	session := e.sessionOf(client)
	if session == 0 {
		return run.Outcome{}, fmt.Errorf("expire: no session of %s's was seen on its links yet", client)
	}
	links, err := e.Links(client)
	if err != nil {
		return run.Outcome{}, err
	}
	_, err = e.Apply(ctx, faults.Fault{Kind: faults.ExpireLease, Client: client, Mode: mode}, func(ctx context.Context, in *faults.Injection) error {
		for _, p := range links {
			p.Cut()
		}
		in.SetTarget(fmt.Sprintf("session %x", session))
		in.SetUndo(func(context.Context) error {
			for _, p := range links {
				p.Heal()
			}
			return nil
		})
		return e.waitSessionGone(ctx, client, session)
	})
	if err != nil {
		return run.Outcome{}, err
	}
	e.EndedWaiting(client, session)
	return run.Outcome{Kind: run.LeaseEnded, Client: client, Mode: mode}, nil
}

// waitSessionGone waits until the leader's session tracker no longer lists
// session, client's, in two readings in a row (one reading can miss a
// session moving between expiry buckets), and records that it ended: by
// the sweep, for a session a followed grant rests on; here otherwise (a
// waiter's).
func (e *Env) waitSessionGone(ctx context.Context, client string, session int64) error {
	ctx, cancel := context.WithTimeout(ctx, faults.DefaultWait+e.TTLDuration())
	defer cancel()
	alive, missed := time.Now(), 0
	err := poll.Until(ctx, "the ensemble to expire "+client+"'s session", 20*time.Millisecond, func(ctx context.Context) (bool, error) {
		sent := time.Now()
		sessions, err := e.ens.Sessions(ctx)
		switch {
		case err != nil:
			return false, nil // no leader to say: asked again
		case sessions[session]:
			alive, missed = sent, 0
			return false, nil
		}
		missed++
		return missed >= 2, nil
	})
	if err != nil {
		return err
	}
	if _, ok := e.watched.Of(session); ok {
		e.sweep(ctx)
		return nil
	}
	e.Histories().LeaseLost(history.LeaseEnd{Client: client, Lease: session, LastAlive: alive, TTL: e.TTLDuration()})
	return nil
}

package run

import (
	"context"
	"slices"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/lock/process"
)

// Faulter is what contention under a fault needs of a run besides its
// cycles, whatever its store: etcd's run is one, so is ZooKeeper's.
type Faulter interface {
	Cycler
	// Fault applies f until its Injection's Undo; for a fault that cuts a
	// member off (faults.Kind.CutsOffMember) the Injection's Target names
	// the member.
	Fault(ctx context.Context, f faults.Fault) (*faults.Injection, error)
	// WaitLeader waits until the rest of the store follows a leader other
	// than member, and names it.
	WaitLeader(ctx context.Context, member string) (string, error)
	// CutOff lists the clients that reach the store only through member,
	// in creation order: those a fault of member cuts off. (A client given
	// every server, as ZooKeeper's are, moves to another.)
	CutOff(member string) []string
	// Leased reports whether the store has a lease (a session) of client's
	// now, as far as the run has seen.
	Leased(client string) bool
	// Histories are the run's histories.
	Histories() Histories
}

// ContendOnUnder runs n clients (on members in turn), each acquiring, doing
// its critical section and releasing in a loop, on any run. With a fault,
// it is applied once `before` sections have completed and held (see hold)
// until `during` more complete — or progress stalls, so a fault that stops
// every client cannot stop the run. After a member fault is undone, every
// client must do a section again (everyone rejoins; bounded by
// RegrantWithin), the cut-off member's own clients first, alone. The
// clients then go on until `after` more sections complete (or progress
// stalls: the progress check then says what was missing), so every run
// shows whether the lock recovered. Each client finishes the cycle it is
// in. Whether the effects happened is the scenario's Effects' to judge,
// from the history. A client's cycle is an acquire, a critical section
// without work and a release — the run's own, if it has one (Cycle, as
// etcd's run does: its clients pause after acquiring too).
func ContendOnUnder(ctx context.Context, r Faulter, n int, f faults.Fault, ph Phases) error {
	cycle := func(ctx context.Context, client string) bool { return cycleOn(ctx, r, client, 0, func() {}) }
	if c, ok := r.(interface {
		Cycle(ctx context.Context, client string) bool
	}); ok {
		cycle = c.Cycle
	}
	names, err := addClients(ctx, r, n)
	if err != nil {
		return err
	}
	sections := newTally()
	stop := loop(ctx, names, sections, func(name string) bool { return cycle(ctx, name) })
	defer stop()
	var ferr error
	if f.Kind != "" {
		waitLeased(ctx, r, names)
		sections.waitFor(ctx, ph.Before, stallWait(r))
		in, err := r.Fault(ctx, f)
		if err == nil {
			hold(ctx, r, f, in, sections, ph, names)
			err = in.Undo(ctx)
		}
		if err == nil && f.Kind.CutsOffMember() {
			// The cut-off member's clients ask first: an unfair lock (one
			// key raced for by every waiter, the rejoined member's answers
			// a hop slower) could starve them for the rest of the run, and
			// the lesson is that they rejoin, not who wins a race.
			cut := r.CutOff(in.Target())
			open := sections.first(cut)
			sections.waitEach(ctx, cut, RegrantWithin(r.TTL()))
			open()
			sections.waitEach(ctx, names, RegrantWithin(r.TTL()))
		}
		ferr = err
	}
	sections.waitFor(ctx, ph.After, RegrantWithin(r.TTL()))
	return ferr
}

// stallWait is how long a contention scenario waits for progress before it
// moves on to its next fault step anyway: 2 s for each second of the
// lease TTL.
func stallWait(r Cycler) time.Duration { return 2 * time.Second * time.Duration(max(r.TTL(), 1)) }

// waitLeased waits until every client has a lease the store knows of —
// for as long as a stall may last, and a process lock's start-up — before
// a contention's faults are scheduled: they are about the clients'
// leases, and a lock that takes its lease with its first acquire (a
// process that starts slowly, many starting at once; a lease per attempt)
// may have none yet when the first clients have done their sections. A
// lock whose clients hold their leases from the start (a session) does
// not wait.
func waitLeased(ctx context.Context, r Faulter, clients []string) {
	wctx, cancel := context.WithTimeout(ctx, stallWait(r)+process.StartupAllowance)
	defer cancel()
	_ = poll.Until(wctx, "every client to hold a lease", leasePoll, func(context.Context) (bool, error) {
		return !slices.ContainsFunc(clients, func(c string) bool { return !r.Leased(c) }), nil
	})
}

// hold keeps an applied fault in place: for a member fault, it records
// which member leads the rest of the store (the observed election) and,
// with UntilLeasesGone, waits until the store has ended the leases of the
// cut-off member's clients (bounded by faults.DefaultWait: if they never
// end, the scenario's effects say so), and then, if there is a `during`
// phase, until a client the fault did not cut off has completed a section
// (bounded the same way); names are the run's clients. Then it waits for
// `during` sections or a stall.
func hold(ctx context.Context, r Faulter, f faults.Fault, in *faults.Injection, sections *tally, ph Phases, names []string) {
	if f.Kind.CutsOffMember() {
		member := in.Target()
		cut := r.CutOff(member)
		wctx, cancel := context.WithTimeout(ctx, faults.DefaultWait)
		if leader, err := r.WaitLeader(wctx, member); err == nil {
			r.Histories().Observe(history.ObservedLeader, "", leader)
		}
		if ph.UntilLeasesGone {
			_ = poll.Until(wctx, "the leases of "+member+"'s clients to end", leasePoll, func(context.Context) (bool, error) {
				return !slices.ContainsFunc(cut, r.Leased), nil
			})
		}
		cancel()
		// The lesson is that the rest of the store carries on: hold the
		// fault until a client the fault did not cut off has done a
		// section, for as long as a lock may take to let go of a grant the
		// fault caught half-released (a request in flight when etcd's
		// leader died waits out its request timeout, about 5 s, before it
		// fails). A schedule with no `during` phase heals at once.
		if ph.During > 0 {
			others := slices.DeleteFunc(slices.Clone(names), func(c string) bool { return slices.Contains(cut, c) })
			sections.waitAny(ctx, others, faults.DefaultWait)
		}
	}
	sections.waitFor(ctx, ph.During, stallWait(r))
}

// leasePoll is how often a workload looks again at the clients' leases.
const leasePoll = 20 * time.Millisecond

// A MemberFaulter applies a fault of one of the store's members (see
// Faulter.Fault).
type MemberFaulter interface {
	Fault(ctx context.Context, f faults.Fault) (*faults.Injection, error)
}

// IsolateMember cuts member off from the other members through f until
// heal: a script's isolate step on any store whose members fail one at a
// time.
func IsolateMember(ctx context.Context, f MemberFaulter, member string) (Outcome, error) {
	if _, err := f.Fault(ctx, faults.Fault{Kind: faults.IsolateMember, Member: member}); err != nil {
		return Outcome{}, err
	}
	return Outcome{Kind: Isolated, Member: member}, nil
}

// KillMember kills member through f as a crash of its machine does, until
// heal starts it again on its data: a script's kill step on any such
// store.
func KillMember(ctx context.Context, f MemberFaulter, member string) (Outcome, error) {
	if _, err := f.Fault(ctx, faults.Fault{Kind: faults.KillMember, Member: member}); err != nil {
		return Outcome{}, err
	}
	return Outcome{Kind: Killed, Member: member}, nil
}

// KillLeader kills, through f, the member that leads when it is applied,
// until heal starts it again on its data: a script's `kill member=leader`
// on any store whose members elect a leader.
func KillLeader(ctx context.Context, f MemberFaulter) (Outcome, error) {
	if _, err := f.Fault(ctx, faults.Fault{Kind: faults.KillLeader}); err != nil {
		return Outcome{}, err
	}
	return Outcome{Kind: LeaderKilled}, nil
}

package etcdrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run"
)

// Acquire has client acquire the lock, recorded on every history.
func (e *Env) Acquire(ctx context.Context, client string) (run.Outcome, error) {
	w, crashes, err := e.ready(client)
	if err != nil {
		return run.Outcome{}, err
	}
	// A client that saw its session's lease end makes a new session before
	// it asks again, as a real one watching its session would: whether the
	// old Locker has noticed yet is timing, not the lock's behaviour. If it
	// cannot (see renew), that is its ask's answer. A client whose member
	// is cut off from the quorum cannot see it: only the rest of the
	// cluster ended the lease. It asks with the Locker it has, and whatever
	// that Locker's view of the cut-off member is (isolated-asks).
	if l := e.leaseOf(w); l != 0 && e.isLeaseLost(int64(l)) && !e.memberCutOff(w.cl.Member()) {
		if err := e.renew(w); err != nil {
			ids := e.runs.Invoke(client, history.Acquire, time.Time{})
			e.runs.Complete(ids, history.Definite(err), history.Event{})
			return run.FailedOutcome(run.Failed, client, err), err
		}
	}
	e.mu.Lock()
	w.acquiring, w.endedWaiting = true, 0
	e.mu.Unlock()
	actx, cancel := e.lockContext(ctx, w)
	deadline, _ := actx.Deadline()
	if _, ok := w.locker.(process.Program); ok {
		deadline = deadline.Add(process.StopAllowance) // the time it takes to stop the process
	}
	ids := e.runs.Invoke(client, history.Acquire, deadline)
	g, err := e.lockerAcquire(actx, w, deadline)
	cancel()
	e.mu.Lock()
	ended := w.endedWaiting
	w.acquiring, w.endedWaiting = false, 0
	e.mu.Unlock()
	e.learn(w)
	if e.crashedSince(w, crashes) {
		// Whatever the lock said, nobody was left to hear it: the grant
		// may stand on the server, or not.
		e.runs.Complete(ids, cluster.ErrCrashed, history.Event{})
		return run.FailedOutcome(run.Failed, client, cluster.ErrCrashed), cluster.ErrCrashed
	}
	var lease int64
	var key *grantKey
	if err == nil {
		if g.Lease == 0 {
			// The record names the grant's lease: read it first.
			key = e.readGrantKey(ctx, g)
		}
		lease = cmp.Or(g.Lease, key.leaseOrZero(), int64(saidLease(w.locker)))
		g.Lease = lease
	}
	e.runs.Complete(ids, run.Classify(err), history.Event{Token: g.Token, Lease: lease, Tells: err == nil && g.Lost != nil})
	e.followGrant(client, lease)
	var bad *history.BadToken
	if err == nil {
		if key == nil {
			// Read after the completion, so the grant is recorded when
			// the lock returned it.
			key = e.readGrantKey(ctx, g)
		}
		if bad = key.bad; bad != nil {
			bad.Client = client
			e.runs.BadToken(*bad)
		}
	}
	if err != nil {
		expired, rerr := e.afterError(ctx, w, err)
		if expired {
			err = errors.Join(lock.ErrSessionExpired, err)
		}
		return run.FailedOutcome(run.Failed, client, err), errors.Join(err, rerr)
	}
	label := e.token(g.Token)
	e.mu.Lock()
	w.grant, w.held, w.unwatchable = g, true, bad != nil
	if w.grants == nil {
		w.grants = map[string]lock.Grant{}
	}
	w.grants[label] = g
	e.mu.Unlock()
	e.followLost(client, w, g)
	// A lock that takes a lease per attempt may lose the one it waited on
	// (the lab ended it) and go on waiting on a fresh one: the grant
	// rests on that.
	renewed := ended != 0 && lease != 0 && lease != ended
	return run.Outcome{Kind: run.Granted, Client: client, Token: label, NewLease: renewed, Tokenless: g.Token == 0}, nil
}

// grantKey is what the server had at a grant's key at the grant's
// revision: the lease the key carried (zero: not read, or none), and how
// the grant breaks lock.Grant's contract, Token being Key's create revision
// (nil: it keeps it, or the read failed — a look-up that failed proves
// nothing).
type grantKey struct {
	lease int64
	bad   *history.BadToken
}

func (k *grantKey) leaseOrZero() int64 {
	if k == nil {
		return 0
	}
	return k.lease
}

// readGrantKey reads g's key as the server had it at g's revision; a grant
// with no key or token has nothing to read.
func (e *Env) readGrantKey(ctx context.Context, g lock.Grant) *grantKey {
	k := &grantKey{}
	if g.Key == "" || g.Token == 0 {
		return k
	}
	rctx, cancel := context.WithTimeout(ctx, e.opTimeout)
	resp, err := e.readAt(rctx, g.Key, g.Token)
	cancel()
	switch {
	case errors.Is(err, rpctypes.ErrFutureRev):
		k.bad = &history.BadToken{Token: g.Token, Key: g.Key, Ahead: true}
	case err != nil:
	case len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != g.Token:
		k.bad = &history.BadToken{Token: g.Token, Key: g.Key}
		if len(resp.Kvs) > 0 {
			k.bad.KeyRevision = resp.Kvs[0].CreateRevision
		}
	default:
		k.lease = resp.Kvs[0].Lease
	}
	return k
}

// readAt reads key as the cluster had it at revision rev. What a revision
// holds never changes once applied, so any member that has applied rev
// answers for the cluster on its own (serializable: no round of the quorum,
// so a member cut off from it answers at once instead of holding the read
// until ctx ends); one that has not applied it yet says rev is in the
// future, and the read is asked again, of the next member the client picks
// in turn. Only when none has it does a linearizable read decide: rev is
// then past the cluster's own revision, or not.
func (e *Env) readAt(ctx context.Context, key string, rev int64) (*clientv3.GetResponse, error) {
	for range 2 * max(len(e.c.Members()), 3) {
		resp, err := e.c.Admin().Get(ctx, key, clientv3.WithRev(rev), clientv3.WithSerializable())
		if !errors.Is(err, rpctypes.ErrFutureRev) {
			return resp, err
		}
	}
	return e.c.Admin().Get(ctx, key, clientv3.WithRev(rev))
}

// afterError handles an acquire or release that failed: if the server no
// longer has the Locker's lease — whatever error the lock gave — the Locker
// is done for and the client gets a new one, as a real client would make a
// new session (on a member cut off from the quorum, at its first ask after
// the fault). It reports whether the lease was gone.
func (e *Env) afterError(ctx context.Context, w *worker, err error) (bool, error) {
	lease := e.leaseOf(w)
	gone := errors.Is(err, lock.ErrSessionExpired)
	if lease != 0 && gone {
		e.noteSaidEnded(w.name, lease)
	}
	if !gone && lease != 0 {
		alive, aerr := e.c.LeaseAlive(context.WithoutCancel(ctx), lease)
		gone = aerr == nil && !alive
	}
	if !gone {
		return false, nil
	}
	if lease != 0 {
		e.checkLease(context.WithoutCancel(ctx), w.name, lease)
	}
	if e.memberCutOff(w.cl.Member()) {
		// No lease can be granted on a member cut off from the quorum: a
		// new Locker would wait there for the fault's end. The client asks
		// with the Locker it has, and the first ask after the fault
		// renews it (see Acquire).
		return true, nil
	}
	return true, e.renew(w)
}

// CS runs client's critical section on every resource at once: read each
// counter, pass the before-write pause point, write each counter+1 with the
// grant's token. Each resource's history records it as one operation.
func (e *Env) CS(ctx context.Context, client string) (run.Outcome, error) {
	return e.cs(ctx, client, 0)
}

// CSWork is CS with the client working for d between its reads and its
// writes: a holder that holds the lock that long.
func (e *Env) CSWork(ctx context.Context, client string, d time.Duration) (run.Outcome, error) {
	return e.cs(ctx, client, d)
}

// cs is a critical section in which the client works for d between its
// read and its write: a slow holder, whose work the scenario draws from its
// seed (see CriticalSection).
func (e *Env) cs(ctx context.Context, client string, d time.Duration) (run.Outcome, error) {
	w, _, err := e.ready(client)
	if err != nil {
		return run.Outcome{}, err
	}
	e.mu.Lock()
	held := w.held
	e.mu.Unlock()
	if !held {
		// A client that was not granted the lock does not enter the
		// section: what it would write is the lab's doing, not the lock's,
		// and would be judged as the lock letting two clients in.
		return run.Outcome{Kind: run.Failed, Client: client, Failure: run.FailNoGrant},
			fmt.Errorf("%s: critical section without a grant: %w", client, lock.ErrNotHeld)
	}
	return run.CriticalSection(ctx, e.runs, run.InSection{Client: client, Grant: w.grant, Conn: w.cl.Etcd(), Work: d, OpTimeout: e.opTimeout,
		PausePoint: func(ctx context.Context) error { return w.cl.PausePoint(ctx, resource.BeforeWrite) }})
}

// Release has client release its grant, recorded on every history.
func (e *Env) Release(ctx context.Context, client string) (run.Outcome, error) {
	return e.ReleaseGrant(ctx, client, "")
}

// errPaused marks a step that never ran because its context ended while
// the client was paused before it.
var errPaused = errors.New("stopped while paused")

// ReleaseGrant has client release the grant labelled label (t1), or its
// latest grant if label is "": a client retrying the release of an older
// grant, as after an ambiguous failure.
func (e *Env) ReleaseGrant(ctx context.Context, client, label string) (run.Outcome, error) {
	w, crashes, err := e.ready(client)
	if err != nil {
		return run.Outcome{}, err
	}
	// A pause armed at before-release stops the client here, before the
	// release is sent (the stale-release scenario's frozen holder).
	if err := w.cl.PausePoint(ctx, resource.BeforeRelease); err != nil {
		return run.Outcome{}, fmt.Errorf("%w: %w", errPaused, err)
	}
	g := w.grant
	if label != "" {
		e.mu.Lock()
		old, ok := w.grants[label]
		e.mu.Unlock()
		if !ok {
			return run.Outcome{}, fmt.Errorf("%s was never granted %s", client, label)
		}
		g = old
	}
	// Whether the grant's lease was alive as the release began: a lock may
	// revoke its lease as part of releasing, and a lease that ends then is
	// the release's doing, not a grant found ended.
	asked := time.Since(e.start)
	if g.Lease != 0 && !e.isLost(g) {
		e.checkLease(ctx, client, clientv3.LeaseID(g.Lease)) //nolint:errcheck // unknown: judged as before
	}
	e.mu.Lock()
	w.releasing = true
	e.mu.Unlock()
	ids := e.runs.Invoke(client, history.Release, time.Time{})
	rctx, cancel := e.lockContext(ctx, w)
	err = w.locker.Release(rctx, g)
	cancel()
	if e.crashedSince(w, crashes) {
		err = cluster.ErrCrashed // nobody was left to hear the answer
	}
	// Holding ends when the release returns, whatever it answered, and in
	// the same step as releasing: no moment shows the grant held and not
	// being released once its key may be gone by the client's own hand.
	e.mu.Lock()
	w.releasing = false
	latest := g.Token == w.grant.Token
	if latest {
		w.held = false
	}
	e.mu.Unlock()
	e.runs.Complete(ids, run.Classify(err), history.Event{Token: g.Token})
	e.checkHolders(ctx, client, g)
	// A grant whose lease the server already ended is not the client's to
	// release: a careful lock says "not held", etcd's Mutex deletes its key
	// name blindly and says nothing. Either is safe here (whether a late
	// release can free another holder's lock is the stale-release
	// scenario's question), so the step's output does not tell them apart;
	// the history does.
	if (err == nil || errors.Is(err, lock.ErrNotHeld)) && e.isLost(g) && !e.aliveSince(clientv3.LeaseID(g.Lease), asked) {
		return run.Outcome{Kind: run.ReleasedEnded, Client: client}, nil
	}
	if err != nil {
		if latest && g.Lease != 0 && errors.Is(err, lock.ErrNotHeld) && !errors.Is(err, lock.ErrSessionExpired) {
			// "Not held" of the grant it holds: the lock says its session
			// ended. (Of an older grant, a retried release, it says nothing
			// of the session.)
			e.noteSaidEnded(client, clientv3.LeaseID(g.Lease))
		}
		expired, rerr := e.afterError(ctx, w, err)
		if expired && !errors.Is(err, lock.ErrNotHeld) {
			err = errors.Join(lock.ErrSessionExpired, err)
		}
		return run.FailedOutcome(run.ReleaseFailed, client, err), errors.Join(err, rerr)
	}
	return run.Outcome{Kind: run.Released, Client: client}, nil
}

// checkHolders looks, after client's release of released, at the grant of
// every client that holds the lock and is not releasing — client's own
// newer grant too, when what it released was an older one (a retried
// release): if its key is gone (or replaced) from the server while its
// lease is still alive — so no lease end removed it — and the holder still
// has not begun to release it, a release not of that grant freed it, and
// that is recorded (the validity check fails it) whatever the release
// answered. Only grants that name their key can be looked at.
func (e *Env) checkHolders(ctx context.Context, client string, released lock.Grant) {
	type held struct {
		w *worker
		g lock.Grant
	}
	var hs []held
	e.mu.Lock()
	for _, name := range e.order {
		w := e.clients[name]
		if (name != client || w.grant.Token != released.Token) && w.held && !w.releasing && !w.unwatchable && w.grant.Key != "" && w.grant.Token != 0 &&
			w.grant.Lease != 0 && !e.lost[int64(w.grant.Lease)] {
			hs = append(hs, held{w, w.grant})
		}
	}
	e.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	for _, h := range hs {
		rctx, cancel := context.WithTimeout(ctx, e.opTimeout)
		stands, err := e.grantStands(rctx, h.g)
		cancel()
		if err != nil || stands {
			continue
		}
		if alive, err := e.c.LeaseAlive(ctx, clientv3.LeaseID(h.g.Lease)); err != nil || !alive {
			continue
		}
		e.mu.Lock()
		still := h.w.held && !h.w.releasing && h.w.grant.Token == h.g.Token
		e.mu.Unlock()
		if still {
			e.runs.GrantGone(h.w.name, h.g.Token)
		}
	}
}

// grantStands reports whether g's key is still on the server as g created
// it (same create revision): no release or lease end has removed it.
func (e *Env) grantStands(ctx context.Context, g lock.Grant) (bool, error) {
	resp, err := e.c.Admin().Get(ctx, g.Key)
	if err != nil {
		return false, err
	}
	return len(resp.Kvs) > 0 && resp.Kvs[0].CreateRevision == g.Token, nil
}

// isLost reports whether the server is known to have ended the lease g
// rests on.
func (e *Env) isLost(g lock.Grant) bool {
	return g.Lease != 0 && e.isLeaseLost(g.Lease)
}

// lockContext bounds one call of w's lock: the operation's timeout, and
// for a process lock whose process is starting (not yet up: just started,
// or started again after a crash) its start-up allowance besides, until it
// says it is up (process.WithStartup).
func (e *Env) lockContext(ctx context.Context, w *worker) (context.Context, context.CancelFunc) {
	if p, ok := w.locker.(process.Program); ok && p.Starting() {
		return process.WithStartup(ctx, e.opTimeout)
	}
	return context.WithTimeout(ctx, e.opTimeout)
}

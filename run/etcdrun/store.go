package etcdrun

import (
	"context"
	"errors"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run/engine"
)

// store is the Env as the engine's Store: etcd's side of a run.
type store struct{ e *Env }

var (
	_ engine.SessionStore  = store{}
	_ engine.GrantChecker  = store{}
	_ engine.ConnStore     = store{}
	_ engine.AnswerCounter = store{}
	_ engine.WaiterShower  = store{}
	_ engine.Crasher       = store{}
	_ engine.WireReader    = store{}
	_ engine.ClientCloser  = store{}
)

// Links connects a new lab client to member (cluster.Client): its one
// link is the client's proxy.
func (s store) Links(client, member string) ([]*netproxy.Proxy, error) {
	cl, err := s.e.c.NewClient(s.e.clientName(client), member)
	if err != nil {
		return nil, err
	}
	s.e.mu.Lock()
	s.e.conns[client] = &conn{cl: cl}
	s.e.mu.Unlock()
	return []*netproxy.Proxy{cl.Link()}, nil
}

// Locker makes the client's lock on its etcd connection (makeLocker).
func (s store) Locker(client string, _ []*netproxy.Proxy) (lock.Locker, func() error, error) {
	l, err := s.e.makeLocker(client)
	return l, nil, err
}

// Follow has the sweep follow the lease g rests on: the lock's word, else
// the lease its key carries, else the lease the lock says it keeps.
func (s store) Follow(client string, g lock.Grant) (int64, func(time.Time)) {
	e := s.e
	e.learn(client)
	lease := g.Lease
	if lease == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), e.OpTimeout())
		lease = e.readGrantKey(ctx, g).leaseOrZero()
		cancel()
	}
	if lease == 0 {
		if cn := e.conn(client); cn != nil {
			lease = int64(saidLease(cn.locker))
		}
	}
	e.followGrant(client, lease)
	return lease, nil
}

// Granted checks g against its key as the server had it at g's revision:
// a token that is not the key's create revision is recorded
// (history.BadToken), and the grant cannot be watched by its key.
func (s store) Granted(ctx context.Context, client string, g lock.Grant) {
	e := s.e
	k := e.readGrantKey(ctx, g)
	if k.leaseless { // a key no lease ends: a holder that dies keeps the lock for ever
		e.Histories().Leaseless(client, g.Token)
	}
	bad := k.bad
	if bad != nil {
		bad.Client = client
		e.runs.BadToken(*bad)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if cn := e.conns[client]; cn != nil {
		cn.unwatchable = bad != nil
	}
}

// Released reports whether the server had ended lease before its
// release was asked: a lock may revoke its lease as part of releasing, and
// a lease that ends then is the release's doing, not a grant found ended.
func (s store) Released(lease int64) bool {
	e := s.e
	e.mu.Lock()
	asked := e.asked[lease]
	delete(e.asked, lease)
	e.mu.Unlock()
	return lease != 0 && e.isLeaseLost(lease) && !e.aliveSince(clientv3.LeaseID(lease), asked)
}

// Releasing notes when a release of a grant on lease was asked, and looks
// at the lease first, and at the grant's key: one another client wrote
// over while the holder held it is a grant gone before its release began
// (the validity check fails it).
func (s store) Releasing(ctx context.Context, client string, g lock.Grant, lease int64) {
	e := s.e
	e.mu.Lock()
	e.asked[lease] = time.Since(e.start)
	e.mu.Unlock()
	if lease == 0 || e.isLeaseLost(lease) {
		return
	}
	e.checkLease(ctx, client, clientv3.LeaseID(lease)) //nolint:errcheck // unknown: judged as before
	if held, ok, _ := e.Holding(client); ok && held.Token == g.Token {
		e.noteWrittenOver(ctx, client, g, lease)
	}
}

// noteWrittenOver records client's grant g, on lease, gone if another
// client wrote over its key while the lease is still alive (writtenOver).
func (e *Env) noteWrittenOver(ctx context.Context, client string, g lock.Grant, lease int64) {
	if g.Lease == 0 {
		g.Lease = lease
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.OpTimeout())
	defer cancel()
	if over, err := e.writtenOver(rctx, client, g); err != nil || !over {
		return
	}
	if alive, err := e.c.LeaseAlive(rctx, clientv3.LeaseID(g.Lease)); err == nil && alive {
		e.runs.GrantGone(client, g.Token)
	}
}

// Settle looks at every holder's grant after a release (checkHolders).
func (s store) Settle(ctx context.Context) { s.e.checkHolders(ctx) }

// Gone asks the server about lease.
func (s store) Gone(ctx context.Context, lease int64) (bool, error) {
	e := s.e
	e.mu.Lock()
	client := e.leases[lease]
	e.mu.Unlock()
	return e.checkLease(ctx, client, clientv3.LeaseID(lease))
}

// Left names the keys on a lease under the run's prefix.
func (s store) Left(ctx context.Context) ([]string, error) { return s.e.keysLeft(ctx) }

// Prepare says a client whose session's lease the server ended makes a new
// session before it asks again. A client whose member is cut off from the
// quorum cannot see it: only the rest of the cluster ended the lease. It
// asks with the Locker it has, and whatever that Locker's view of the
// cut-off member is (isolated-asks).
func (s store) Prepare(_ context.Context, client string) bool {
	e := s.e
	l := e.leaseOf(client)
	return l != 0 && e.isLeaseLost(int64(l)) && !e.memberCutOff(e.memberOf(client))
}

// Failed handles an acquire or release that failed: if the server no
// longer has the Locker's lease — whatever error the lock gave — the Locker
// is done for and the client gets a new one, as a real client would make a
// new session (on a member cut off from the quorum, at its first ask after
// the fault: see Prepare). A lock that says its session ended, or that the
// grant it holds is not held, has that recorded (noteSaidEnded).
func (s store) Failed(ctx context.Context, client string, f engine.Failure) (expired, renew bool) {
	e := s.e
	if f.Release && f.Latest && f.Lease != 0 && errors.Is(f.Err, lock.ErrNotHeld) && !errors.Is(f.Err, lock.ErrSessionExpired) {
		// "Not held" of the grant it holds: the lock says its session
		// ended. (Of an older grant, a retried release, it says nothing
		// of the session.) Or another client wrote over its key, which
		// the release found: the grant was gone before it.
		e.noteSaidEnded(client, clientv3.LeaseID(f.Lease))
		e.noteWrittenOver(ctx, client, f.Grant, f.Lease)
	}
	lease := e.leaseOf(client)
	gone := errors.Is(f.Err, lock.ErrSessionExpired)
	if lease != 0 && gone {
		e.noteSaidEnded(client, lease)
	}
	if !gone && lease != 0 {
		alive, err := e.c.LeaseAlive(ctx, lease)
		gone = err == nil && !alive
	}
	if !gone {
		return false, false
	}
	if lease != 0 {
		e.checkLease(ctx, client, lease) //nolint:errcheck // the sweep asks again
	}
	// No lease can be granted on a member cut off from the quorum: a new
	// Locker would wait there for the fault's end.
	return true, !e.memberCutOff(e.memberOf(client))
}

// Conn is the client's etcd connection, for the etcd-guarded resource.
func (s store) Conn(client string) resource.Conn {
	if cn := s.e.conn(client); cn != nil {
		return cn.cl.Etcd()
	}
	return nil
}

// Answered counts the server's answers to the client's requests (a
// unary request's; keep-alive answers are not counted).
func (s store) Answered(client string) int64 {
	if cn := s.e.conn(client); cn != nil {
		return cn.cl.Answered()
	}
	return 0
}

// Shows reports whether a key of one of client's leases is under the
// run's prefix: it is queued, or holds.
func (s store) Shows(ctx context.Context, client string) (bool, error) {
	return s.e.hasKey(ctx, client)
}

// Crashed has the client's etcd connection die with its process, and a
// new one made for what starts again.
func (s store) Crashed(client string) error {
	if cn := s.e.conn(client); cn != nil {
		return cn.cl.Redial()
	}
	return nil
}

// Wire reads a client's connection off the wire once the client learns
// there (a lock run as a process: see makeLocker).
func (s store) Wire(client string) (requests, answers func([]byte)) {
	cn := s.e.conn(client)
	if cn == nil || !cn.cl.IsWired() {
		return nil, nil
	}
	return cn.cl.WireReaders()
}

// CloseClient closes the client's etcd connection and its proxy, as the
// run finishes: an Acquire the lab abandoned on it ends with it.
func (s store) CloseClient(client string) error { return s.e.closeClient(client) }

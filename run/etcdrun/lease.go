package etcdrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/run"
)

// learn takes in every lease the server has granted through client's
// link since the last look — a lock may take a new lease per acquire — so
// the sweep follows each until the server ends it. A fresh grant is a
// server's answer that the lease was alive then.
func (e *Env) learn(client string) {
	cn := e.conn(client)
	if cn == nil {
		return
	}
	// The grants are read under e.mu: two learners at once (the sweep and
	// a fault) must not see them out of order, or the later would set
	// learned past the earlier's copy.
	e.mu.Lock()
	defer e.mu.Unlock()
	grants := cn.cl.LeaseGrants()
	for _, g := range grants[min(e.learned[client], len(grants)):] {
		id := int64(g.ID)
		if !e.lost[id] {
			e.leases[id] = client
			e.alive[id] = max(e.alive[id], int64(g.At.Sub(e.start)))
			if g.TTL > 0 {
				// The grant's answer is the one sure word on the TTL: a
				// lease revoked before the sweep first saw it would
				// otherwise be recorded with none.
				e.ttls[id] = g.TTL
			}
		}
	}
	e.learned[client] = len(grants)
	if len(grants) > 0 {
		// A lock may take its lease only when first asked to acquire (a
		// lazy session, a process that says its lease only with a grant)
		// and a new one per acquire: the client's lease is the latest the
		// server granted through its link.
		cn.cl.SetLease(grants[len(grants)-1].ID)
	}
}

// saidLease is the lease l says keeps it alive (see etcdlock.Leaser), or zero.
func saidLease(l lock.Locker) clientv3.LeaseID {
	if x, ok := l.(etcdlock.Leaser); ok {
		return x.Lease()
	}
	return 0
}

// leaseOf is the lease client's lock rests on now, as far as the lab
// knows: the Go lock's own word, else the latest lease granted through the
// client's link (a process lock's, or a lock whose session is not made yet
// when asked, only in Acquire).
func (e *Env) leaseOf(client string) clientv3.LeaseID {
	e.learn(client)
	cn := e.conn(client)
	if cn == nil {
		return 0
	}
	e.mu.Lock()
	l := cn.locker
	e.mu.Unlock()
	if _, ok := l.(process.Program); !ok {
		if lease := saidLease(l); lease != 0 {
			return lease
		}
	}
	return cn.cl.Lease()
}

// knownLease is client's lease, for a step that acts on it or waits for
// its end; an error if its lock has taken none (a lock that never
// answered, say): lease 0 is one the server never has, and would read as
// "gone".
func (e *Env) knownLease(client string) (clientv3.LeaseID, error) {
	if e.conn(client) == nil {
		return 0, e.unknown(client)
	}
	if lease := e.leaseOf(client); lease != 0 {
		return lease, nil
	}
	return 0, fmt.Errorf("%s has no lease the lab knows of: its lock has not taken one", client)
}

// WaitLeaseGone waits until the server no longer has client's lease and
// records it on every history.
func (e *Env) WaitLeaseGone(ctx context.Context, client string) (run.Outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, faults.DefaultWait)
	defer cancel()
	lease, err := e.knownLease(client)
	if err != nil {
		return run.Outcome{}, err
	}
	err = poll.Until(ctx, "the server to drop "+client+"'s lease", leasePoll, func(ctx context.Context) (bool, error) {
		return e.checkLease(ctx, client, lease)
	})
	if err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.LeaseGone, Client: client}, nil
}

// checkLease asks the server about one lease; the first time it is gone, a
// lease-lost event is recorded with the last time it was seen alive.
func (e *Env) checkLease(ctx context.Context, client string, lease clientv3.LeaseID) (bool, error) {
	e.mu.Lock()
	revoking := e.revoking[int64(lease)]
	e.mu.Unlock()
	if revoking {
		return false, nil // Expire records it
	}
	sent := time.Since(e.start)
	ttl, alive, err := e.c.LeaseTTL(ctx, lease)
	if err != nil {
		return false, err
	}
	if alive {
		e.mu.Lock()
		e.alive[int64(lease)] = max(e.alive[int64(lease)], int64(sent))
		if _, known := e.ttls[int64(lease)]; !known && ttl > 0 {
			e.ttls[int64(lease)] = ttl
		}
		e.mu.Unlock()
		return false, nil
	}
	e.mu.Lock()
	revoking = e.revoking[int64(lease)]
	e.mu.Unlock()
	if revoking {
		// A revoke began while the question was out, and the answer may
		// have come after it: Expire records the loss with the revoke's
		// time, later than this poll's last sighting.
		return false, nil
	}
	e.markLost(client, lease, time.Time{})
	return true, nil
}

// revokeAnswerWait bounds how long the record of a lost lease waits for the
// answer to its client's own revoke of it.
const revokeAnswerWait = 2 * time.Second

// markLost records, once, that the server ended lease: now it is known
// gone; it was last known alive at aliveAt, or (zero) at the sweep's last
// sighting. The record says too when the client last sent the lease a
// keep-alive before that, and the TTL the server granted it.
func (e *Env) markLost(client string, lease clientv3.LeaseID, aliveAt time.Time) {
	// A revoke of the lease by its own client that the server answered
	// ends it by the client's choice: one still crossing the link is
	// waited for (a bound: under load an answer may come later, and the
	// loss is then recorded without it).
	var revoked time.Time
	if cn := e.conn(client); cn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), revokeAnswerWait)
		revoked, _ = cn.cl.Revoked(ctx, lease)
		cancel()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lost[int64(lease)] {
		return
	}
	e.lost[int64(lease)] = true
	delete(e.leases, int64(lease))
	end := e.leaseEnd(client, lease, e.start.Add(time.Duration(e.alive[int64(lease)])))
	if aliveAt.After(end.LastAlive) {
		end.LastAlive = aliveAt
		end.LastRenewal, _ = e.lastRenewal(client, lease, aliveAt)
	}
	end.Revoked = revoked
	e.runs.LeaseLost(end)
}

// leaseEnd is what the lab knows of client's lease, last known alive at
// lastAlive: its TTL, the keep-alives sent for it (the grant first: it
// starts the TTL as a keep-alive does), the latest at or before lastAlive,
// and their answers. The caller holds e.mu.
func (e *Env) leaseEnd(client string, lease clientv3.LeaseID, lastAlive time.Time) history.LeaseEnd {
	end := history.LeaseEnd{Client: client, Lease: int64(lease), TTL: e.ttls[int64(lease)], LastAlive: lastAlive}
	if cn, ok := e.conns[client]; ok {
		end.LastRenewal, _ = cn.cl.LastRenewal(lease, lastAlive)
		end.Renewals = append(granted(cn.cl, lease), cn.cl.Renewals(lease)...)
		end.KeptAlive = cn.cl.KeptAlive(lease)
	}
	return end
}

// lastRenewal is the latest keep-alive client sent lease at or before t.
// The caller holds e.mu.
func (e *Env) lastRenewal(client string, lease clientv3.LeaseID, t time.Time) (time.Time, bool) {
	if cn, ok := e.conns[client]; ok {
		return cn.cl.LastRenewal(lease, t)
	}
	return time.Time{}, false
}

// noteSaidEnded records that client's lock has just answered that its
// session, on lease, ended (see history.ObservedSaidEnded): whether its
// client heard its keep-alives answered is what tells a busy machine from
// a lock that gave up a lease it had.
func (e *Env) noteSaidEnded(client string, lease clientv3.LeaseID) {
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	end := e.leaseEnd(client, lease, e.start.Add(time.Duration(e.alive[int64(lease)])))
	end.LastRenewal, _ = e.lastRenewal(client, lease, now)
	if cn, ok := e.conns[client]; ok {
		// The grant's answer is the server's first word that the lease
		// lives, a TTL from then, as a keep-alive's answer is.
		end.KeptAlive = append(granted(cn.cl, lease), end.KeptAlive...)
	}
	e.runs.SaidEnded(end)
}

// granted is when cl's link was answered the grant of lease (none if it
// was not seen).
func granted(cl *cluster.Client, lease clientv3.LeaseID) []time.Time {
	var out []time.Time
	for _, g := range cl.LeaseGrants() {
		if g.ID == lease {
			out = append(out, g.At)
		}
	}
	return out
}

// Expire ends client's lease on the server: by revoking it (the revoke's
// answer is the server's word that the lease was alive when it was sent and
// is gone now, so the loss is on the timeline exactly, however young the
// lease), or by cutting the client until the server lets it lapse.
func (e *Env) Expire(ctx context.Context, client, mode string) (run.Outcome, error) {
	lease, err := e.knownLease(client) // learned now: a waiter's lease may be younger than its Locker
	if err != nil {
		return run.Outcome{}, err
	}
	e.conn(client).cl.SetLease(lease) // the lease the fault ends
	sent := time.Now()
	if mode == faults.ModeRevoke {
		// The revoke's answer is the exact record of this loss: the
		// sweep must not record it first, from an older sighting.
		e.mu.Lock()
		e.revoking[int64(lease)] = true
		e.mu.Unlock()
		defer func() {
			e.mu.Lock()
			delete(e.revoking, int64(lease))
			e.mu.Unlock()
		}()
	}
	in, err := e.Fault(ctx, faults.Fault{Kind: faults.ExpireLease, Client: client, Mode: mode})
	if err != nil {
		return run.Outcome{}, err
	}
	if mode == faults.ModeRevoke {
		if in.AlreadyGone() {
			sent = time.Time{} // it ended before the revoke: the sweep's last sighting is all we know
		}
		e.markLost(client, lease, sent)
	} else if _, err := e.checkLease(ctx, client, lease); err != nil {
		return run.Outcome{}, err
	}
	e.EndedWaiting(client, int64(lease))
	return run.Outcome{Kind: run.LeaseEnded, Client: client, Mode: mode}, nil
}

// sweepLeases asks the server once about every lease not yet seen gone,
// and returns the first error of each question that had no answer (a busy
// server's timeout, an election under way), by lease.
func (e *Env) sweepLeases(ctx context.Context) map[clientv3.LeaseID]error {
	type pair struct {
		client string
		lease  clientv3.LeaseID
	}
	for _, name := range e.connected() {
		e.learn(name)
	}
	e.mu.Lock()
	var leases []pair
	for l, client := range e.leases {
		leases = append(leases, pair{client, clientv3.LeaseID(l)})
	}
	e.mu.Unlock()
	slices.SortFunc(leases, func(a, b pair) int { return int(a.lease - b.lease) })
	var unasked map[clientv3.LeaseID]error
	for _, p := range leases {
		if _, err := e.checkLease(ctx, p.client, p.lease); err != nil {
			if unasked == nil {
				unasked = map[clientv3.LeaseID]error{}
			}
			unasked[p.lease] = err
		}
	}
	return unasked
}

// settleWait bounds the last look at the leases when a run closes.
const settleWait = 20 * time.Second

// settleLeases asks the server about every lease not yet seen gone until
// each question has had an answer, or ctx ends: a lease that lapsed before
// the run ended must be on the timeline, or its holder's validity would
// seem to run on and the next holder's grant read as the lock's fault. It
// says which leases were left unasked, and why.
func (e *Env) settleLeases(ctx context.Context) error {
	for {
		unasked := e.sweepLeases(ctx)
		if len(unasked) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			var errs []error
			for _, l := range slices.Sorted(maps.Keys(unasked)) { // the same words for the same leases
				errs = append(errs, fmt.Errorf("lease %x: %w", l, unasked[l]))
			}
			return fmt.Errorf("the lab could not learn from the server whether it had ended every lease of the run: %w",
				errors.Join(errs...))
		case <-time.After(leasePoll):
		}
	}
}

// followGrant has the sweep follow the lease client's grant rests on:
// one the lab did not see granted (the grant's answer lost on its way to
// the client, say) is a grant's all the same.
func (e *Env) followGrant(client string, lease int64) {
	if lease == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, known := e.leases[lease]; !known && !e.lost[lease] {
		e.leases[lease] = client
	}
}

// aliveSince reports whether lease was seen alive at or after at (run
// clock).
func (e *Env) aliveSince(lease clientv3.LeaseID, at time.Duration) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.alive[int64(lease)] >= int64(at)
}

// isLeaseLost reports whether the server is known to have ended lease.
func (e *Env) isLeaseLost(lease int64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lost[lease]
}

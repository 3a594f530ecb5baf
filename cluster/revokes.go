package cluster

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// revokes follows a client's revokes of its own leases: those asked and
// not yet answered, and when the server answered that it revoked each
// lease.
type revokes struct {
	mu      sync.Mutex
	pending map[clientv3.LeaseID]int           // revokes asked, not yet answered
	settled map[clientv3.LeaseID]chan struct{} // closed once none of the lease's is pending
	done    map[clientv3.LeaseID]time.Time     // the first answer that revoked it
}

// asked notes a revoke of lease id the client sent.
func (r *revokes) asked(id int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = map[clientv3.LeaseID]int{}
	}
	r.pending[clientv3.LeaseID(id)]++
}

// answered notes the answer to a revoke of lease id: ok if the server
// revoked the lease.
func (r *revokes) answered(id int64, ok bool) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	lease := clientv3.LeaseID(id)
	if ok {
		if r.done == nil {
			r.done = map[clientv3.LeaseID]time.Time{}
		}
		if _, seen := r.done[lease]; !seen {
			r.done[lease] = now
		}
	}
	if r.pending[lease] > 0 {
		r.pending[lease]--
	}
	if r.pending[lease] == 0 {
		delete(r.pending, lease)
		if c, ok := r.settled[lease]; ok {
			close(c)
			delete(r.settled, lease)
		}
	}
}

// Revoked is when the server answered the client's revoke of lease id
// (false: no revoke of it succeeded, that the lab saw): the lease lived
// until its own client ended it — a lock that releases by revoking, or
// gives up a lease it took for one attempt — and did not lapse. A revoke
// still unanswered when it is asked is waited for, until ctx ends: the
// server may have ended the lease a moment before its answer crosses the
// link.
func (cl *Client) Revoked(ctx context.Context, id clientv3.LeaseID) (time.Time, bool) {
	r := &cl.revokes
	for {
		r.mu.Lock()
		if r.pending[id] == 0 {
			at, ok := r.done[id]
			r.mu.Unlock()
			return at, ok
		}
		if r.settled == nil {
			r.settled = map[clientv3.LeaseID]chan struct{}{}
		}
		c, ok := r.settled[id]
		if !ok {
			c = make(chan struct{})
			r.settled[id] = c
		}
		r.mu.Unlock()
		select {
		case <-c:
		case <-ctx.Done():
			r.mu.Lock()
			at, ok := r.done[id]
			r.mu.Unlock()
			return at, ok
		}
	}
}

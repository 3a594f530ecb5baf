package etcdlock

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/lock"
)

// getDel is ttl-poll released in two requests: a Get of the lock's key,
// a comparison in the client, then a Delete of the key by name.
type getDel struct{ *ttlPoll }

// NewGetDel returns the etcd-get-del known-bad lock: ttl-poll (one key, put
// if absent under the session's lease) whose Release reads the key, checks
// in the client that it is still its own grant, and deletes it by name in
// a second request. Between the two the key may expire and be put by the
// next holder: the Delete deletes that holder's key.
func NewGetDel(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	l, err := NewTTLPoll(client, name, opts)
	if err != nil {
		return nil, err
	}
	return getDel{l.(*ttlPoll)}, nil
}

func (l getDel) Release(ctx context.Context, g lock.Grant) error {
	resp, err := l.s.Client().Get(ctx, g.Key)
	if err != nil {
		return err
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != g.Token {
		return lock.ErrNotHeld
	}
	_, err = l.s.Client().Delete(ctx, g.Key) // the bug: the check above is no longer true here
	return err
}

package zklock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/lock"
)

// nodes is what the lab's own recipes (zk-herd, zk-unprotected) share:
// their connection, the lock's path, waiting on a watch, reading a grant
// (with the Lost it tells its holder by: tells) and releasing it.
type nodes struct {
	c    *zk.Conn
	path string
	// timeout is the session's (the options' TTL); deaf: Lost waits for
	// ZooKeeper's word of the expiry (zk-deaf, known-bad).
	timeout time.Duration
	deaf    bool
	tells   *tells
	// closed closes with the Locker: a delete asked again on a broken
	// connection stops then (the connection is its maker's to close).
	closed *closer
}

// closer is a channel closed once.
type closer struct {
	once sync.Once
	ch   chan struct{}
}

func (c *closer) close() { c.once.Do(func() { close(c.ch) }) }

func newNodes(c *zk.Conn, name string, opts lock.Options) (nodes, error) {
	if opts.TTL < 0 {
		return nodes{}, fmt.Errorf("%w, got %d", lock.ErrBadTTL, opts.TTL)
	}
	if opts.Prefix == "" {
		opts.Prefix = lock.DefaultPrefix
	}
	ttl := opts.TTL
	if ttl == 0 {
		ttl = lock.DefaultTTL
	}
	return nodes{c: c, path: Path(name, opts), timeout: time.Duration(ttl) * time.Second, tells: &tells{},
		closed: &closer{ch: make(chan struct{})}}, nil
}

// wait waits for the watch ch to fire, or for ctx to end (its error; the
// acquire then drops its node). A watch the session's end took is that
// error (see expired).
func (n nodes) wait(ctx context.Context, ch <-chan zk.Event) error {
	select {
	case ev := <-ch:
		return expired(ev.Err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// grant is the grant of node, now the lowest: its zxid and its session —
// unless ctx ended meanwhile (a call of ZooKeeper's takes no context):
// then the caller has moved on, and its error has the acquire drop node.
func (n nodes) grant(ctx context.Context, node string) (lock.Grant, error) {
	if err := ctx.Err(); err != nil {
		return lock.Grant{}, err
	}
	ok, st, err := n.c.Exists(node)
	switch {
	case err != nil:
		return lock.Grant{}, err
	case !ok:
		return lock.Grant{}, fmt.Errorf("zklock: granted, but %s is gone", node)
	}
	lost := n.tells.follow(n.c, st.EphemeralOwner, st.Czxid, n.timeout, n.deaf)
	return lock.Grant{Key: node, Token: st.Czxid, Lease: st.EphemeralOwner, Lost: lost}, nil
}

// Release deletes g's node; one already gone is lock.ErrNotHeld (see
// remove).
func (n nodes) Release(ctx context.Context, g lock.Grant) error {
	if g.Key == "" {
		return lock.ErrNotHeld
	}
	n.tells.stop(g.Token)
	return n.remove(ctx, g.Key)
}

// drop gives back node, the client's own, after an acquire that made it
// failed: no node of a client's may stay behind it (lock.Locker), and one
// whose connection broke is asked again for dropWait at most.
func (n nodes) drop(node string) {
	ctx, cancel := context.WithTimeout(context.Background(), dropWait)
	defer cancel()
	n.remove(ctx, node) //nolint:errcheck // gone, or its session takes it
}

// dropWait bounds how long a failed acquire asks again to drop its node.
const dropWait = 10 * time.Second

// remove deletes node; one already gone is lock.ErrNotHeld. A delete
// whose connection broke is asked again, until ctx ends: a server that
// dies or loses the quorum closes its clients' connections, and a delete
// that never reached the ensemble would leave the node under a session
// that lives on, holding the lock for nobody (kazoo's release retries
// alike; Curator's delete is "guaranteed").
func (n nodes) remove(ctx context.Context, node string) error {
	for again := false; ; again = true {
		err := n.c.Delete(node, -1)
		switch {
		case errors.Is(err, zk.ErrNoNode) && again:
			return nil // the delete whose answer the broken connection took
		case errors.Is(err, zk.ErrNoNode):
			return fmt.Errorf("%w: %s is gone", lock.ErrNotHeld, node)
		case errors.Is(err, zk.ErrSessionExpired):
			return fmt.Errorf("%w: %s went with its session", lock.ErrNotHeld, node)
		case !errors.Is(err, zk.ErrConnectionClosed) && !errors.Is(err, zk.ErrNoServer):
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-n.closed.ch:
			return errors.Join(err, errClosed)
		case <-time.After(redeleteEvery):
		}
	}
}

// redeleteEvery is how often a release whose connection broke asks again.
const redeleteEvery = 50 * time.Millisecond

// errClosed: the Locker was closed while a delete was asked again.
var errClosed = errors.New("zklock: the lock was closed")

// Close stops following its grants and asking again to delete a node;
// the connection is its maker's.
func (n nodes) Close() error {
	n.tells.stopAll()
	n.closed.close()
	return nil
}

// MakePath creates path and its parents where missing, as persistent
// nodes anyone may use.
func MakePath(c *zk.Conn, path string) error {
	at := ""
	for _, part := range strings.Split(strings.Trim(path, "/"), "/") {
		at += "/" + part
		if _, err := c.Create(at, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// expired is err, told as the contract's lock.ErrSessionExpired when it
// is ZooKeeper's word that the session ended: the client's node went with
// it, and whatever it waited for.
func expired(err error) error {
	if errors.Is(err, zk.ErrSessionExpired) {
		return errors.Join(lock.ErrSessionExpired, err)
	}
	return err
}

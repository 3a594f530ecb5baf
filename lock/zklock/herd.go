package zklock

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/lock"
)

// herd is zk-herd: the naive recipe. Its node is protected as the recipe's
// is, but a waiter watches the lock's children, not the node just before
// its own, and looks again at every change: safe, and each release — each
// new waiter, too — wakes every waiter to find it must go on waiting (the
// herd ZooKeeper's recipe exists to avoid). bench counts it: wake-ups per
// release about the number of waiters, where zk-lock's are about one.
type herd struct{ nodes }

// NewHerd is zk-herd on c.
func NewHerd(c *zk.Conn, name string, opts lock.Options) (lock.Locker, error) {
	n, err := newNodes(c, name, opts)
	return &herd{n}, err
}

// NewDeaf is zk-deaf, known-bad: zk-herd whose Lost waits for ZooKeeper's
// word that the session expired, which a client cut off from the ensemble
// hears only once it reconnects.
func NewDeaf(c *zk.Conn, name string, opts lock.Options) (lock.Locker, error) {
	n, err := newNodes(c, name, opts)
	n.deaf = true
	return &herd{n}, err
}

// Acquire creates its node and waits, by a watch on the lock's children,
// until its node is the lowest; or, once ctx ends or a request fails,
// deletes its node and returns the error.
func (h *herd) Acquire(ctx context.Context) (g lock.Grant, err error) {
	node, err := h.c.CreateProtectedEphemeralSequential(h.path+"/lock-", nil, zk.WorldACL(zk.PermAll))
	if errors.Is(err, zk.ErrNoNode) {
		if err := MakePath(h.c, h.path); err != nil {
			return lock.Grant{}, err
		}
		node, err = h.c.CreateProtectedEphemeralSequential(h.path+"/lock-", nil, zk.WorldACL(zk.PermAll))
	}
	if err != nil {
		return lock.Grant{}, err
	}
	defer func() {
		if err != nil {
			h.drop(node)
		}
	}()
	seq, err := sequence(node)
	if err != nil {
		return lock.Grant{}, err
	}
	for {
		children, _, ch, err := h.c.ChildrenW(h.path)
		if err != nil {
			return lock.Grant{}, err
		}
		lowest := true
		for _, c := range children {
			if s, err := sequence(c); err == nil && s < seq {
				lowest = false
			}
		}
		if lowest {
			break
		}
		if err := h.wait(ctx, ch); err != nil {
			return lock.Grant{}, err
		}
	}
	return h.grant(ctx, node)
}

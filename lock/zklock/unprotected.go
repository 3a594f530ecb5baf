package zklock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/lock"
)

// unprotected is zk-unprotected: the recipe without its protection. Its
// create is a plain ephemeral-sequential one, and a create whose answer
// never came (the connection broke) is asked again as it is, without
// looking whether the first took effect: a node the first left holds the
// lock, or a place in its queue, under a session that lives on — for
// nobody. Curator and go-zookeeper name their nodes with a GUID for that
// (CreateProtectedEphemeralSequential), and look for it after a broken
// connection.
type unprotected struct {
	nodes
	flags int32 // the create's flags: ephemeral and sequential
}

// NewUnprotected is zk-unprotected on c: known-bad.
func NewUnprotected(c *zk.Conn, name string, opts lock.Options) (lock.Locker, error) {
	n, err := newNodes(c, name, opts)
	return &unprotected{n, zk.FlagEphemeral | zk.FlagSequence}, err
}

// NewPersistent is zk-persistent on c: zk-unprotected whose nodes are
// made persistent (sequential, not ephemeral), deleted by its release and
// by an acquire that fails — and by nothing else: a client that dies
// holding one, or between its create and its first look at the queue,
// leaves it, and the lock is held by nobody for ever. Known-bad.
func NewPersistent(c *zk.Conn, name string, opts lock.Options) (lock.Locker, error) {
	n, err := newNodes(c, name, opts)
	return &unprotected{n, zk.FlagSequence}, err
}

// Acquire creates its node and waits, by a watch on the node just before
// its own, until its node is the lowest; or, once ctx ends or a request
// fails, deletes the node it knows of and returns the error.
func (u *unprotected) Acquire(ctx context.Context) (g lock.Grant, err error) {
	node, err := u.create()
	if err != nil {
		return lock.Grant{}, err
	}
	defer func() {
		if err != nil {
			u.drop(node)
		}
	}()
	seq, err := sequence(node)
	if err != nil {
		return lock.Grant{}, err
	}
	for {
		prev, err := u.predecessor(seq)
		if err != nil {
			return lock.Grant{}, err
		}
		if prev == "" {
			break
		}
		ok, _, ch, err := u.c.ExistsW(u.path + "/" + prev)
		if err != nil {
			return lock.Grant{}, err
		}
		if !ok {
			continue
		}
		if err := u.wait(ctx, ch); err != nil {
			return lock.Grant{}, err
		}
	}
	return u.grant(ctx, node)
}

// create makes the client's node, its parents first where missing; a
// create whose connection broke is asked again as it is — the bug.
func (u *unprotected) create() (string, error) {
	var err error
	for range 3 {
		var node string
		node, err = u.c.Create(u.path+"/lock-", nil, u.flags, zk.WorldACL(zk.PermAll))
		switch {
		case err == nil:
			return node, nil
		case errors.Is(err, zk.ErrNoNode):
			if err := MakePath(u.c, u.path); err != nil {
				return "", err
			}
		case !errors.Is(err, zk.ErrConnectionClosed):
			return "", expired(err)
		}
	}
	return "", err
}

// predecessor is the child just below seq ("" when seq is the lowest).
func (u *unprotected) predecessor(seq int) (string, error) {
	children, _, err := u.c.Children(u.path)
	if err != nil {
		return "", err
	}
	prev, below := "", -1
	for _, ch := range children {
		s, err := sequence(ch)
		if err == nil && s < seq && s > below {
			prev, below = ch, s
		}
	}
	return prev, nil
}

// sequence is the sequence number ZooKeeper appended to a node's name.
func sequence(node string) (int, error) {
	i := strings.LastIndex(node, "-")
	n, err := strconv.Atoi(node[i+1:])
	if i < 0 || err != nil {
		return 0, fmt.Errorf("zklock: %s has no sequence number", node)
	}
	return n, nil
}

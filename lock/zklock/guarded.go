package zklock

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
)

// GuardedResource is the name Guarded is registered under: a counter node
// in ZooKeeper written only while the writer's lock node stands.
const GuardedResource = "zk-guarded"

func init() {
	resource.Register(resource.Kept{Name: GuardedResource, Store: "zookeeper",
		About: "a counter node in ZooKeeper, written by a multi that checks first that the writer's lock node stands",
		Make:  func(key string) resource.Resource { return &Guarded{Path: "/" + strings.Trim(key, "/")} }})
}

// Guarded is a counter kept in ZooKeeper at the node Path, written by a
// multi whose first op checks that the writer's lock node (Grant.Key)
// still stands: the check and the write commit together or not at all —
// the guard a ZooKeeper lock gives besides its token. A node is the
// holder's: it goes with its session (an ephemeral one) or its release.
type Guarded struct {
	Path string
}

// Name is "zk-guarded".
func (*Guarded) Name() string { return GuardedResource }

// Read reads the counter (zero if never written).
func (r *Guarded) Read(_ context.Context, conn resource.Conn, _ lock.Grant) (int64, error) {
	c, err := zkConn(conn)
	if err != nil {
		return 0, err
	}
	data, _, err := c.Get(r.Path)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("zklock: counter at %s: %w", r.Path, err)
	}
	return n, nil
}

// Write sets the counter to value only while g's lock node stands.
func (r *Guarded) Write(_ context.Context, conn resource.Conn, g lock.Grant, value int64) (resource.Written, error) {
	c, err := zkConn(conn)
	if err != nil {
		return resource.Written{}, err
	}
	if g.Key == "" {
		return resource.Written{}, fmt.Errorf("zklock: %s guards a write with the grant's lock node, and the grant names "+
			"none (Grant.Key is empty)", GuardedResource)
	}
	for first := true; ; first = false {
		res, err := c.Multi(&zk.CheckVersionRequest{Path: g.Key, Version: -1},
			&zk.SetDataRequest{Path: r.Path, Data: []byte(strconv.FormatInt(value, 10)), Version: -1})
		switch {
		case len(res) > 0 && errors.Is(res[0].Error, zk.ErrNoNode):
			return resource.Written{Rejection: resource.LockLost, Reason: "lock node gone: the lock was lost"}, nil
		case len(res) > 1 && errors.Is(res[1].Error, zk.ErrNoNode) && first:
			if err := r.made(c); err != nil { // the counter's first write
				return resource.Written{}, err
			}
		case err != nil:
			return resource.Written{}, err
		default:
			return resource.Written{Accepted: true}, nil
		}
	}
}

// made creates the counter node, and its parents, where missing.
func (r *Guarded) made(c *zk.Conn) error {
	if err := MakePath(c, path.Dir(r.Path)); err != nil {
		return err
	}
	_, err := c.Create(r.Path, []byte("0"), 0, zk.WorldACL(zk.PermAll))
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	return nil
}

// zkConn is conn as a ZooKeeper connection, an error if it is none.
func zkConn(conn resource.Conn) (*zk.Conn, error) {
	c, ok := conn.(*zk.Conn)
	if !ok || c == nil {
		return nil, fmt.Errorf("zklock: %s is kept in ZooKeeper: its reads and writes need a ZooKeeper connection, got %T",
			GuardedResource, conn)
	}
	return c, nil
}

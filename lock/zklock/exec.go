package zklock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
)

// EnvZooKeeper is what a lock run as a process on ZooKeeper reaches the
// ensemble by: its client's own links to the servers, host:port,
// separated by commas, its member's first. Cuts, delays and pauses of the
// client apply to what goes through them.
//
// The program runs under the process protocol of package lock (see
// process.ExecPrefix), with process.EnvStore set to "zookeeper",
// process.EnvLock to the lock's path (its nodes go under it),
// process.EnvTTL to the session timeout in seconds (a decimal, as "1")
// and process.EnvDir; it answers
//
//	acquire  →  granted key=NODE [token=N]   or   error [CLASS] MESSAGE
//	release  →  released                     or   error [CLASS] MESSAGE
//
// NODE is the full path of the node the lock was granted on: the lab
// follows the grant by it and by the session owning it. N, if given, is a
// fencing token (the node's creation zxid is the natural one); without
// one, a fenced store refuses the holder's writes.
const EnvZooKeeper = "LOCKLAB_ZOOKEEPER"

// ExecFactory makes the Locker of a lock run as a process on the client's
// own links to the ensemble (servers, host:port).
type ExecFactory func(servers []string, name string, opts lock.Options) (lock.Locker, error)

// Exec returns the factory of the ZooKeeper lock run by command (a program
// and its arguments, split on spaces), as etcdlock.Exec does on etcd.
func Exec(command string) (ExecFactory, error) {
	argv := strings.Fields(command)
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: %s names no program", ErrUnknownLock, process.ExecPrefix)
	}
	if err := proc.Supported(); err != nil {
		return nil, err
	}
	return func(servers []string, name string, opts lock.Options) (lock.Locker, error) {
		if len(servers) == 0 {
			return nil, fmt.Errorf("zklock: no server to lock on")
		}
		if opts.TTL < 0 {
			return nil, fmt.Errorf("%w, got %d", lock.ErrBadTTL, opts.TTL)
		}
		if opts.Prefix == "" {
			opts.Prefix = lock.DefaultPrefix
		}
		ttl := max(opts.TTL, 1)
		return &execLock{proc.Lock{Who: "zklock", Program: &proc.Program{Argv: argv, DirVar: process.EnvDir, Env: []string{
			process.EnvStore + "=zookeeper", EnvZooKeeper + "=" + strings.Join(servers, ","),
			process.EnvLock + "=" + Path(name, opts), process.EnvTTL + "=" + strconv.Itoa(ttl)}}}}, nil
	}, nil
}

// execLock drives one program on ZooKeeper: its proc.Lock is its
// process.Program (Stop, Continue, Kill, Starting, Close) and its Release.
type execLock struct{ proc.Lock }

// Acquire reads the grant's node from the program's answer.
func (l *execLock) Acquire(ctx context.Context) (lock.Grant, error) {
	return l.Lock.Acquire(ctx, func(a proc.Answer) (lock.Grant, error) {
		g := lock.Grant{Key: a.Fields["key"]}
		if !strings.HasPrefix(g.Key, "/") {
			return g, errors.New("granted without key=NODE, its node's full path (the lab follows a ZooKeeper grant by its node)")
		}
		return g, nil
	})
}

var _ process.Program = (*execLock)(nil)

package redislock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
)

// EnvRedis is what a lock run as a process on Redis reaches the store by:
// its client's own link to each server it talks to, host:port, separated
// by commas (one for a lock on one primary). Cuts, delays and pauses of
// the client apply to what goes through it.
//
// The program runs under the process protocol of package lock (see
// process.ExecPrefix), with process.EnvStore set to "redis", process.EnvLock to the
// key to lock, process.EnvTTL to the key's expiry in seconds (a decimal, as
// "1" or "1.5") and process.EnvDir; it answers
//
//	acquire   →  granted key=KEY value=VALUE [token=N] [tells=lost]   or   error [CLASS] MESSAGE
//	release   →  released                                             or   error [CLASS] MESSAGE
//	(unasked) →  lost   once a grant answered tells=lost is gone: its Grant.Lost
//
// VALUE is what the grant wrote at KEY (its random value, no spaces): the
// lab follows the grant by it, and a grant whose key no longer holds it
// is gone. N, if given, is a fencing token; without one, a fenced store
// refuses the holder's writes.
const EnvRedis = "LOCKLAB_REDIS"

// Exec returns the factory of the Redis lock run by command (a program and
// its arguments, split on spaces), as etcdlock.Exec does on etcd.
func Exec(command string) (Factory, error) {
	argv := strings.Fields(command)
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: %s names no program", ErrUnknownLock, process.ExecPrefix)
	}
	if err := proc.Supported(); err != nil {
		return nil, err
	}
	return execFactory(argv, nil), nil
}

// execFactory is the factory of the Redis lock run by argv, setup (if not
// nil) preparing the program's own directory before it starts.
func execFactory(argv []string, setup func(dir string) error) Factory {
	return func(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
		set, err := settingsOf(opts)
		if err != nil {
			return nil, err
		}
		if len(servers) == 0 {
			return nil, fmt.Errorf("%w: no server to lock on", ErrBadOptions)
		}
		addrs := make([]string, len(servers))
		for i, s := range servers {
			addrs[i] = s.Options().Addr
		}
		return &execLock{proc.Lock{Who: "redislock", Program: &proc.Program{Argv: argv, DirVar: process.EnvDir, Setup: setup,
			Env: []string{process.EnvStore + "=redis", EnvRedis + "=" + strings.Join(addrs, ","),
				process.EnvLock + "=" + set.prefix + name, process.EnvTTL + "=" + strconv.FormatFloat(set.ttl.Seconds(), 'f', -1, 64)}}}}, nil
	}
}

// execLock drives one program on Redis: its proc.Lock is its
// process.Program (Stop, Continue, Kill, Starting, Close) and its Release.
type execLock struct{ proc.Lock }

// Acquire reads the grant's key and value from the program's answer.
func (l *execLock) Acquire(ctx context.Context) (lock.Grant, error) {
	return l.Lock.Acquire(ctx, func(a proc.Answer) (lock.Grant, error) {
		g := lock.Grant{Key: a.Fields["key"], Value: a.Fields["value"]}
		if g.Key == "" || g.Value == "" {
			return g, errors.New("granted without key= and value= (the lab follows a Redis grant by the value its key holds)")
		}
		return g, nil
	})
}

var _ process.Program = (*execLock)(nil)

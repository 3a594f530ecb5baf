package etcdlock

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
)

// execFactory runs argv; setup, if not nil, prepares the process's own
// directory before it starts (the built-in etcdctl lock writes its script
// there).
func execFactory(argv []string, setup func(dir string) error) Factory {
	return func(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
		if err := proc.Supported(); err != nil {
			return nil, err
		}
		opts, err := withDefaults(opts)
		if err != nil {
			return nil, err
		}
		eps := client.Endpoints()
		if len(eps) == 0 {
			return nil, fmt.Errorf("lock: %s: the client has no endpoint", argv[0])
		}
		return &execLock{cli: client, Program: &proc.Program{Argv: argv, Setup: setup, DirVar: process.EnvDir,
			Env: []string{process.EnvStore + "=etcd", process.EnvEndpoints + "=" + eps[0], process.EnvLock + "=" + opts.Prefix + name,
				process.EnvTTL + "=" + strconv.Itoa(opts.TTL)}}}, nil
	}
}

// execLock drives one program over the protocol (see ExecPrefix) on etcd.
// Its Program is its Process: Stop, Continue, Kill, Starting and Close.
type execLock struct {
	cli *clientv3.Client
	*proc.Program

	grant proc.Latest
	mu    sync.Mutex
	lease clientv3.LeaseID // the latest grant's
}

func (l *execLock) Acquire(ctx context.Context) (lock.Grant, error) {
	a, err := l.Program.Expect(ctx, "acquire", "granted", answerErr)
	if err != nil {
		return lock.Grant{}, err
	}
	g, err := l.read(ctx, a)
	if err != nil {
		return lock.Grant{}, err
	}
	l.grant.Set(g)
	l.mu.Lock()
	l.lease = clientv3.LeaseID(g.Lease)
	l.mu.Unlock()
	return g, nil
}

// read is the grant a "granted" answer names: its token and lease as the
// answer gives them, else read from its key as it stands now.
func (l *execLock) read(ctx context.Context, a proc.Answer) (lock.Grant, error) {
	argv0 := l.Program.Argv[0]
	g := lock.Grant{Key: a.Fields["key"]}
	var err error
	if g.Token, err = parseInt(a.Fields["token"]); err != nil {
		return lock.Grant{}, fmt.Errorf("lock: %s: token in %q: %w", argv0, a.Line, err)
	}
	lease, err := parseInt(a.Fields["lease"])
	if err != nil {
		return lock.Grant{}, fmt.Errorf("lock: %s: lease in %q: %w", argv0, a.Line, err)
	}
	g.Lease = lease
	if g.Key != "" && (g.Token == 0 || g.Lease == 0) {
		resp, err := l.cli.Get(ctx, g.Key)
		if err != nil {
			return lock.Grant{}, fmt.Errorf("lock: reading the granted key %s: %w", g.Key, err)
		}
		if len(resp.Kvs) == 0 {
			return lock.Grant{}, fmt.Errorf("%w: granted, but its key %s is gone", lock.ErrSessionExpired, g.Key)
		}
		if g.Lease != 0 && resp.Kvs[0].Lease != g.Lease {
			// The key the answer named now rests on another lease: the
			// grant's lease ended and the next holder took the key. Its
			// token is not this grant's.
			return lock.Grant{}, fmt.Errorf("%w: granted on lease %x, but its key %s now rests on lease %x (the next holder's)",
				lock.ErrSessionExpired, g.Lease, g.Key, resp.Kvs[0].Lease)
		}
		g.Token = cmp.Or(g.Token, resp.Kvs[0].CreateRevision)
		g.Lease = cmp.Or(g.Lease, resp.Kvs[0].Lease)
	}
	if g.Token == 0 && g.Key == "" {
		return lock.Grant{}, fmt.Errorf("lock: %s granted with neither key nor token: %q", argv0, a.Line)
	}
	if g.Lost, err = l.Program.Tells(a); err != nil {
		return lock.Grant{}, fmt.Errorf("lock: %s: %w", argv0, err)
	}
	return g, nil
}

// Release releases the latest grant; an older one is refused as not held
// and never reaches the process, whose release means "the lock I hold now".
func (l *execLock) Release(ctx context.Context, g lock.Grant) error {
	return l.grant.Release(ctx, g, func(ctx context.Context) error {
		_, err := l.Program.Expect(ctx, "release", "released", answerErr)
		return err
	})
}

// Lease is the lease of the latest grant, or zero before the first.
func (l *execLock) Lease() clientv3.LeaseID {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lease
}

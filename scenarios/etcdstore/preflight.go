package etcdstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/scenarios"
)

// preflight makes one Locker of f on c — or, when c is nil, on a scratch
// cluster of one embedded member, closed afterwards — under a key prefix
// of its own (removed afterwards), and has it acquire and release once,
// with nothing else going on: the grant it was given, or why it was
// given none (see scenarios.BackendLock.Preflight). A lock that cannot
// acquire (a program that is missing or crashes, an adapter that answers
// nothing, a Locker that errs at once), or whose release never returns,
// would only fill a whole run with the same error: its error says so at
// once instead, in one sentence, with what the lock said. A release that
// returns an error is left to the lessons.
func preflight(ctx context.Context, f etcdlock.Factory, c *cluster.Cluster) (lock.Grant, error) {
	if c == nil {
		scratch, err := cluster.Start(ctx, cluster.Config{Members: 1})
		if err != nil {
			return lock.Grant{}, fmt.Errorf("preflight: the scratch cluster: %w", err)
		}
		defer scratch.Close()
		c = scratch
	}
	return probe(ctx, c, f)
}

// probe makes one Locker of f on c, under a key prefix of its own (removed
// afterwards), and has it acquire and release once: the grant it was
// given, or why it was given none (see Preflight).
func probe(ctx context.Context, c *cluster.Cluster, f etcdlock.Factory) (g lock.Grant, err error) {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	cl, err := c.NewClient("preflight-"+id, c.Members()[0])
	if err != nil {
		return g, fmt.Errorf("preflight: %w", err)
	}
	defer c.CloseClient(cl.Name())
	cl.ReadWire() // as in a run: a process lock's traffic is read
	prefix := "locklab/preflight/" + id + "/"
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, derr := c.Admin().Delete(dctx, prefix, clientv3.WithPrefix()); derr != nil && err == nil {
			err = fmt.Errorf("preflight: removing its keys (%s…): %w", prefix, derr)
		}
	}()
	l, err := f(cl.Etcd(), "lock", lock.Options{TTL: 2, Prefix: prefix})
	if err != nil {
		return g, fmt.Errorf("preflight: making the lock: %w", err)
	}
	defer l.Close()
	actx, cancel := context.WithTimeout(ctx, scenarios.PreflightTimeout)
	defer cancel()
	g, err = l.Acquire(actx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return g, fmt.Errorf("preflight: the lock, alone on a healthy cluster, was not granted within %s: %w", scenarios.PreflightTimeout, err)
		}
		return g, fmt.Errorf("preflight: the lock, alone on a healthy cluster, could not acquire: %w", err)
	}
	// A release that answers, even with an error, is left to the lessons,
	// whose checks say more about it; one that does not answer in time
	// would stall every one of them.
	rctx, rcancel := context.WithTimeout(ctx, scenarios.PreflightTimeout)
	defer rcancel()
	if err := l.Release(rctx, g); errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return g, fmt.Errorf("preflight: the lock, alone on a healthy cluster, was granted, and its release did not return within %s: %w", scenarios.PreflightTimeout, err)
	}
	return g, nil
}

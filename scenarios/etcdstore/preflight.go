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
//
// A lock run as a process (reask) is then asked to acquire while it holds
// a grant the lab ended (scenarios.Reask).
func preflight(ctx context.Context, f etcdlock.Factory, c *cluster.Cluster, reask bool) (scenarios.GrantShape, error) {
	if c == nil {
		scratch, err := cluster.Start(ctx, cluster.Config{Members: 1})
		if err != nil {
			return scenarios.GrantShape{}, fmt.Errorf("preflight: the scratch cluster: %w", err)
		}
		defer scratch.Close()
		c = scratch
	}
	return probe(ctx, c, f, reask)
}

// probe makes one Locker of f on c, under a key prefix of its own (removed
// afterwards), and has it acquire and release once: the grant it was
// given (its shape), or why it was given none (see Preflight).
func probe(ctx context.Context, c *cluster.Cluster, f etcdlock.Factory, reask bool) (shape scenarios.GrantShape, err error) {
	var g lock.Grant
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	cl, err := c.NewClient("preflight-"+id, c.Members()[0])
	if err != nil {
		return shape, fmt.Errorf("preflight: %w", err)
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
		return shape, fmt.Errorf("preflight: making the lock: %w", err)
	}
	defer l.Close()
	actx, cancel := context.WithTimeout(ctx, scenarios.PreflightTimeout)
	defer cancel()
	g, err = l.Acquire(actx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return shape, fmt.Errorf("preflight: the lock, alone on a healthy cluster, was not granted within %s: %w", scenarios.PreflightTimeout, err)
		}
		return shape, fmt.Errorf("preflight: the lock, alone on a healthy cluster, could not acquire: %w", err)
	}
	// A release that answers, even with an error, is left to the lessons,
	// whose checks say more about it; one that does not answer in time
	// would stall every one of them.
	shape = scenarios.ShapeOf(l, g)
	rctx, rcancel := context.WithTimeout(ctx, scenarios.PreflightTimeout)
	defer rcancel()
	if err := l.Release(rctx, g); errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return shape, fmt.Errorf("preflight: the lock, alone on a healthy cluster, was granted, and its release did not return within %s: %w", scenarios.PreflightTimeout, err)
	}
	if reask {
		return shape, scenarios.Reask(ctx, l, ender{c.Admin()})
	}
	return shape, nil
}

// ender ends a grant on etcd as the lessons do (its lease revoked, or its
// key deleted where it has none) and reads whether a grant is held: its
// key there, created at its token.
type ender struct{ kv *clientv3.Client }

func (e ender) End(ctx context.Context, g lock.Grant) error {
	lease := clientv3.LeaseID(g.Lease)
	if lease == 0 && g.Key != "" {
		resp, err := e.kv.Get(ctx, g.Key)
		if err != nil {
			return err
		}
		if len(resp.Kvs) > 0 {
			lease = clientv3.LeaseID(resp.Kvs[0].Lease)
		}
	}
	if lease != 0 {
		_, err := e.kv.Revoke(ctx, lease)
		return err
	}
	if g.Key == "" {
		return nil
	}
	_, err := e.kv.Delete(ctx, g.Key)
	return err
}

func (e ender) Holds(ctx context.Context, g lock.Grant) (bool, error) {
	if g.Key == "" {
		return true, nil // no key to read: taken at its word
	}
	resp, err := e.kv.Get(ctx, g.Key)
	if err != nil {
		return false, err
	}
	return len(resp.Kvs) > 0 && (g.Token == 0 || resp.Kvs[0].CreateRevision == g.Token), nil
}

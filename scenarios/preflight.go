package scenarios

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/process"
)

// PreflightTimeout bounds each of a preflight's acquire and release: a
// process lock's start-up (process.StartupAllowance) and a few seconds more
// on a cluster nobody else uses.
const PreflightTimeout = process.StartupAllowance + 5*time.Second

// Preflight makes one Locker of f on a scratch cluster — an embedded
// single member, or x's cluster under a key prefix of its own (removed
// afterwards) — and has it acquire and release once, with nothing else
// going on. A lock that cannot acquire (a program that is missing or
// crashes, an adapter that answers nothing, a Locker that errs at once),
// or whose release never returns, would only fill a whole run with the
// same error: its error says so at once instead, in one sentence, with
// what the lock said. A release that returns an error is left to the
// lessons. lg, if not nil, gets the cluster's logs.
func Preflight(ctx context.Context, f etcdlock.Factory, x *cluster.External, lg *zap.Logger) (err error) {
	var c *cluster.Cluster
	if x != nil {
		xc := *x
		xc.Logger = lg
		c, err = cluster.Connect(ctx, xc)
	} else {
		c, err = cluster.Start(ctx, cluster.Config{Members: 1, Logger: lg})
	}
	if err != nil {
		return fmt.Errorf("preflight: the scratch cluster: %w", err)
	}
	defer c.Close()
	_, err = probe(ctx, c, f)
	return err
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
	actx, cancel := context.WithTimeout(ctx, PreflightTimeout)
	defer cancel()
	g, err = l.Acquire(actx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return g, fmt.Errorf("preflight: the lock, alone on a healthy cluster, was not granted within %s: %w", PreflightTimeout, err)
		}
		return g, fmt.Errorf("preflight: the lock, alone on a healthy cluster, could not acquire: %w", err)
	}
	// A release that answers, even with an error, is left to the lessons,
	// whose checks say more about it; one that does not answer in time
	// would stall every one of them.
	rctx, rcancel := context.WithTimeout(ctx, PreflightTimeout)
	defer rcancel()
	if err := l.Release(rctx, g); errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return g, fmt.Errorf("preflight: the lock, alone on a healthy cluster, was granted, and its release did not return within %s: %w", PreflightTimeout, err)
	}
	return g, nil
}

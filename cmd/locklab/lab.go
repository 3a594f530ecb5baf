package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/live"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/scenarios"
)

// cmdLab serves the live lab until ctx ends (Ctrl-C).
func cmdLab(ctx context.Context, args []string, stdout io.Writer) (int, error) {
	var cf clusterFlags
	fs := newFlagSet("lab")
	lk := fs.String("lock", "etcd-mutex", "the lock the lab starts with (the page switches)")
	ttl := fs.Int("ttl", live.DefaultTTL, fmt.Sprintf("lease TTL in seconds, 1 to %d", maxTTL))
	open := fs.Bool("open", false, "open the page in the system's browser")
	cf.register(fs)
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	if fs.NArg() > 0 {
		return exitUsage, usagef("lab: unexpected argument %q", fs.Arg(0))
	}
	if *ttl < 1 || *ttl > maxTTL {
		return exitUsage, usagef("--ttl: want 1 to %d seconds, got %d", maxTTL, *ttl)
	}
	if kind, ok := scenarios.KindOf(*lk); ok && kind.Name != scenarios.DefaultKind().Name { // the default store's locks share one cluster
		if cf.endpoints != "" || cf.members != storeMembers {
			return exitUsage, usagef("--lock %s: a lock on %s runs on servers the lab starts, not on etcd (--endpoints, --members)", *lk, kind.Label)
		}
		return serveLab(ctx, live.Config{Store: backendLabStore(*lk, kind), Lock: *lk, TTL: *ttl},
			kind.Label+", started anew for each run", *open, stdout)
	}
	locks := etcdlock.Builtin()
	for _, r := range etcdlock.Regressions() {
		locks[r.Name] = r.Factory
	}
	if _, ok := locks[*lk]; !ok {
		names := live.Names(locks)
		for _, b := range scenarios.Backends() {
			names = append(names, b.Names()...)
		}
		return exitUsage, usagef("--lock: unknown lock %q (locks: %s)", *lk, strings.Join(names, ", "))
	}
	external, logger, err := cf.check()
	if err != nil {
		return exitUsage, err
	}
	var c *cluster.Cluster
	if external != nil {
		external.Logger = logger
		c, err = cluster.Connect(ctx, *external)
	} else {
		c, err = cluster.Start(ctx, cluster.Config{Members: cf.members, Logger: logger})
	}
	if err != nil {
		return exitUsage, err
	}
	defer c.Close()
	return serveLab(ctx, live.Config{Cluster: c, Locks: locks, Lock: *lk, TTL: *ttl}, where(c, cf), *open, stdout)
}

// backendLabStore is the live lab's store of the locks of another store
// than etcd of the same kind as the lock called name: each run on servers
// started for it.
func backendLabStore(name string, kind scenarios.StoreKind) live.Store {
	var names []string
	for _, b := range scenarios.Backends() {
		for _, n := range b.Names() {
			if k, _ := scenarios.KindOf(n); k.Name == kind.Name {
				names = append(names, n)
			}
		}
	}
	l, _ := scenarios.LookupBackendLock(name)
	return live.BackendStore(names, kind, l.Store(nil, scenarios.GrantShape{Token: true, Key: true}).Members())
}

// serveLab serves the lab cfg makes until ctx ends (Ctrl-C); where says
// what its runs are on.
func serveLab(ctx context.Context, cfg live.Config, where string, open bool, stdout io.Writer) (int, error) {
	lab, err := live.New(cfg)
	if err != nil {
		return exitUsage, err
	}
	defer lab.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return exitUsage, err
	}
	srv := &http.Server{Handler: lab.Handler(), ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(stdout, "locklab live lab on %s (%s lock, %d s leases): open %s — Ctrl-C ends it\n", where, cfg.Lock, cfg.TTL, url)
	if open {
		openBrowser(url)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-served:
		return exitUsage, err
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx) //nolint:errcheck // the pages' streams end with the server
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return exitUsage, err
	}
	fmt.Fprintln(stdout, "locklab live lab: ended")
	return exitOK, nil
}

// where says which cluster the lab drives.
func where(c *cluster.Cluster, cf clusterFlags) string {
	if cf.endpoints != "" {
		return "the cluster at " + cf.endpoints
	}
	return fmt.Sprintf("an embedded %d-member cluster", len(c.Members()))
}

// openBrowser asks the system to open url; where it cannot, the printed
// address is there to open by hand.
func openBrowser(url string) {
	name := "xdg-open"
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name = "explorer"
	}
	cmd := exec.Command(name, url)
	if cmd.Start() == nil {
		go cmd.Wait() //nolint:errcheck // the browser is the user's
	}
}

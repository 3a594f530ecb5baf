package pgd

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/internal/piddir"
	"github.com/locklab/locklab/internal/tailbuf"
)

// StartReplica starts a streaming replica of s: a base backup of s taken
// over a link of the replica's own (Replication), and a hot standby on it
// that streams s's WAL over that link, asynchronously, as PostgreSQL's
// replication is by default. The caller closes it; s must not fail over
// to another.
func (s *Server) StartReplica(ctx context.Context, opts Options) (_ *Server, err error) {
	root, err := piddir.Make("", "postgres")
	if err != nil {
		return nil, fmt.Errorf("pgd: %w", err)
	}
	r := &Server{root: root, data: filepath.Join(root, "data"), bin: s.bin, as: s.as, out: &tailbuf.Buffer{}, log: opts.Log}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if err := r.as.own(root); err != nil {
		return nil, fmt.Errorf("pgd: handing %s to the server's user: %w", root, err)
	}
	if r.repl, err = netproxy.New(s.upstream); err != nil {
		return nil, err
	}
	// -R writes standby.signal and a primary_conninfo that names the
	// link: the replica streams through it from then on.
	backup := exec.CommandContext(ctx, filepath.Join(s.bin, "pg_basebackup"), "-D", r.data, "-d", dsn(r.repl.Addr()),
		"-X", "stream", "-R", "--no-sync", "-c", "fast")
	r.as.apply(backup)
	if out, err := backup.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgd: pg_basebackup: %w: %s", err, lastLines(string(out), 3))
	}
	return r, r.start(ctx)
}

// Replication is a replica's link to its primary, cut to hold the
// primary's writes back from it (nil on a primary).
func (s *Server) Replication() *netproxy.Proxy { return s.repl }

// FailOver kills s and promotes replica in its place, as Patroni or a
// DBA does when the primary stops answering: what replication had not
// carried over is gone, and so is every session — and every advisory lock
// — that s had (locks are never replicated). From then on s stands for
// the promoted replica: its links reach it, Admin and Terminate act on it.
func (s *Server) FailOver(ctx context.Context, replica *Server) error {
	if replica == nil || replica.repl == nil {
		return errors.New("pgd: failover needs a replica of the server")
	}
	s.Kill()
	admin := replica.Admin()
	if admin == nil {
		return errors.New("pgd: the replica is down")
	}
	var ok bool
	if err := admin.QueryRow(ctx, "SELECT pg_promote(true, $1)", int(promoteWait/time.Second)).Scan(&ok); err != nil {
		return fmt.Errorf("pgd: promoting the replica: %w", err)
	}
	if !ok {
		return fmt.Errorf("pgd: the replica was not promoted within %s", promoteWait)
	}
	s.mu.Lock()
	s.next = replica
	s.mu.Unlock()
	return nil
}

// promoteWait bounds a promotion.
const promoteWait = 30 * time.Second

// successor is the server s fails over to, or nil.
func (s *Server) successor() *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

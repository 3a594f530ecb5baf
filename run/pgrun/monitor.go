package pgrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/pglock"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/run/follow"
)

// watch is one grant the sweep follows, from its grant until its lock
// leaves the server (lost: its session ended; gone: the session lives and
// no longer holds it) or its client releases it. Its lease is the session
// holding it; LastAlive the last look that found it held.
type watch struct {
	follow.Grant
	key     int64
	granted time.Time // when the lock returned the grant: the session's last activity then
	crashed bool      // its client crashed: the session goes with its connection
}

// follow starts following g, client's new grant, held when the lock
// returned it; its lease is the session the grant names (or, where it
// names none, the client's latest read off its link).
func (e *Env) follow(client string, g lock.Grant) int64 {
	pid := g.Lease
	if pid == 0 {
		pid = e.pidOf(client)
	}
	key, err := pglock.ParseKey(g.Key)
	if err != nil {
		key = e.key
	}
	// A session ends the moment its connection does (a crashed client's,
	// say) and its lock is free at once: what ended before this grant is
	// recorded before it.
	e.sweep(context.Background())
	now := time.Now()
	e.watched.Add(&watch{Grant: follow.Grant{Client: client, Token: g.Token, Lease: pid, LastAlive: now}, key: key, granted: now})
	return pid
}

// released stops following lease, its client's release having returned,
// and reports whether the server had ended it before.
func (e *Env) released(lease int64) bool {
	return e.watched.Released(lease, func(*watch) { e.sweep(context.Background()) })
}

// sweep looks once at every grant still followed: is its lock held by its
// session, and, where not, does the session live.
func (e *Env) sweep(ctx context.Context) {
	for _, w := range e.watched.Pending() {
		sent := time.Now()
		held, alive, err := e.holds(ctx, w.Lease, w.key)
		switch {
		case err != nil:
		case held:
			w.Alive(sent)
		default:
			e.leftBy(w, alive)
		}
	}
}

// holds reads whether session pid holds the advisory lock key, and
// whether it lives.
func (e *Env) holds(ctx context.Context, pid, key int64) (held, alive bool, err error) {
	admin := e.srv.Admin()
	if admin == nil {
		return false, false, errors.New("pgrun: postgres is down")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	err = admin.QueryRow(ctx, `SELECT
		EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 AND granted AND `+pglock.OnKey("$2")+`),
		EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, pid, key).Scan(&held, &alive)
	return held, alive, err
}

// leftBy records how w's lock left the server, the first time it is seen
// gone: its session ended (the lease the grant rests on), or the session
// lives and holds it no more while its client held it and was not
// releasing it (the grant gone from the server: only its own session can
// unlock it, so its lock let it go unasked).
func (e *Env) leftBy(w *watch, alive bool) {
	g, held, releasing := e.Holding(w.Client)
	holds := held && g.Token == w.Token
	w.Lock()
	crashed := w.crashed
	w.Unlock()
	if alive && holds && !releasing && !crashed && e.exiting(w.Lease) {
		// Its session was on its way out: a session lets its locks go
		// before the server lists it gone.
		alive = false
	}
	w.Lock()
	defer w.Unlock()
	switch {
	case w.Done:
	case !alive || w.crashed:
		// The session ended — or, its client crashed, is ending: its
		// lock is let go before the server lists the session gone. The
		// grant's own query was the session's last activity then, and
		// starts its idle time as a keep-alive does: Renewals' first,
		// though never the last renewal sent (as on Redis).
		e.Histories().LeaseLost(w.Lose(e.TTLDuration(), w.granted))
	case releasing || !holds:
		// the release's own hand; it says what happened
	default:
		w.Done = true
		e.Histories().GrantGone(w.Client, w.Token)
	}
}

// exiting reports whether session pid, which no longer holds its lock,
// ends within a moment: the server ending a session (its idle timeout, a
// terminate) lets its locks go first and lists it gone after.
func (e *Env) exiting(pid int64) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := poll.Until(ctx, "the session to end", 20*time.Millisecond, func(ctx context.Context) (bool, error) {
		_, alive, err := e.holds(ctx, pid, 0)
		return err == nil && !alive, nil
	})
	return err == nil
}

// Crashed notes that client crashed (engine.Crasher): its connection is
// severed, and the session its grants rest on ends with it.
func (s store) Crashed(client string) error {
	for _, w := range s.e.watched.All() {
		if w.Client == client {
			w.Lock()
			w.crashed = true
			w.Unlock()
		}
	}
	return nil
}

// leaseEnd is the end of client's session pid, known alive until now.
func leaseEnd(client string, pid int64, ttl time.Duration) history.LeaseEnd {
	return history.LeaseEnd{Client: client, Lease: pid, LastAlive: time.Now(), TTL: ttl}
}

// gone looks again at the grant resting on lease and reports whether it
// left the server (its session ended, or its lock was released).
func (e *Env) gone(ctx context.Context, lease int64) (bool, error) {
	return e.watched.Gone(lease, func(*watch) { e.sweep(ctx) })
}

// left names the sessions holding the run's lock: none when it is free.
func (e *Env) left(ctx context.Context) ([]string, error) {
	admin := e.srv.Admin()
	if admin == nil {
		return nil, errors.New("pgrun: postgres is down")
	}
	rows, err := admin.Query(ctx, `SELECT pid FROM pg_locks WHERE granted AND `+pglock.OnKey("$1"), e.key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var pid int64
		if err := rows.Scan(&pid); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("the advisory lock, held by session %d", pid))
	}
	return out, rows.Err()
}

func init() { run.StoreErrors(connectionLost) }

// connectionLost classes what pgx answers a query whose session the
// server ended (SQLSTATE class 57P: terminated, idle too long, shut down)
// as the session expired, and one whose connection broke as a connection
// lost: its outcome unknown to the client.
func connectionLost(err error) run.Failure {
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && strings.HasPrefix(pe.Code, "57P"):
		return run.FailSessionExpired
	case errors.As(err, &pe) && strings.HasPrefix(pe.Code, "08"):
		return run.FailConnectionLost
	case errors.Is(err, io.ErrUnexpectedEOF), pgconn.SafeToRetry(err):
		return run.FailConnectionLost
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return run.FailConnectionLost
	}
	return 0
}

// Shows reports whether client's session waits for the run's lock on the
// server (engine.WaiterShower): a request of its for the advisory lock,
// not granted. A lock that polls never shows so; the engine takes its
// answered polls instead.
func (s store) Shows(ctx context.Context, client string) (bool, error) {
	pid := s.e.pidOf(client)
	admin := s.e.srv.Admin()
	if pid == 0 || admin == nil {
		return false, nil
	}
	var waits bool
	err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted AND `+pglock.OnKey("$2")+`)`,
		pid, s.e.key).Scan(&waits)
	return waits, err
}

// Kept reports whether client's session still holds the grant it just
// released, answered released (engine.ReleaseChecker): an unlock sent on
// another session leaves it held. A lock may release by ending its
// session (closing its connection), which the server finishes a moment
// after the client: a grant is kept only while its session lives and
// holds it for keptGrace after the release returned.
func (s store) Kept(ctx context.Context, client string, lease int64, g lock.Grant) (bool, error) {
	key, err := pglock.ParseKey(g.Key)
	if err != nil || lease == 0 {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, keptGrace)
	defer cancel()
	kept := false // the last look saw its session alive and holding it
	err = poll.Until(ctx, "the released grant to leave the server", 20*time.Millisecond, func(ctx context.Context) (bool, error) {
		held, alive, err := s.e.holds(ctx, lease, key)
		kept = err == nil && held && alive
		return err == nil && !kept, nil
	})
	return kept && err != nil, nil
}

// keptGrace is how long a released grant may stay held while its session
// ends, before the release is taken to have freed nothing.
const keptGrace = time.Second

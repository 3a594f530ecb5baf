package pglock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/locklab/locklab/lock"
)

// session is a lock held by one database session: the connection it was
// granted on (a session-level advisory lock), or its open transaction
// (xact). All use of the connection is under mu.
type session struct {
	cfg   *pgx.ConnConfig
	key   int64
	ttl   time.Duration
	retry time.Duration
	variant

	mu   sync.Mutex
	conn *pgx.Conn
	held *holding
	// used is, for pg-unlock-elsewhere, the keep-alive of a grant it
	// released: the application goes on using the session.
	used *holding

	polls atomic.Int64 // tries after an acquire's first (poll)
}

// Polls counts the tries a polling lock made after each acquire's first
// (lock.Poller): the times it looked at the lock again.
func (s *session) Polls() int64 { return s.polls.Load() }

// variant is how a session lock takes and holds: poll tries the lock
// every retry rather than wait on it; alive sends a query every TTL/3
// while holding; xact holds it in a transaction. The known-bad: deaf never
// closes a grant's Lost; elsewhere unlocks on a connection of its own,
// not the session's, and takes its answer for done.
type variant struct{ poll, alive, xact, deaf, elsewhere bool }

// holding is one grant while it is held: its token, and its keep-alive.
type holding struct {
	token int64
	stop  chan struct{}
	done  chan struct{}
	lost  chan struct{}
}

func newSession(cfg *pgx.ConnConfig, name string, opts lock.Options, v variant) (lock.Locker, error) {
	if opts.TTL < 0 {
		return nil, fmt.Errorf("%w, got %d", lock.ErrBadTTL, opts.TTL)
	}
	if cfg == nil {
		return nil, errors.New("pglock: no connection settings")
	}
	s := &session{cfg: cfg, key: Key(name, opts), ttl: time.Duration(max(opts.TTL, 1)) * time.Second, retry: opts.Retry, variant: v}
	if s.retry == 0 {
		s.retry = 50 * time.Millisecond
	}
	return s, nil
}

// NewSession is pg-session: pg_advisory_lock on a connection of its own,
// kept alive while held.
func NewSession(cfg *pgx.ConnConfig, name string, opts lock.Options) (lock.Locker, error) {
	return newSession(cfg, name, opts, variant{alive: true})
}

// NewTry is pg-try: pg_try_advisory_lock polled, kept alive while held.
func NewTry(cfg *pgx.ConnConfig, name string, opts lock.Options) (lock.Locker, error) {
	return newSession(cfg, name, opts, variant{poll: true, alive: true})
}

// NewXact is pg-xact: pg_advisory_xact_lock in a transaction held open
// until the release commits it, kept alive while held.
func NewXact(cfg *pgx.ConnConfig, name string, opts lock.Options) (lock.Locker, error) {
	return newSession(cfg, name, opts, variant{alive: true, xact: true})
}

// NewIdle is the known-bad pg-idle: pg-session that sends nothing while
// it holds.
func NewIdle(cfg *pgx.ConnConfig, name string, opts lock.Options) (lock.Locker, error) {
	return newSession(cfg, name, opts, variant{})
}

// NewDeaf is the known-bad pg-deaf: pg-session whose holder is never told
// its session ended.
func NewDeaf(cfg *pgx.ConnConfig, name string, opts lock.Options) (lock.Locker, error) {
	return newSession(cfg, name, opts, variant{alive: true, deaf: true})
}

// NewUnlockElsewhere is the known-bad pg-unlock-elsewhere: pg-session
// released on a connection other than the session's.
func NewUnlockElsewhere(cfg *pgx.ConnConfig, name string, opts lock.Options) (lock.Locker, error) {
	return newSession(cfg, name, opts, variant{alive: true, elsewhere: true})
}

// NewPooled is the known-bad pg-pooled: pg-session as it runs through a
// pooler in transaction mode (its store puts PgBouncer between it and the
// server: ViaPgBouncer), its statements sent as simple queries, as pgx
// must be told to through PgBouncer (it lends a server connection per
// transaction, and a prepared statement would not follow).
func NewPooled(cfg *pgx.ConnConfig, name string, opts lock.Options) (lock.Locker, error) {
	if cfg != nil {
		cfg = cfg.Copy()
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	}
	return newSession(cfg, name, opts, variant{alive: true})
}

// connected is the session's connection, made anew if the last one broke
// (its session, and every lock it held, went with it).
func (s *session) connected(ctx context.Context) (*pgx.Conn, error) {
	if s.conn != nil && !s.conn.IsClosed() {
		return s.conn, nil
	}
	c, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return nil, err
	}
	s.conn = c
	if _, err := c.Exec(ctx, "CREATE SEQUENCE IF NOT EXISTS "+Sequence(s.key)); err != nil && !exists(err) {
		return nil, err
	}
	return c, nil
}

// sessionEnded says err is the server ending the session (an
// administrator's pg_terminate_backend, an idle timeout, a shutdown:
// SQLSTATE class 57P).
func sessionEnded(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && strings.HasPrefix(pe.Code, "57P")
}

// exists says err is a CREATE … IF NOT EXISTS that met another client's
// create of the same object at the same moment.
func exists(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P07" || pe.Code == "42710")
}

// Acquire takes the lock, or returns ctx's error once ctx ends; a wait
// given up on breaks the connection (pgx's way with a cancelled query),
// and the session's end takes back whatever the wait had won.
func (s *session) Acquire(ctx context.Context) (lock.Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil {
		s.stopHolding()
	}
	c, err := s.connected(ctx)
	if err != nil {
		return lock.Grant{}, err
	}
	if err := s.take(ctx, c); err != nil {
		ended := ctx.Err() == nil && (c.IsClosed() || sessionEnded(err))
		s.drop()
		if ended {
			// A session is its connection: one that broke, or that the
			// server ended, took its place in the lock's queue with it.
			return lock.Grant{}, errors.Join(lock.ErrSessionExpired, err)
		}
		return lock.Grant{}, err
	}
	// The session is the server's backend that runs the statement: the
	// connection's own, or, through a pooler, whichever server connection
	// it lent (BackendKeyData is then the pooler's, not the server's).
	var token, pid int64
	if err := c.QueryRow(ctx, "SELECT nextval($1), pg_backend_pid()", Sequence(s.key)).Scan(&token, &pid); err != nil {
		s.drop()
		return lock.Grant{}, err
	}
	h := &holding{token: token, stop: make(chan struct{}), done: make(chan struct{}), lost: make(chan struct{})}
	s.held = h
	go s.keepAlive(h)
	return lock.Grant{Key: KeyString(s.key), Token: token, Lease: pid, Lost: h.lost}, nil
}

// take waits for the lock on c (or polls for it), in a transaction for xact.
func (s *session) take(ctx context.Context, c *pgx.Conn) error {
	if s.xact {
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			return err
		}
		_, err := c.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", s.key)
		return err
	}
	if !s.poll {
		_, err := c.Exec(ctx, "SELECT pg_advisory_lock($1)", s.key)
		return err
	}
	for {
		var ok bool
		if err := c.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", s.key).Scan(&ok); err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.retry):
		}
		s.polls.Add(1)
	}
}

// drop ends the connection after a failed acquire: whatever it won or
// queued for goes with its session.
func (s *session) drop() {
	if s.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s.conn.Close(ctx) //nolint:errcheck // the session is given up either way
		s.conn = nil
	}
}

// keepAlive sends a query every TTL/3 while h is held, so that the server
// does not end the session as idle; the first that fails — the session is
// gone, and the lock with it — closes the grant's Lost. A keep-alive may
// wait for its answer until a TTL after the last one answered was sent:
// until then the server cannot have ended the session as idle, and an
// answer that comes late (a link that held it a moment) is no lost lock.
// One not answered by then tells the holder as the server would end it.
func (s *session) keepAlive(h *holding) {
	defer close(h.done)
	t := time.NewTicker(s.ttl / 3)
	defer t.Stop()
	answered := time.Now() // when the last keep-alive answered was sent: the grant's own query first
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		if !s.alive {
			continue
		}
		s.mu.Lock()
		var err error
		if (s.held == h || s.used == h) && s.conn != nil {
			sent := time.Now()
			ctx, cancel := context.WithDeadline(context.Background(), answered.Add(s.ttl))
			_, err = s.conn.Exec(ctx, "SELECT 1")
			cancel()
			if err == nil {
				answered = sent
			}
		}
		s.mu.Unlock()
		if err != nil {
			if !s.deaf {
				close(h.lost)
			}
			return
		}
	}
}

// stopHolding ends the keep-alive of the grant held (under mu; the
// keep-alive takes mu, so it is waited for without it).
func (s *session) stopHolding() {
	h := s.held
	s.held = nil
	close(h.stop)
	s.mu.Unlock()
	<-h.done
	s.mu.Lock()
}

// Release gives g back: pg_advisory_unlock (COMMIT, for xact). A session
// that no longer holds it — it ended, and its lock with it — is
// lock.ErrNotHeld.
func (s *session) Release(ctx context.Context, g lock.Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil || s.held.token != g.Token {
		return lock.ErrNotHeld
	}
	if s.elsewhere {
		if s.used != nil {
			s.held, s.used = s.used, s.held
			s.stopHolding()
		} else {
			s.used, s.held = s.held, nil
		}
		return s.unlockElsewhere(ctx)
	}
	s.stopHolding()
	if s.conn == nil || s.conn.IsClosed() {
		return fmt.Errorf("%w: its session ended", lock.ErrNotHeld)
	}
	if s.xact {
		if _, err := s.conn.Exec(ctx, "COMMIT"); err != nil {
			s.drop()
			return errors.Join(lock.ErrNotHeld, err)
		}
		return nil
	}
	var ok bool
	if err := s.conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", s.key).Scan(&ok); err != nil {
		if s.conn.IsClosed() {
			s.conn = nil
			return errors.Join(lock.ErrNotHeld, err)
		}
		return err
	}
	if !ok {
		return fmt.Errorf("%w: the session does not hold it", lock.ErrNotHeld)
	}
	return nil
}

// Close ends the session; what it held goes with it.
func (s *session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil {
		s.stopHolding()
	}
	if s.used != nil {
		s.held, s.used = s.used, nil
		s.stopHolding()
	}
	s.drop()
	return nil
}

// unlockElsewhere is the known-bad pg-unlock-elsewhere's release: the
// unlock on a connection of its own (as a pool hands out), which holds
// nothing — PostgreSQL answers false, and a warning — while the session
// that holds the lock stays open and in use (its keep-alive goes on, as
// the application's other queries would).
func (s *session) unlockElsewhere(ctx context.Context) error {
	c, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return err
	}
	defer c.Close(context.Background()) //nolint:errcheck // a connection of the release's own
	_, err = c.Exec(ctx, "SELECT pg_advisory_unlock($1)", s.key)
	return err
}

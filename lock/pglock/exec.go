package pglock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
)

// EnvPostgres is what a lock run as a process on PostgreSQL reaches the
// server by: a libpq connection string of its client's own link, with the
// session settings the lab gives every client (its idle timeouts, the
// lease). Cuts, delays and pauses of the client apply to what goes
// through it.
//
// The program runs under the process protocol of package lock (see
// process.ExecPrefix), with process.EnvStore set to "postgres",
// process.EnvLock to the advisory key to lock (a bigint, in decimal),
// process.EnvTTL to the idle timeout in seconds and process.EnvDir; it
// answers
//
//	acquire  →  granted key=KEY [token=N] [lease=PID]   or   error [CLASS] MESSAGE
//	release  →  released                                or   error [CLASS] MESSAGE
//
// KEY is the advisory key it holds; PID, if given, the backend process of
// the session holding it (pg_backend_pid()): the lab reads it off the
// wire otherwise. N, if given, is a fencing token (a sequence's nextval
// taken while holding is one); without one, a fenced store refuses the
// holder's writes.
const EnvPostgres = "LOCKLAB_POSTGRES"

// Exec returns the factory of the PostgreSQL lock run by command (a
// program and its arguments, split on spaces), as etcdlock.Exec does on
// etcd: it reads the client's connection settings for the program.
func Exec(command string) (Factory, error) {
	argv := strings.Fields(command)
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: %s names no program", ErrUnknownLock, process.ExecPrefix)
	}
	if err := proc.Supported(); err != nil {
		return nil, err
	}
	return func(cfg *pgx.ConnConfig, name string, opts lock.Options) (lock.Locker, error) {
		if cfg == nil {
			return nil, errors.New("pglock: no connection settings")
		}
		if opts.TTL < 0 {
			return nil, fmt.Errorf("%w, got %d", lock.ErrBadTTL, opts.TTL)
		}
		return &execLock{proc.Lock{Who: "pglock", Program: &proc.Program{Argv: argv, DirVar: process.EnvDir, Env: []string{
			process.EnvStore + "=postgres", EnvPostgres + "=" + ConnString(cfg),
			process.EnvLock + "=" + KeyString(Key(name, opts)), process.EnvTTL + "=" + strconv.Itoa(max(opts.TTL, 1))}}}}, nil
	}, nil
}

// ConnString is cfg as a libpq connection string: its host, port, user and
// database, and its session settings as options.
func ConnString(cfg *pgx.ConnConfig) string {
	s := fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", cfg.Host, cfg.Port, cfg.User, cfg.Database)
	var set []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range cfg.RuntimeParams {
			if !yield(k) {
				return
			}
		}
	}) {
		if k != "application_name" {
			set = append(set, "-c "+k+"="+cfg.RuntimeParams[k])
		}
	}
	if len(set) > 0 {
		s += " options='" + strings.Join(set, " ") + "'"
	}
	return s
}

// execLock drives one program on PostgreSQL: its proc.Lock is its
// process.Program (Stop, Continue, Kill, Starting, Close) and its Release.
type execLock struct{ proc.Lock }

// Acquire reads the grant's key, token and session from the program's
// answer.
func (l *execLock) Acquire(ctx context.Context) (lock.Grant, error) {
	return l.Lock.Acquire(ctx, func(a proc.Answer) (lock.Grant, error) {
		g := lock.Grant{Key: a.Fields["key"]}
		if _, err := ParseKey(g.Key); err != nil {
			return g, errors.New("granted without key=KEY, the advisory key it holds (the lab follows a PostgreSQL grant by it)")
		}
		if p := a.Fields["lease"]; p != "" {
			pid, err := strconv.ParseInt(p, 10, 64)
			if err != nil {
				return g, fmt.Errorf("granted with lease=%q, not a backend process id", p)
			}
			g.Lease = pid
		}
		return g, nil
	})
}

var _ process.Program = (*execLock)(nil)

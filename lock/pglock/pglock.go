package pglock

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/lock"
)

// Factory makes a Locker for the lock called name from a client's
// connection settings: its own link to the server, and the lab's
// idle-session timeouts (a session idle for a TTL is ended by the server:
// the lease a PostgreSQL lock rests on). The lock connects as it will.
type Factory = lock.Factory[*pgx.ConnConfig]

// Lock describes one PostgreSQL lock the lab runs by name.
type Lock = lock.Descriptor[*pgx.ConnConfig]

// ErrUnknownLock: no PostgreSQL lock of that name.
var ErrUnknownLock = errors.New("pglock: unknown lock")

// ViaPgBouncer is a lock's Via when its clients reach the server through
// PgBouncer in transaction mode.
const ViaPgBouncer = "pgbouncer (transaction mode)"

// locks are the PostgreSQL locks: the ones people use, then the known-bad.
var locks = []Lock{
	{Name: "pg-session", Factory: NewSession,
		About: "a session-level pg_advisory_lock on a connection of its own, kept alive while held; a sequence's nextval, taken while held, as its token"},
	{Name: "pg-try", Factory: NewTry,
		About: "pg_try_advisory_lock polled every 50 ms on a connection of its own, kept alive while held; a sequence's nextval as its token"},
	{Name: "pg-xact", Factory: NewXact,
		About: "pg_advisory_xact_lock held for a transaction: BEGIN, the lock, and COMMIT to release; kept alive while held",
		// Its token's nextval is taken in the transaction the lock holds
		// open: a server that crashes before the release commits never
		// wrote it to its WAL, and the sequence goes back.
		Weak: map[string]string{"server-restart": "tokens"}},
	{Name: "pg-idle", Factory: NewIdle,
		About: "pg-session that sends nothing while it holds: known-bad",
		Bad: &lock.Regression{
			Name: "pg-idle",
			Bug: "holds a session-level advisory lock and sends nothing while it holds it: a server that ends idle " +
				"sessions (idle_session_timeout, a pooler's or a proxy's idle timeout) ends the holder's session and " +
				"with it the lock while the holder still works, and the next client is granted",
			Link:      "https://www.postgresql.org/docs/current/runtime-config-client.html#GUC-IDLE-SESSION-TIMEOUT",
			Scenarios: []string{"slow-holder"},
			Check:     "lease-kept",
		}},
	{Name: "pg-deaf", Factory: NewDeaf,
		About: "pg-session whose holder is never told its session ended: known-bad",
		Bad: &lock.Regression{
			Name: "pg-deaf",
			Bug: "keeps its session alive while it holds, but when a keep-alive fails — the server ended the " +
				"session, and the lock with it — tells its holder nothing (Grant.Lost never closes): the holder " +
				"works on under a lock the next client now holds",
			Link:      "https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS",
			Scenarios: []string{"holder-told"},
			Check:     "told-lost",
		}},
	{Name: "pg-unlock-elsewhere", Factory: NewUnlockElsewhere,
		About: "pg-session released by a pg_advisory_unlock on another connection: known-bad",
		Bad: &lock.Regression{
			Name: "pg-unlock-elsewhere",
			Bug: "releases with pg_advisory_unlock on a connection other than the one that took the lock (a pool's " +
				"next connection, another thread's) and takes its answer for done: an advisory lock belongs to the " +
				"session that took it, the unlock frees nothing (it answers false), and the lock stays held by the " +
				"first session, which the application keeps in use — every later acquire waits",
			Link:      "https://www.postgresql.org/docs/current/functions-admin.html#FUNCTIONS-ADVISORY-LOCKS",
			Scenarios: []string{"contention"},
			Check:     "release",
		}},
	{Name: "pg-pooled", Factory: NewPooled, Via: ViaPgBouncer,
		About: "pg-session through PgBouncer in transaction mode: known-bad (pgbouncer needed)",
		Bad: &lock.Regression{
			Name: "pg-pooled",
			Bug: "takes a session-level advisory lock through a connection pooler in transaction mode (PgBouncer's " +
				"pool_mode = transaction): the pooler lends a server connection for each statement and takes it " +
				"back, so the lock is held by a server session that the next client's statements run on too, and " +
				"its pg_advisory_lock — re-entrant within a session — is granted at once, beside the holder",
			Link:      "https://www.pgbouncer.org/features.html#sql-feature-map-for-pooling-modes",
			Scenarios: []string{"contention"},
			Check:     "validity",
		}},
}

// Locks lists the PostgreSQL locks, the ones people use first, then the
// known-bad; a fresh slice each call.
func Locks() []Lock { return slices.Clone(locks) }

// Regressions are the known-bad PostgreSQL locks, each with the lessons
// that must catch it and the check that does.
func Regressions() []lock.Regression { return lock.Regressions(locks) }

// Find returns the PostgreSQL lock called name.
func Find(name string) (Lock, error) {
	l, ok := lock.Find(locks, name)
	if !ok {
		return Lock{}, fmt.Errorf("%w %q", ErrUnknownLock, name)
	}
	return l, nil
}

// Key is the advisory lock key of the lock called name under opts' prefix:
// a 64-bit hash of its path, as applications derive theirs.
func Key(name string, opts lock.Options) int64 {
	if opts.Prefix == "" {
		opts.Prefix = lock.DefaultPrefix
	}
	h := fnv.New64a()
	h.Write([]byte(opts.Prefix + name)) //nolint:errcheck // a hash takes every write
	return int64(h.Sum64())
}

// KeyString is a grant's Key: the advisory key, in decimal.
func KeyString(key int64) string { return strconv.FormatInt(key, 10) }

// ParseKey reads a grant's Key back.
func ParseKey(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }

// Sequence is the sequence whose nextval, taken while the lock is held, is
// a grant's fencing token: it only grows, whoever takes it.
func Sequence(key int64) string { return fmt.Sprintf("locklab_fence_%x", uint64(key)) }

// OnKey is the predicate on pg_locks of the advisory lock whose bigint key
// is the query's parameter param ("$1"): how PostgreSQL shows a bigint
// key, its high half in classid and its low half in objid.
func OnKey(param string) string {
	return "locktype = 'advisory' AND classid = ((" + param + "::bigint >> 32) & 4294967295)::oid" +
		" AND objid = (" + param + "::bigint & 4294967295)::oid AND objsubid = 1"
}

package pglock

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
)

// GuardedResource is the name Guarded is registered under: a counter in
// PostgreSQL written only while the writer's grant's session holds its
// advisory lock.
const GuardedResource = "pg-guarded"

func init() {
	resource.Register(resource.Kept{Name: GuardedResource, Store: "postgres",
		About: "a counter in PostgreSQL, written only while the grant's session holds the advisory lock (pg_locks)",
		Make:  func(key string) resource.Resource { return &Guarded{Key: key} }})
}

// table keeps the guarded counters, a row each.
const table = "locklab_counters"

// guardedWrite writes the counter $1 to $2 only while session $3 holds the
// advisory lock $4: the check and the write are one statement.
var guardedWrite = `INSERT INTO ` + table + ` (key, v)
SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM pg_locks WHERE granted AND pid = $3 AND ` + OnKey("$4") + `)
ON CONFLICT (key) DO UPDATE SET v = EXCLUDED.v`

// Guarded is a counter kept in the lock's own database, a row of table at
// Key, written by one statement that checks first that the grant's
// session (its Lease) still holds the grant's advisory lock (its Key) —
// the guard a PostgreSQL lock gives whatever its token.
type Guarded struct {
	Key string
}

// Name is "pg-guarded".
func (*Guarded) Name() string { return GuardedResource }

// Read reads the counter (zero if never written).
func (r *Guarded) Read(ctx context.Context, conn resource.Conn, _ lock.Grant) (int64, error) {
	p, err := pgConn(conn)
	if err != nil {
		return 0, err
	}
	if err := made(ctx, p); err != nil {
		return 0, err
	}
	var v int64
	err = p.QueryRow(ctx, "SELECT v FROM "+table+" WHERE key = $1", r.Key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return v, err
}

// Write sets the counter to value only while g's session holds g's lock.
func (r *Guarded) Write(ctx context.Context, conn resource.Conn, g lock.Grant, value int64) (resource.Written, error) {
	p, err := pgConn(conn)
	if err != nil {
		return resource.Written{}, err
	}
	key, err := ParseKey(g.Key)
	if err != nil || g.Lease == 0 {
		return resource.Written{}, fmt.Errorf("pglock: %s guards a write with the grant's advisory key and session, and "+
			"the grant names none (Grant.Key %q, Grant.Lease %d)", GuardedResource, g.Key, g.Lease)
	}
	if err := made(ctx, p); err != nil {
		return resource.Written{}, err
	}
	tag, err := p.Exec(ctx, guardedWrite, r.Key, value, g.Lease, key)
	if err != nil {
		return resource.Written{}, err
	}
	if tag.RowsAffected() == 0 {
		return resource.Written{Rejection: resource.LockLost, Reason: "the grant's session no longer holds the lock: it was lost"}, nil
	}
	return resource.Written{Accepted: true}, nil
}

// MakeCounters makes the table pg-guarded keeps its counters in, if no one
// has: a run makes it before its clients write, so that they do not race
// to make it.
func MakeCounters(ctx context.Context, p *pgxpool.Pool) error { return made(ctx, p) }

// made makes the counters' table, if no one has.
func made(ctx context.Context, p *pgxpool.Pool) error {
	_, err := p.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+table+" (key text PRIMARY KEY, v bigint NOT NULL)")
	if err != nil && !exists(err) {
		return err
	}
	return nil
}

// pgConn is conn as a pool of connections, an error if it is none.
func pgConn(conn resource.Conn) (*pgxpool.Pool, error) {
	p, ok := conn.(*pgxpool.Pool)
	if !ok || p == nil {
		return nil, fmt.Errorf("pglock: %s is kept in PostgreSQL: its reads and writes need a pool of connections, got %T", GuardedResource, conn)
	}
	return p, nil
}

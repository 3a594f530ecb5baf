package redislock

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
)

// GuardedResource is the name Guarded is registered under: a counter in
// Redis written only while the writer's lock key holds its grant's value.
const GuardedResource = "redis-guarded"

func init() {
	resource.Register(resource.Kept{Name: GuardedResource, Store: "redis",
		About: "a counter in Redis, written only while the writer's lock key holds its grant's value",
		Make:  func(key string) resource.Resource { return &Guarded{Key: key} }})
}

// guardedWrite sets KEYS[2] to ARGV[2] only while KEYS[1], the lock key,
// holds ARGV[1], the grant's value: the check and the write are one step
// on the server. It answers 1 if it wrote, 0 if the lock key was another's
// or gone.
var guardedWrite = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[2], ARGV[2])
  return 1
end
return 0`)

// Guarded is a counter kept in Redis at Key, on the lock's own primary,
// written by a script that checks first that the writer's lock key still
// holds its grant's value — the guard a Redis lock can give where it gives
// no fencing token. A Redlock's keys live on independent masters, none of
// which alone can guard a write: it protects no Guarded.
type Guarded struct {
	Key string
}

// Name is "redis-guarded".
func (*Guarded) Name() string { return GuardedResource }

// Read reads the counter (zero if never written). The guard on the write
// is what protects it: a read needs none.
func (r *Guarded) Read(ctx context.Context, conn resource.Conn, _ lock.Grant) (int64, error) {
	c, err := redisConn(conn)
	if err != nil {
		return 0, err
	}
	v, err := c.Get(ctx, r.Key).Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("redislock: counter at %s: %w", r.Key, err)
	}
	return n, nil
}

// Write sets the counter to value only while g's lock key holds g's value.
func (r *Guarded) Write(ctx context.Context, conn resource.Conn, g lock.Grant, value int64) (resource.Written, error) {
	c, err := redisConn(conn)
	if err != nil {
		return resource.Written{}, err
	}
	if g.Key == "" || g.Value == "" {
		return resource.Written{}, fmt.Errorf("redislock: %s guards a write with the grant's key and value, and the grant "+
			"names none (Grant.Key %q, Grant.Value %q)", GuardedResource, g.Key, g.Value)
	}
	n, err := guardedWrite.Run(ctx, c, []string{g.Key, r.Key}, g.Value, value).Int64()
	if err != nil {
		return resource.Written{}, err
	}
	if n == 0 {
		return resource.Written{Rejection: resource.LockLost, Reason: "lock key gone or another's: the lock was lost"}, nil
	}
	return resource.Written{Accepted: true}, nil
}

// redisConn is conn as a Redis client, an error if it is none.
func redisConn(conn resource.Conn) (*redis.Client, error) {
	c, ok := conn.(*redis.Client)
	if !ok || c == nil {
		return nil, fmt.Errorf("redislock: %s is kept in Redis: its reads and writes need a Redis client, got %T", GuardedResource, conn)
	}
	return c, nil
}

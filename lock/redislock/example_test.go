package redislock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/lock/redislock"
)

// redis-setnx on a real primary: the grant carries the random value its
// release compares, and a fencing token taken with it.
func Example() {
	ctx := context.Background()
	s, err := redisd.StartReplicated(ctx, 1, redisd.Options{})
	if err != nil {
		fmt.Println(err) // redisd.ErrNotInstalled where redis-server is missing
		return
	}
	defer s.Close()
	link, _ := s.PrimaryLink()
	c := redis.NewClient(&redis.Options{Addr: link.Addr()})
	defer c.Close()

	l, _ := redislock.NewSetNX([]*redis.Client{c}, "orders", redislock.Options{TTL: 10 * time.Second})
	g, _ := l.Acquire(ctx)
	fmt.Println("token", g.Token, "release:", l.Release(ctx, g), "again:", l.Release(ctx, g))
}

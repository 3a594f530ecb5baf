package redisd_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster/redisd"
)

// A Redis lock held on a primary whose write never reached its replica:
// the primary dies, the replica is promoted, and a second client is
// granted the same lock.
//
//	c1 ──link── r1 (primary) ──╳── r2      SET lock c1 NX: r2 never gets it
//	             r1 killed; r2 promoted     c2: SET lock c2 NX succeeds
func Example_failover() {
	ctx := context.Background()
	s, err := redisd.StartReplicated(ctx, 1, redisd.Options{})
	if err != nil {
		fmt.Println(err) // redisd.ErrNotInstalled where redis-server is missing
		return
	}
	defer s.Close()
	link, _ := s.PrimaryLink()
	c1 := redis.NewClient(&redis.Options{Addr: link.Addr()})
	defer c1.Close()

	s.Replication(1).Cut()
	ok1, _ := c1.SetNX(ctx, "lock", "c1", 10*time.Second).Result()
	s.Kill(0)
	s.Replication(1).Heal()
	_ = s.Promote(ctx, 1)

	c2 := redis.NewClient(&redis.Options{Addr: link.Addr()}) // reaches the new primary
	defer c2.Close()
	ok2, _ := c2.SetNX(ctx, "lock", "c2", 10*time.Second).Result()
	fmt.Println("c1 granted:", ok1, "c2 granted:", ok2)
}

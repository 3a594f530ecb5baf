package redislock_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/lock"
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

	l, _ := redislock.NewSetNX([]*redis.Client{c}, "orders", lock.Options{TTL: 10})
	g, _ := l.Acquire(ctx)
	fmt.Println("token", g.Token, "release:", l.Release(ctx, g), "again:", l.Release(ctx, g))
}

// A Redis lock of your own, in any language, as a program: it is told its
// link (LOCKLAB_REDIS), its key (LOCKLAB_LOCK) and the TTL in seconds, and
// names the key and the value it wrote there. This one only pretends.
func ExampleExec() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	program := filepath.Join(dir, "my-lock.sh")
	os.WriteFile(program, []byte(`while read cmd; do
  case $cmd in acquire) echo "granted key=$LOCKLAB_LOCK value=v1" ;; release) echo released ;; esac
done`), 0o644)
	f, err := redislock.Exec("sh " + program) // split on spaces
	if err != nil {
		fmt.Println(err) // not on Linux
		return
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}) // a real program dials it
	defer c.Close()
	l, _ := f([]*redis.Client{c}, "orders", lock.Options{TTL: 10})
	defer l.Close()
	g, _ := l.Acquire(context.Background())
	fmt.Println(g.Key, g.Value, "release:", l.Release(context.Background(), g))
	// Output: locklab/locks/orders v1 release: <nil>
}

package follow_test

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/run/follow"
)

// A store's watch embeds a Grant; its sweep marks what it finds.
func Example() {
	type keyWatch struct {
		follow.Grant
		key string
	}
	var watched follow.List[*keyWatch]
	watched.Add(&keyWatch{Grant: follow.Grant{Client: "c1", Token: 1, Lease: 1, LastAlive: time.Now()}, key: "lock"})

	// The sweep: the key is gone, by its expiry.
	for _, w := range watched.Pending() {
		w.Lock()
		end := w.Lose(time.Second, time.Time{})
		w.Unlock()
		fmt.Println(end.Client, "lost lease", end.Lease, "of key", w.key)
	}
	fmt.Println("still followed:", len(watched.Pending()))
	// Output:
	// c1 lost lease 1 of key lock
	// still followed: 0
}

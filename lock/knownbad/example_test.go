package knownbad_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/knownbad"
)

// busy is a lock someone else holds: Acquire waits until its context ends.
type busy struct{}

func (busy) Acquire(ctx context.Context) (lock.Grant, error) {
	select {
	case <-ctx.Done():
		return lock.Grant{}, ctx.Err()
	case <-time.After(200 * time.Millisecond): // freed at last: granted
		return lock.Grant{Key: "lock", Token: 1}, nil
	}
}
func (busy) Release(context.Context, lock.Grant) error { return nil }
func (busy) Close() error                              { return nil }

// A caller's deadline passes; the lock goes on waiting and grants the lock
// to a caller that has moved on.
func ExampleIgnoringDeadline() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := busy{}.Acquire(ctx)
	fmt.Println("as it should:", errors.Is(err, context.DeadlineExceeded))
	g, err := knownbad.IgnoringDeadline(busy{}).Acquire(ctx)
	fmt.Println("ignoring its deadline:", g.Token, err)
	// Output:
	// as it should: true
	// ignoring its deadline: 1 <nil>
}

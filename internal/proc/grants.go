package proc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/locklab/locklab/lock"
)

// AnswerError is the error an "error [CLASS] MESSAGE" answer stands for,
// on any store: expired is lock.ErrSessionExpired, not-held
// lock.ErrNotHeld, unavailable what unavailable makes of the message (the
// store client's own error for it, so that the lab reads it as its own
// client's would be read), and anything else an error of the program's
// words, after who ("lock", "redislock").
func AnswerError(msg, who string, unavailable func(string) error) error {
	class, rest, _ := strings.Cut(msg, " ")
	switch class {
	case "expired":
		return fmt.Errorf("%w: %s", lock.ErrSessionExpired, rest)
	case "not-held":
		return fmt.Errorf("%w: %s", lock.ErrNotHeld, rest)
	case "unavailable":
		return unavailable(rest)
	case "":
		msg = "(no message)"
	}
	return errors.New(who + ": " + msg)
}

// Latest is the latest grant a program gave, zero before the first and
// once it is released. A program's "release" means "the lock I hold now":
// Release passes on only a release of the latest grant.
type Latest struct {
	mu sync.Mutex
	g  lock.Grant
}

// Set records g, just granted.
func (l *Latest) Set(g lock.Grant) {
	l.mu.Lock()
	l.g = g
	l.mu.Unlock()
}

// Get is the latest grant, zero if none stands.
func (l *Latest) Get() lock.Grant {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.g
}

// Release asks the program to release (release) if g is the latest grant —
// the same key, token and value — and forgets it once the program did; a
// release of an older grant, or of none, is refused as not held and never
// reaches the program.
func (l *Latest) Release(ctx context.Context, g lock.Grant, release func(context.Context) error) error {
	latest := l.Get()
	if latest == (lock.Grant{}) || g.Key != latest.Key || g.Token != latest.Token || g.Value != latest.Value {
		return lock.ErrNotHeld
	}
	if err := release(ctx); err != nil {
		return err
	}
	l.mu.Lock()
	if l.g == latest {
		l.g = lock.Grant{}
	}
	l.mu.Unlock()
	return nil
}

package proc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/locklab/locklab/lock"
)

// ErrUnavailable is what a program's "error unavailable MESSAGE" answer
// wraps where its store's client has no error of its own for it: the
// connection broke, and the outcome is unknown.
var ErrUnavailable = errors.New("unavailable (the connection broke, outcome unknown)")

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
// reaches the program. A program that had exited by itself (ErrExited)
// gave up what it held with its process: not held, saying why.
func (l *Latest) Release(ctx context.Context, g lock.Grant, release func(context.Context) error) error {
	latest := l.Get()
	if latest == (lock.Grant{}) || g.Key != latest.Key || g.Token != latest.Token || g.Value != latest.Value {
		return lock.ErrNotHeld
	}
	if err := release(ctx); errors.Is(err, ErrExited) {
		l.Set(lock.Grant{})
		return fmt.Errorf("%w: %w", lock.ErrNotHeld, err) // it gave the lock up with its process
	} else if err != nil {
		return err
	}
	l.mu.Lock()
	if l.g == latest {
		l.g = lock.Grant{}
	}
	l.mu.Unlock()
	return nil
}

// Lock is a lock run as a program on a store whose unavailable answer is
// an error of the lab's own words: its program, its latest grant and its
// release. A store's exec lock embeds it and adds Acquire, reading its
// grant from the program's answer (Expect with AnswerErr).
type Lock struct {
	*Program
	// Who names the package in its errors ("redislock").
	Who   string
	Grant Latest
}

// AnswerErr is the error an "error [CLASS] MESSAGE" answer stands for.
func (l *Lock) AnswerErr(msg string) error {
	return AnswerError(msg, l.Who, func(rest string) error { return fmt.Errorf("%s: %w: %s", l.Who, ErrUnavailable, rest) })
}

// Release releases the latest grant; an older one is refused as not held
// and never reaches the program, whose release means "the lock I hold now".
func (l *Lock) Release(ctx context.Context, g lock.Grant) error {
	return l.Grant.Release(ctx, g, func(ctx context.Context) error {
		_, err := l.Program.Expect(ctx, "release", "released", l.AnswerErr)
		return err
	})
}

// Acquire asks the program for the lock and reads its grant: read says
// what is wrong with the answer's fields for this store (nil: nothing);
// token=N, if given, must be a positive number; tells=lost gives the grant
// a Lost (Program.Tells).
func (l *Lock) Acquire(ctx context.Context, read func(Answer) (lock.Grant, error)) (lock.Grant, error) {
	a, err := l.Program.Expect(ctx, "acquire", "granted", l.AnswerErr)
	if err != nil {
		return lock.Grant{}, err
	}
	g, err := read(a)
	if err != nil {
		return lock.Grant{}, fmt.Errorf("%s: %s %w: %q", l.Who, l.Program.Argv[0], err, a.Line)
	}
	if s := a.Fields["token"]; s != "" {
		if g.Token, err = strconv.ParseInt(s, 10, 64); err != nil || g.Token <= 0 {
			return lock.Grant{}, fmt.Errorf("%s: %s: token in %q is no positive number", l.Who, l.Program.Argv[0], a.Line)
		}
	}
	if g.Lost, err = l.Program.Tells(a); err != nil {
		return lock.Grant{}, fmt.Errorf("%s: %s: %w", l.Who, l.Program.Argv[0], err)
	}
	l.Grant.Set(g)
	return g, nil
}

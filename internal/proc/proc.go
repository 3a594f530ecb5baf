package proc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// StartupAllowance is how much longer than a command's own deadline a
// program is waited for after it starts: starting an interpreter, a JVM or
// a race-built binary takes seconds, and that is not the lock's waiting.
// A program that prints a comment line as soon as it is up ("# ready")
// ends its start-up there.
const StartupAllowance = 10 * time.Second

// StopAllowance is how long a program has to leave once it is told to stop
// (SIGTERM, then SIGKILL of its group half that time later).
const StopAllowance = 6 * time.Second

// MaxAnswer is the longest line a program may print: an answer is a few
// words.
const MaxAnswer = 64 << 10

// startupKey marks a context made by WithStartup: its value is the
// command's own time.
type startupKey struct{}

// WithStartup returns ctx with a deadline own plus StartupAllowance from
// now, for a command to a Program that is Starting: once the program says
// it is up, the command has own from then.
func WithStartup(ctx context.Context, own time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithValue(ctx, startupKey{}, own), own+StartupAllowance)
}

// startupOwn is the command's own time of a context made by WithStartup.
func startupOwn(ctx context.Context) (time.Duration, bool) {
	own, ok := ctx.Value(startupKey{}).(time.Duration)
	return own, ok
}

// Answer is one line a program answered, split: "verb k=v … message".
type Answer struct {
	Verb   string
	Fields map[string]string
	// Msg is the rest after the first word that is no k=v.
	Msg string
	// Line is the line as printed.
	Line string
}

// Parse splits a line into an Answer.
func Parse(line string) Answer {
	a := Answer{Fields: map[string]string{}, Line: line}
	words := strings.Fields(line)
	if len(words) == 0 {
		return a
	}
	a.Verb = words[0]
	for i, w := range words[1:] {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			a.Msg = strings.Join(words[1+i:], " ")
			break
		}
		a.Fields[k] = v
	}
	return a
}

// Program is a lock's program: started on the first command, and again on
// the first command after it ended. Its methods may be called from several
// goroutines; commands one at a time.
type Program struct {
	// Argv is the program and its arguments.
	Argv []string
	// Env are the variables it gets beside the lab's own environment.
	Env []string
	// Setup, if set, prepares its own directory before it starts.
	Setup func(dir string) error
	// DirVar names the variable that tells it its own directory, which is
	// also first on its PATH.
	DirVar string

	mu sync.Mutex
	p  *running
}

// truncate shortens a line for a message.
func truncate(line string) string {
	if len(line) > 200 {
		return line[:200] + "…"
	}
	return line
}

// tool is a command put on the PATH of every program.
type tool struct {
	name string
	link func(dir string) (env string, err error)
}

var (
	toolsMu sync.Mutex
	tools   []tool
)

// OfferTool puts a command called name on the PATH of every program
// started from then on, in the program's own directory: link makes it
// there and returns the environment entry the program needs for it (""
// for none). Offering a name again replaces its link.
func OfferTool(name string, link func(dir string) (env string, err error)) {
	toolsMu.Lock()
	defer toolsMu.Unlock()
	for i := range tools {
		if tools[i].name == name {
			tools[i].link = link
			return
		}
	}
	tools = append(tools, tool{name, link})
}

// Offered reports whether a tool called name is offered.
func Offered(name string) bool {
	toolsMu.Lock()
	defer toolsMu.Unlock()
	for _, t := range tools {
		if t.name == name {
			return true
		}
	}
	return false
}

// linkTools makes every offered tool in dir and returns the environment
// entries they need.
func linkTools(dir string) ([]string, error) {
	toolsMu.Lock()
	ts := append([]tool(nil), tools...)
	toolsMu.Unlock()
	var env []string
	for _, t := range ts {
		e, err := t.link(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		if e != "" {
			env = append(env, e)
		}
	}
	return env, nil
}

// ErrExited: the program had exited by itself — neither asked to nor
// stopped by the lab — before it was asked a command. Whatever it held it
// gave up with its process: a library may end its process when it learns
// its lock was lost, a fail-stop design. The next command starts it again.
var ErrExited = errors.New("lock: the program exited by itself")

// Expect asks command and returns the answer if its verb is want. An
// "error" answer is the error errAnswer makes of its message; any other
// line is no answer of the protocol (see Stray).
func (l *Program) Expect(ctx context.Context, command, want string, errAnswer func(msg string) error) (Answer, error) {
	a, err := l.Ask(ctx, command)
	switch {
	case err != nil:
		return Answer{}, err
	case a.Verb == want:
		return a, nil
	case a.Verb == "error":
		return Answer{}, errAnswer(a.Msg)
	}
	return Answer{}, l.Stray(command, a)
}

// AddEnv adds env to what the program starts with, from its next start on
// (process.Environ).
func (l *Program) AddEnv(env ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.Env = append(slices.Clip(l.Env), env...)
}

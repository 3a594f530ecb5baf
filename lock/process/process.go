package process

import (
	"context"
	"time"

	"github.com/locklab/locklab/internal/proc"
)

// ExecPrefix starts the name of a lock run as a process: "exec:./my-lock",
// or "exec:python3 my_lock.py" (the rest is split on spaces).
const ExecPrefix = "exec:"

// The process protocol. The lab starts the program once per client — and
// again after it was stopped or crashed — in a process group of its own,
// with these variables set and a directory of its own first on its PATH,
// holding every offered tool (OfferTool: etcdctl, when the program serves
// it, see package lock/etcdctl):
const (
	// EnvEndpoints is the client's own link to the cluster (one URL): cuts,
	// delays and pauses of the client apply to what goes through it.
	EnvEndpoints = "LOCKLAB_ENDPOINTS"
	// EnvLock is the lock's name, unique to the run: use it as the key
	// prefix of the lock.
	EnvLock = "LOCKLAB_LOCK"
	// EnvTTL is the lease TTL in seconds.
	EnvTTL = "LOCKLAB_TTL"
	// EnvDir is a directory of the process's own, removed once it has
	// ended; it is also first on its PATH.
	EnvDir = "LOCKLAB_DIR"
	// EnvStore is the store the lock is on, as the store's lock package
	// names it when it starts the program (etcdlock, redislock, zklock:
	// each its own name, and the variables that reach its servers).
	EnvStore = "LOCKLAB_STORE"
)

// StartupAllowance is how much longer than an operation's own deadline the
// lab waits for a process lock's first answer after its process starts:
// starting an interpreter through a version shim, a JVM or a race-built
// binary takes seconds, five at once longer still, and that is not the
// lock's waiting. A process that has printed nothing by then is reported
// as such ("printed nothing within … of starting"). A program that prints
// a comment line as soon as it is up ("# ready") ends its start-up there:
// from then on its silence is its waiting, with the operation's own time.
const StartupAllowance = proc.StartupAllowance

// WithStartup returns ctx with a deadline own plus StartupAllowance from
// now, for a command to a Process that is Starting: once the process says
// it is up (a comment line), the command has own from then, and what is
// left of the allowance is not waited for.
func WithStartup(ctx context.Context, own time.Duration) (context.Context, context.CancelFunc) {
	return proc.WithStartup(ctx, own)
}

// StopAllowance is how much longer than an acquire's deadline a lock run
// as a process may take to answer: when the deadline passes, the lab stops
// the process (SIGTERM; SIGKILL of its group if anything of it is left
// half that time later), and its Acquire returns the context's error once
// the process is gone. A program that gives up at once leaves at once.
const StopAllowance = proc.StopAllowance

// Lost is the line a program prints, unasked, once it learns that a grant
// it answered with tells=lost (TellsLost) is gone — its lease ended, its
// key expired or is another's: that grant's Grant.Lost. It answers no
// command. A program that ends itself while it holds such a grant has
// told too; a grant answered without tells= has no Lost.
const Lost = proc.Lost

// TellsLost is the value of the tells= field by which a grant promises
// Lost: "granted key=KEY tells=lost".
const TellsLost = proc.TellsLost

// MaxAnswer is the longest line a lock process may print: an answer is a
// few words.
const MaxAnswer = proc.MaxAnswer

// Program is a Locker that runs as a program of its own, which the lab
// freezes for a pause: the lab stops it at the moment it pauses the client
// (its link is cut too) and continues it when the client resumes. A crash
// of the client kills it.
type Program interface {
	// Stop freezes the process (SIGSTOP to its group).
	Stop() error
	// Continue undoes Stop (SIGCONT).
	Continue() error
	// Kill ends the process at once, with no chance to clean up (SIGKILL
	// to its group), and returns once its group is gone. The next
	// command starts a new one.
	Kill() error
	// Starting reports whether the next command will be answered by a
	// process that has answered none yet — not started, or started and
	// silent so far, not even saying it is up — whose answer may take its
	// start-up time too (see StartupAllowance and WithStartup).
	Starting() bool
}

// Environ is a Program whose environment the lab can add to before it
// starts (again, after a crash): a run that moves clients' own clocks
// preloads its clock shim so.
type Environ interface {
	AddEnv(env ...string)
}

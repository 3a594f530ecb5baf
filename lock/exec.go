package lock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
	// EnvStore is the store the lock is on: "etcd" here (package
	// lock/redislock runs programs on Redis with "redis").
	EnvStore = "LOCKLAB_STORE"
)

// The lab writes one command per line on the program's standard input and
// reads one answer per command from its standard output:
//
//	acquire  →  granted key=KEY [token=N] [lease=ID]   or   error [CLASS] MESSAGE
//	release  →  released                               or   error [CLASS] MESSAGE
//
// The key is the etcd key that holds the lock; the token, if not given, is
// read from it (its create revision: larger for every later grant), and so
// is the lease it rests on. CLASS is expired (the client's lease is gone),
// not-held (there is nothing to release) or unavailable (the connection
// broke: what happened is unknown). Lines starting with # are comments; a
// program that prints one as soon as it has started ("# ready") tells the
// lab it is up, so that its silence after is taken for waiting (see
// StartupAllowance).
// On SIGTERM — also sent if the lab dies without stopping it — the program
// stops waiting, gives up a lock it holds, ends what it started and exits;
// when its standard input closes, it releases and exits. A pause is SIGSTOP
// of its process group (and a cut of its link), a resume SIGCONT.

// Process is a Locker that runs as a process of its own, which the lab
// freezes for a pause: the lab stops it at the moment it pauses the client
// (its link is cut too) and continues it when the client resumes. A crash
// of the client kills it.
type Process interface {
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

// MaxAnswer is the longest line a lock process may print: an answer is a
// few words.
const MaxAnswer = proc.MaxAnswer

// Exec returns the factory of the lock run by command (a program and its
// arguments, split on spaces). Locks run as processes need Linux; elsewhere
// Exec says so.
func Exec(command string) (EtcdFactory, error) {
	argv := strings.Fields(command)
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: %s names no program", ErrUnknownLock, ExecPrefix)
	}
	if err := proc.Supported(); err != nil {
		return nil, err
	}
	return execFactory(argv, nil), nil
}

// OfferTool puts a command called name on the PATH of every lock process
// started from then on, in the process's own directory (EnvDir): link makes
// it there and returns the environment entry the process needs for it (""
// for none). Package lock/etcdctl's Serve offers etcdctl this way, so that
// a program implementing a Locker does not link etcdctl in. Offering a
// name again replaces its link.
func OfferTool(name string, link func(dir string) (env string, err error)) {
	proc.OfferTool(name, link)
}

// answerErr is the error an "error [CLASS] MESSAGE" answer stands for.
func answerErr(msg string) error {
	class, rest, _ := strings.Cut(msg, " ")
	switch class {
	case "expired":
		return fmt.Errorf("%w: %s", ErrSessionExpired, rest)
	case "not-held":
		return fmt.Errorf("%w: %s", ErrNotHeld, rest)
	case "unavailable":
		return status.Error(codes.Unavailable, rest)
	}
	if msg == "" {
		msg = "(no message)"
	}
	return errors.New("lock: " + msg)
}

// parseInt reads a decimal number, or hexadecimal with 0x; "" is zero.
func parseInt(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	return strconv.ParseInt(s, 0, 64)
}

//go:embed etcdctl-lock.sh
var etcdctlScript []byte

// NewEtcdctl returns the etcdctl lock: etcd's own `etcdctl lock` command,
// run by a shell script over the process protocol (etcdctl-lock.sh), one
// etcdctl process per grant. It needs the program to serve etcdctl (see
// package etcdctl).
//
// One departure from Locker's contract, etcdctl's own: an acquire stopped
// while etcdctl's first Txn is in flight (a cancelled ctx stops the process)
// leaves that Txn's key until its lease lapses, within the TTL, since etcdctl
// exits without revoking its session and names its lease nowhere.
func NewEtcdctl(client *clientv3.Client, name string, opts Options) (Locker, error) {
	if !proc.Offered("etcdctl") {
		return nil, fmt.Errorf("lock: etcdctl: this program does not serve etcdctl (call etcdctl.Serve, package lock/etcdctl, first thing in main or TestMain)")
	}
	return execFactory([]string{"sh", "-c", `exec sh "$` + EnvDir + `/etcdctl-lock.sh"`}, func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "etcdctl-lock.sh"), etcdctlScript, 0o644)
	})(client, name, opts)
}

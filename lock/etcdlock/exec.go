package etcdlock

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
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

// Exec returns the factory of the lock run by command (a program and its
// arguments, split on spaces). Locks run as processes need Linux; elsewhere
// Exec says so.
func Exec(command string) (Factory, error) {
	argv := strings.Fields(command)
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: %s names no program", lock.ErrUnknownLock, process.ExecPrefix)
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

// answerErr is the error an "error [CLASS] MESSAGE" answer stands for: an
// unavailable store is etcd's own Unavailable, as its client would say it.
func answerErr(msg string) error {
	return proc.AnswerError(msg, "lock", func(rest string) error { return status.Error(codes.Unavailable, rest) })
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
func NewEtcdctl(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	if !proc.Offered("etcdctl") {
		return nil, fmt.Errorf("lock: etcdctl: this program does not serve etcdctl (call etcdctl.Serve, package lock/etcdctl, first thing in main or TestMain)")
	}
	return execFactory([]string{"sh", "-c", `exec sh "$` + process.EnvDir + `/etcdctl-lock.sh"`}, func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "etcdctl-lock.sh"), etcdctlScript, 0o644)
	})(client, name, opts)
}

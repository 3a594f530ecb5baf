package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster/clusterproc"
	"github.com/locklab/locklab/lock/etcdctl"
	"github.com/locklab/locklab/scenarios"
)

// Exit statuses.
const (
	exitOK        = 0 // every verdict equals its expectation
	exitMismatch  = 1 // a verdict differs from its expectation
	exitUsage     = 2 // bad usage or bad input
	exitUndecided = 3 // a checker could not decide
)

// usageError is bad usage or input: one line, exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

const usage = `locklab — distributed locks on etcd, under faults, checked.

Usage:
  locklab run     [--scenario S|all] [--lock L|all] [--resource R|all] [--seed N] [--runs K] [--ttl 1]
                  [--script FILE,…] [--parallel N] [--members 3] [--endpoints a,b,c [--cacert F --cert F --key F --user U --password P]]
                  [--redis host:port|redis://…[,…]] [--store etcd|redis|redlock] [--expect pass] [--shard K/N] [--out DIR] [--verbose]
  locklab check   HISTORY.jsonl [--out DIR]   check a recorded history offline (--out: its report)
  locklab replay  RUN_DIR [--lock L | --allow-exec] [--out DIR]
                                              re-run a configuration's recorded schedule, compare verdicts
  locklab bench   [--lock L|all] [--clients 1,10,100] [--duration 3s] [--work 0s] [--ttl 5] [--fsync]
                  [--in-process] [--members 3 | --endpoints …] [--out DIR]   locks/s, latency, wake-ups, CPU
  locklab explore [--lock L] [--resource R] [--cases 50] [--seed N] [--steps 10] [--faults all|pause,cut,…] [--ttl 1]
                  [--shrink-time 2m] [--shard K/N] [--members 3 | --endpoints …] [--out FILE]
                                              draw scripts until one breaks R, shrink it, write it
  locklab merge   --out DIR RUN_DIR…          one report of the shards of a campaign (run --shard K/N)
                  (or the .results.json files of an exploration's shards: explore --shard K/N)
  locklab lab     [--lock L] [--ttl 1] [--open] [--members 3 | --endpoints …]
                                              the live lab: drive a real cluster from a web page
  locklab list                                scenarios, locks, resources, faults
  locklab explain SCENARIO|LOCK               the lesson, step by step; a lock's story
  locklab version                             the version, and the Go toolchain it was built with

Exit status: 0 every verdict as expected; 1 one is not (a FAIL where a pass
was documented or the reverse, an ERROR, too little progress); 2 bad usage or
input; 3 a checker could not decide, the run was interrupted, or every
configuration was skipped (nothing was tested).
"locklab COMMAND --help" prints a command's flags.
`

func main() {
	clusterproc.Serve() // the child process of an embedded cluster (bench) never returns
	etcdctl.Serve()     // the etcdctl of a lock run as a process (the etcdctl lock) never returns
	if !slices.ContainsFunc(os.Args[1:], func(a string) bool { return a == "--verbose" || a == "-verbose" }) {
		// go-redis logs every failed dial; a cut link is the lab's doing.
		redis.SetLogger(silent{})
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal stops the command cleanly; a second one, should
		// that take too long, ends the process as signals do by default.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// revision is the VCS revision the binary was built from, as the build
// info records it ("+modified" for a tree with changes), or says it is
// not recorded (go run and test binaries record none).
func revision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "revision not recorded"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if rev == "" {
		return "revision not recorded"
	}
	return "revision " + rev + modified
}

// silent is a go-redis logger that says nothing (see --verbose).
type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}

// run dispatches a command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var code int
	var err error
	switch args[0] {
	case "run":
		code, err = cmdRun(ctx, args[1:], stdout, stderr)
	case "check":
		code, err = cmdCheck(args[1:], stdout)
	case "replay":
		code, err = cmdReplay(ctx, args[1:], stdout, stderr)
	case "bench":
		code, err = cmdBench(ctx, args[1:], stdout, stderr)
	case "explore":
		code, err = cmdExplore(ctx, args[1:], stdout, stderr)
	case "merge":
		code, err = cmdMerge(args[1:], stdout)
	case "lab":
		code, err = cmdLab(ctx, args[1:], stdout)
	case "list":
		code, err = cmdList(args[1:], stdout)
	case "explain":
		code, err = cmdExplain(args[1:], stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	case "version", "--version", "-v":
		if len(args) > 1 && isHelp(args[1]) {
			fmt.Fprint(stdout, "Usage: locklab version\n\nPrints locklab's version, the commit and Go toolchain it was built from, and the platform.\n")
			return exitOK
		}
		if len(args) > 1 {
			err = usagef("version: unexpected argument %q", args[1])
			break
		}
		fmt.Fprintf(stdout, "locklab %s (%s, %s, %s/%s)\n", scenarios.Version, revision(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return exitOK
	default:
		err = usagef("unknown command %q (commands: run, check, replay, bench, explore, merge, lab, list, explain, version)", args[0])
	}
	var help helpError
	if errors.As(err, &help) {
		help.print(stdout)
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "locklab:", err)
		var ue usageError
		if errors.As(err, &ue) {
			return exitUsage
		}
		if code == 0 {
			code = exitUsage
		}
	}
	return code
}

// isHelp reports whether arg asks for a command's help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

package testsize

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Alone waits until no other test package of this checkout that called
// Alone is running, and keeps it so until this test binary exits. Call it
// from TestMain, after anything that makes the binary serve as another
// program, before the tests; it parses the command line.
//
// It is for the packages whose tests run whole lessons — real servers,
// 1 s leases, a verdict on how the lease was kept. go test ./... runs two
// packages at once on two cores; two such packages side by side (the
// catalog's beside a ZooKeeper ensemble's JVMs) starve each other's
// keep-alives, the lab rightly calls the runs spoiled, and tests that must
// see a verdict see none. One at a time, each has the machine go test
// leaves it, and the packages that do not call Alone keep running beside.
//
// The lock is the kernel's (flock) on the module's root directory: nothing
// is written, and it ends with the process however it ends. Where the
// directory cannot be found or locked (another OS, an odd checkout), the
// package runs at once, as it would without Alone.
func Alone() {
	if os.Getenv(aloneEnv) != "" {
		return // a process of a package that holds the turn: its child, a test run again apart
	}
	if !flag.Parsed() {
		flag.Parse() // testing.Verbose needs the command line
	}
	root, err := moduleRoot()
	if err != nil {
		return
	}
	began := time.Now()
	f, err := lockDir(root)
	if err != nil {
		if testing.Verbose() {
			fmt.Printf("testsize: not alone: %v\n", err)
		}
		return
	}
	held = f // held until the process exits
	// The package's own children (a test run again in a child process, a
	// lock run as this binary) share its turn: asking for it, they would
	// wait for their parent for ever.
	os.Setenv(aloneEnv, "1") //nolint:errcheck // at worst a child waits its turn as its own
	if waited := time.Since(began); testing.Verbose() && waited > time.Second {
		fmt.Printf("testsize: waited %s for the other lesson packages\n", waited.Round(time.Second))
	}
}

// aloneEnv marks a process whose package holds the turn, and its
// children.
const aloneEnv = "LOCKLAB_TEST_TURN"

// held keeps the locked directory open, and so locked, for the process's
// life.
var held *os.File

// moduleRoot is the nearest directory at or above the working directory
// (a test's is its package's) holding a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = up
	}
}

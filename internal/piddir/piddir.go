package piddir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Root starts the name of every directory Make makes.
const Root = "locklab-"

// swept remembers the parents this process has swept.
var swept sync.Map

// Make creates a new directory in parent (os.TempDir() when "") named
// Root, kind (a word: "cluster", "exec"), this process's number and a
// random number: "locklab-cluster-4242-1188893000". The first call for a
// parent removes, before it, every such directory of any kind whose
// process no longer runs (see Sweep).
func Make(parent, kind string) (string, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	if _, done := swept.LoadOrStore(parent, true); !done {
		Sweep(parent)
	}
	return os.MkdirTemp(parent, Root+kind+"-"+strconv.Itoa(os.Getpid())+"-")
}

// Sweep removes the directories of parent named as Make names them whose
// process no longer runs. A directory named otherwise — by an older
// locklab, or by hand — is left alone, and so is one whose process runs or
// cannot be told dead (on systems where Sweep cannot ask, nothing is
// removed).
func Sweep(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, ok := owner(e.Name())
		if ok && e.IsDir() && pid != os.Getpid() && dead(pid) {
			os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

// owner reads the process number out of a name Make gave.
func owner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, Root)
	if !ok {
		return 0, false
	}
	kind, rest, ok := strings.Cut(rest, "-")
	if !ok || kind == "" || strings.Trim(kind, "abcdefghijklmnopqrstuvwxyz") != "" {
		return 0, false
	}
	num, random, ok := strings.Cut(rest, "-")
	if !ok || num == "" || random == "" {
		return 0, false
	}
	if _, err := strconv.ParseUint(random, 10, 64); err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(num)
	return pid, err == nil && pid > 0
}

//go:build unix

package testsize

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// A directory locked by one holder cannot be locked by another until the
// first lets it go.
func TestALockedDirectoryWaitsForItsHolder(t *testing.T) {
	dir := t.TempDir()
	first, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != unix.EWOULDBLOCK {
		t.Fatalf("a second holder locked the directory beside the first: %v", err)
	}
	first.Close()
	if err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("the directory stayed locked after its holder let it go: %v", err)
	}
}

// The module's root is found from a package's directory.
func TestTheModuleRootHoldsGoMod(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root + "/go.mod"); err != nil {
		t.Fatal(err)
	}
}

package zkd

import (
	"os"
	"path/filepath"
	"strings"
)

// logHeader is the size of a transaction log's file header: its magic,
// its version and its database's id (ZooKeeper's FileHeader).
const logHeader = 16

// dropTornLogs removes the transaction logs in a server's data directory
// whose header a kill cut short. ZooKeeper 3.8 creates a log file at its
// first transaction and writes its header after; killed in between, the
// file holds no transaction, and the server refuses to start on it ("Unable
// to load database on disk": an EOFException reading the header). Removing
// such a file loses nothing and is what an operator does; a log with its
// header whole is never touched (a transaction cut short is ZooKeeper's to
// recover).
func dropTornLogs(dataDir string) error {
	logs, err := filepath.Glob(filepath.Join(dataDir, "version-2", "log.*"))
	if err != nil {
		return err
	}
	for _, l := range logs {
		fi, err := os.Stat(l)
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() && fi.Size() < logHeader {
			if err := os.Remove(l); err != nil {
				return err
			}
		}
	}
	return nil
}

// exitLines is what a server's output says of why it exited: its last n
// lines that are not a stack frame, so that the exception and its cause
// are seen rather than the frames under them.
func exitLines(out string, n int) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "at ") || (strings.HasPrefix(l, "... ") && strings.HasSuffix(l, " more")) {
			continue
		}
		lines = append(lines, l)
	}
	return strings.Join(lines[max(len(lines)-n, 0):], " | ")
}

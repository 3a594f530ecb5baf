package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/atomicfile"
	"github.com/locklab/locklab/internal/bounded"
)

// markFile, in a directory a command wrote its report to, names the
// command: that command may write there again (the old report is
// removed first), and no other may.
const markFile = ".locklab-report"

// outRoot is where a command writes its report when --out does not say:
// outRoot/<time>, with outRoot/latest pointing at the newest. It is no Go
// package's folder, so a run in a clone of this repository never writes
// among its sources.
const outRoot = "locklab-out"

// reportDir is the directory a command writes its report to.
type reportDir struct {
	// Path is the directory.
	Path string
	// created lists the directories made for it, deepest first.
	created []string
}

// outDir picks the directory a command writes its report to: the flag, or
// outRoot/<time>. A directory that is not there, or empty, is taken; one
// that holds an earlier report of the same command is emptied and taken, so
// that the old report's files never mix with the new; any other is refused
// (one line, exit status 2), nothing written in it.
func outDir(flagValue, command string) (reportDir, error) {
	dir := flagValue
	if dir == "" {
		dir = filepath.Join(outRoot, time.Now().Format("20060102-150405.000"))
	}
	var r reportDir
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		r.created = append(r.created, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, usagef("--out: %v", err)
	}
	if err := takeOver(dir, command); err != nil {
		return r, err
	}
	if err := atomicfile.Write(filepath.Join(dir, markFile), func(w io.Writer) error {
		_, err := io.WriteString(w, command+"\n")
		return err
	}); err != nil {
		return r, usagef("--out: %v", err)
	}
	r.Path = dir
	return r, nil
}

// takeOver empties dir if it holds an earlier report of command, and
// refuses it if it holds anything else.
func takeOver(dir, command string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return usagef("--out: %v", err)
	}
	if len(entries) == 0 {
		return nil
	}
	if owner := markOf(dir); owner != command {
		what := "files that are no locklab report"
		if owner != "" {
			what = fmt.Sprintf("a report of locklab %s", owner)
		}
		return usagef("--out %s: the directory holds %s; name a new or empty directory (nothing was written)", dir, what)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return usagef("--out %s: removing the earlier report: %v", dir, err)
		}
	}
	return nil
}

// markOf is the command whose report dir holds ("" if none).
func markOf(dir string) string {
	info, err := os.Lstat(filepath.Join(dir, markFile))
	if err != nil || !info.Mode().IsRegular() {
		return ""
	}
	b, err := bounded.ReadFile(filepath.Join(dir, markFile), 64)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// discard undoes outDir for a command that wrote nothing: the mark goes,
// and the directories made for it, each only if empty.
func (r reportDir) discard() {
	if r.Path == "" {
		return
	}
	os.Remove(filepath.Join(r.Path, markFile))
	for _, d := range r.created {
		os.Remove(d)
	}
}

// removeAll removes what a failed command made: the directories created
// for it and everything in them, or, in a directory that was there, what
// it wrote.
func (r reportDir) removeAll() {
	if r.Path == "" {
		return
	}
	if len(r.created) > 0 {
		os.RemoveAll(r.created[len(r.created)-1])
		return
	}
	entries, _ := os.ReadDir(r.Path)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(r.Path, e.Name()))
	}
}

// linkLatest points outRoot/latest at dir, a run written whole (best
// effort: a link that cannot be made leaves the old one).
func linkLatest(dir string) {
	latest := filepath.Join(filepath.Dir(dir), "latest")
	tmp := latest + ".tmp"
	os.Remove(tmp)
	if os.Symlink(filepath.Base(dir), tmp) == nil {
		if err := os.Rename(tmp, latest); err != nil && !errors.Is(err, fs.ErrExist) {
			os.Remove(tmp)
		}
	}
}

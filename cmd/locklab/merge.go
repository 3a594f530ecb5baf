package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/bounded"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenarios"
)

// cmdMerge writes one report of the run directories of a campaign's shards
// (locklab run --shard K/N): results.json, index.html, summary.md and
// junit.xml as the unsharded run writes them, with every history, schedule
// and scenario file copied beside them. Its exit status is the one the
// unsharded run would have had. Results of different versions or flags,
// a shard given twice and missing shards are refused (exit 2), and nothing
// is written then.
func cmdMerge(args []string, stdout io.Writer) (int, error) {
	fs := newFlagSet("merge")
	out := fs.String("out", "", "directory to write the merged report to (not one of the run directories)")
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	dirs := fs.Args()
	switch {
	case *out == "":
		return exitUsage, usagef("merge: --out DIR is required")
	case len(dirs) == 0:
		return exitUsage, usagef("merge: name the run directories of the shards (locklab run --shard K/N --out DIR), " +
			"or the results files of an exploration's (locklab explore --shard K/N)")
	}
	explored := 0
	for _, d := range dirs {
		if strings.HasSuffix(d, ".results.json") {
			explored++
		}
	}
	switch explored {
	case len(dirs):
		return mergeExplore(*out, dirs, stdout)
	case 0:
	default:
		return exitUsage, usagef("merge: give the run directories of a campaign, or the results files of an exploration, not both")
	}
	sums := make([]scenarios.Summary, len(dirs))
	for i, d := range dirs {
		if same(d, *out) {
			return exitUsage, usagef("merge: --out %s is one of the run directories: write the merged report elsewhere", *out)
		}
		s, err := readSummary(d)
		if err != nil {
			return exitUsage, err
		}
		sums[i] = s
	}
	// Refused before anything is written: shards that do not fit, or
	// whose files are not all there.
	if _, err := scenarios.Merge(sums, dirs); err != nil {
		return exitUsage, usagef("merge: %v", err)
	}
	for i := range sums {
		if err := shardWhole(dirs[i], sums[i].Results); err != nil {
			return exitUsage, err
		}
	}
	rd, err := outDir(*out, "merge")
	if err != nil {
		return exitUsage, err
	}
	var extra []scenarios.Scenario
	for i := range sums {
		rs, ex, err := copyShard(dirs[i], *out, sums[i].Results)
		if err != nil {
			rd.removeAll()
			return exitUsage, err
		}
		sums[i].Results = rs
		extra = append(extra, ex...)
	}
	merged, err := scenarios.Merge(sums, dirs)
	if err != nil {
		return exitUsage, usagef("merge: %v", err)
	}
	if err := scenarios.WriteSummary(*out, merged); err != nil {
		return exitUsage, usagef("merge: %v", err)
	}
	printSummary(stdout, merged)
	command := append([]string{"locklab", "merge"}, args...)
	if err := writeReport(*out, "locklab run", command, merged, extra); err != nil {
		return exitUsage, usagef("merge: report: %v", err)
	}
	fmt.Fprintf(stdout, "merged %d shard(s) of `locklab run %s`\nreport: %s\n", len(dirs), merged.Campaign.Flags(),
		filepath.Join(*out, reports.IndexFile))
	return merged.ExitCode(), nil
}

// readSummary reads dir's results.json, or says in one line what is wrong.
func readSummary(dir string) (scenarios.Summary, error) {
	file := filepath.Join(dir, "results.json")
	if _, err := os.Stat(file); err != nil {
		why := "no such directory"
		switch info, serr := os.Stat(dir); {
		case serr == nil && !info.IsDir():
			why = "not a directory"
		case fileExists(filepath.Join(dir, "schedule.json")):
			why = "one configuration's directory (replay takes that)"
		case serr == nil:
			why = "no results.json there"
		}
		return scenarios.Summary{}, usagef("merge: %s: %s; merge takes whole runs, each a shard's --out with its results.json", dir, why)
	}
	sum, err := readStrict[scenarios.Summary](file, "a locklab results file")
	if err != nil {
		return sum, err
	}
	if err := sum.CheckNames(); err != nil {
		return sum, usagef("merge: %s: %v", file, err)
	}
	return sum, nil
}

// readStrict decodes the JSON file into a T, refusing fields a T does not
// have, or says in one line what is wrong (what names what it should be).
func readStrict[T any](file, what string) (T, error) {
	var v T
	b, err := bounded.ReadFile(file, bounded.Results)
	if err != nil {
		return v, usagef("merge: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, usagef("merge: %s: not %s: %v", file, what, err)
	}
	return v, nil
}

// copyShard copies each result's run directory (histories, schedule) from
// the shard's directory to out, and the scenario files of scenarios from
// outside the catalog, and returns the results pointing at the copies and
// those scenarios. The shard's own report pages are not copied: the merged
// report writes its own.
func copyShard(dir, out string, results []scenarios.Result) ([]scenarios.Result, []scenarios.Scenario, error) {
	var extra []scenarios.Scenario
	copied := map[string]bool{}
	rs := slices.Clone(results)
	for i, r := range rs {
		if r.History == "" {
			continue
		}
		src := scenarios.HistoryPath(dir, r)
		if err := copyDir(filepath.Dir(src), filepath.Dir(scenarios.HistoryPath(out, r)), copied); err != nil {
			return nil, nil, usagef("merge: %v", err)
		}
		rs[i].History = scenarios.HistoryPath(out, r)
		if _, err := scenarios.Lookup(r.Scenario); err != nil && !copied[r.Scenario] {
			copied[r.Scenario] = true
			file := scenarios.ScriptFile(dir, r.Scenario)
			if err := copyFile(file, scenarios.ScriptFile(out, r.Scenario)); err != nil {
				return nil, nil, usagef("merge: %s is not from the catalog and its scenario file is missing: %v", r.Scenario, err)
			}
			ex, err := readScripts(file)
			if err != nil {
				return nil, nil, err
			}
			extra = append(extra, ex...)
		}
	}
	return rs, extra, nil
}

// shardWhole checks that a shard's directory holds every file its results
// name — each history, whole, and the file of each scenario not from the
// catalog — so that a merge refuses a broken shard before writing
// anything.
func shardWhole(dir string, results []scenarios.Result) error {
	if err := onlyFiles(dir); err != nil {
		return err
	}
	for _, r := range results {
		if r.History == "" {
			continue
		}
		if _, _, err := history.ReadFile(scenarios.HistoryPath(dir, r)); err != nil {
			return usagef("merge: %s: %v", dir, err)
		}
		if _, err := scenarios.Lookup(r.Scenario); err != nil && !fileExists(scenarios.ScriptFile(dir, r.Scenario)) {
			return usagef("merge: %s: %s is not from the catalog and its scenario file %s is missing", dir, r.Scenario,
				scenarios.ScriptFile(dir, r.Scenario))
		}
	}
	return nil
}

// onlyFiles checks that a shard's directory holds regular files and
// directories only: a symbolic link (to /etc/shadow, or to another
// shard), a device or a FIFO in a shard is refused, never followed.
func onlyFiles(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return usagef("merge: %v", err)
		}
		if path == dir || d.Type().IsRegular() || d.IsDir() {
			return nil
		}
		return usagef("merge: %s: %s; a shard holds regular files and directories only (nothing was written)", path, bounded.Kind(d.Type()))
	})
}

// copyDir copies the files of src (one run: histories, schedule; not its
// pages) into dst, once per src.
func copyDir(src, dst string, done map[string]bool) error {
	if done[src] {
		return nil
	}
	done[src] = true
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".html") {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// copyFile copies the regular file src to dst, making dst's directory. A
// link is not followed.
func copyFile(src, dst string) error {
	if err := readableFile(src); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	o, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(o, in); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}

// readableFile checks that path is a regular file, not a link to one.
func readableFile(path string) error {
	info, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s: %s; only regular files are copied", path, bounded.Kind(info.Mode()))
	}
	return nil
}

// same reports whether two paths name one directory.
func same(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/atomicfile"
)

// mergeExplore writes into out one summary of an exploration's shards
// (locklab explore --shard K/N): results.json with the cases added up,
// summary.md naming every shard's failure, and each failure's shrunk
// script. Its exit status is 1 if any shard found a failure, 3 if no case
// drew a fault or a shard was cut short, 0 otherwise.
func mergeExplore(out string, files []string, stdout io.Writer) (int, error) {
	sums := make([]explore.Summary, len(files))
	for i, f := range files {
		s, err := readStrict[explore.Summary](f, "the results of an exploration")
		if err != nil {
			return exitUsage, err
		}
		for _, fl := range s.Failures {
			if err := history.CheckName("script", fl.Script); err != nil || !strings.HasSuffix(fl.Script, ".txt") {
				return exitUsage, usagef("merge: %s: a failure's script %q is not the name of a scenario file beside it (NAME.txt)", f, fl.Script)
			}
		}
		sums[i] = s
	}
	sum, err := explore.Merge(sums, files)
	if err != nil {
		return exitUsage, usagef("merge: %v", err)
	}
	for i, s := range sums {
		for _, fl := range s.Failures {
			if err := readableFile(filepath.Join(filepath.Dir(files[i]), fl.Script)); err != nil {
				return exitUsage, usagef("merge: the failing script of %s: %v", files[i], err)
			}
		}
	}
	rd, err := outDir(out, "merge")
	if err != nil {
		return exitUsage, err
	}
	for i, s := range sums {
		for _, fl := range s.Failures {
			src := filepath.Join(filepath.Dir(files[i]), fl.Script)
			if err := copyFile(src, filepath.Join(out, fl.Script)); err != nil {
				rd.removeAll()
				return exitUsage, usagef("merge: the failing script of %s: %v", files[i], err)
			}
		}
	}
	if err := writeJSONFile(filepath.Join(out, "results.json"), sum); err != nil {
		return exitUsage, usagef("merge: %v", err)
	}
	text := exploreMarkdown(sum)
	if err := atomicfile.Write(filepath.Join(out, "summary.md"), func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	}); err != nil {
		return exitUsage, usagef("merge: %v", err)
	}
	fmt.Fprint(stdout, text)
	fmt.Fprintf(stdout, "summary: %s\n", filepath.Join(out, "summary.md"))
	return sum.ExitCode(), nil
}

// exploreMarkdown says what the merged exploration found.
func exploreMarkdown(s explore.Summary) string {
	var b strings.Builder
	c := s.Campaign
	fmt.Fprintf(&b, "# locklab explore, %d shards merged\n\n`locklab explore %s`\n\n", c.Shards, c.Flags())
	fmt.Fprintf(&b, "%d of %d cases drawn, %d with a fault, %d scripts run.", s.Cases, c.Cases, s.Faulted, s.Runs)
	switch {
	case len(s.Failures) > 0:
		fmt.Fprintf(&b, " **%d shard(s) found a failing case.**\n", len(s.Failures))
	case !s.Complete:
		b.WriteString(" A shard was cut short: no verdict.\n")
	case s.Faulted == 0:
		b.WriteString(" No case drew a fault: no verdict.\n")
	default:
		b.WriteString(" Every case held.\n")
	}
	for _, f := range s.Failures {
		fmt.Fprintf(&b, "\n## FAIL at case %d\n\n%s\n\nShrunk to: %s\n\nScript: `%s` — run it again: `locklab run --script %s --lock %s`\n",
			f.Case, f.Message, strings.Join(f.Actions, "; "), f.Script, f.Script, c.Lock)
	}
	return b.String()
}

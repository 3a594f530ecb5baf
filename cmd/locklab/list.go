package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// resourceLine says what the resource called name is: the lab's own, or
// as the store that keeps it says.
func resourceLine(name string) string {
	switch name {
	case "unfenced":
		return "an in-memory counter that accepts every write"
	case "fenced":
		return "Kleppmann's fenced storage: rejects a token smaller than the largest seen"
	}
	k, _ := resource.KeptBy(name)
	return k.About
}

func cmdList(args []string, w io.Writer) (int, error) {
	fs := newFlagSet("list")
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	if fs.NArg() > 0 {
		return exitUsage, usagef("list: unexpected argument %q", fs.Arg(0))
	}
	var l listing
	var rows []listRow
	for _, s := range scenarios.Catalog() {
		rows = append(rows, listRow{s.Name, "on " + storesOf(s) + ": " + firstSentence(s.Lesson)})
	}
	l.add("scenarios:", rows)
	l.addLocks()
	rows = nil
	for _, name := range resource.Names() {
		rows = append(rows, listRow{name, resourceLine(name)})
	}
	l.add("resources:", rows)
	rows = nil
	for _, k := range faults.Kinds() {
		rows = append(rows, listRow{string(k), faults.Describe(k)})
	}
	l.add("faults:", rows)
	l.print(w)
	return exitOK, nil
}

// storesOf names the stores lesson s runs on, in the order they are
// registered, or says it runs on none (a lesson no store can do yet).
func storesOf(s scenarios.Scenario) string {
	var on []string
	for _, k := range scenarios.Kinds() {
		if s.For(k) {
			on = append(on, k.Name)
		}
	}
	if len(on) == 0 {
		return "no store yet"
	}
	return strings.Join(on, ", ")
}

// listRow is one name and its line in locklab list.
type listRow struct{ name, text string }

// listing is locklab list's sections, each under its heading.
type listing struct {
	heads    []string
	sections [][]listRow
}

func (l *listing) add(head string, rows []listRow) {
	l.heads, l.sections = append(l.heads, head), append(l.sections, rows)
}

// addLocks adds etcd's locks and the lab's adapters of them, each
// registered store's locks, and every store's known-bad locks.
func (l *listing) addLocks() {
	var rows, adapters []listRow
	for _, lk := range etcdlock.Locks() {
		if lk.Adapter {
			adapters = append(adapters, listRow{lk.Name, lk.About})
		} else {
			rows = append(rows, listRow{lk.Name, lk.About})
		}
	}
	rows = append(rows, listRow{process.ExecPrefix + "COMMAND", "your own lock, in any language, run as a process over the process " +
		"protocol (docs/any-language.md; examples/locks has adapters of libraries people use); on another store with --store " +
		kindNames()})
	l.add("locks:", rows)
	l.add("the lab's adapters of those locks (not in the default matrix; --lock names them):", adapters)
	var regs []lock.Regression
	for _, b := range scenarios.Backends() {
		regs = append(regs, b.Regressions()...)
		on, needs := b.About()
		if on == "" {
			continue
		}
		rows = nil
		for _, lk := range b.Locks() {
			if lk.Bad == nil {
				rows = append(rows, listRow{lk.Name, lk.About})
			}
		}
		l.add(fmt.Sprintf("locks on %s (not in the default matrix; --lock names them; %s needed):", on, needs), rows)
	}
	rows = nil
	for _, r := range regs {
		rows = append(rows, listRow{r.Name, r.Bug}, listRow{"", fmt.Sprintf("caught by %s (%s check); %s", strings.Join(r.Scenarios, ", "), r.Check, r.Link)})
	}
	l.add("known-bad locks (not in the default matrix; each must FAIL its scenario on every resource):", rows)
}

// print writes the sections, one column for every name, as wide as the
// longest.
func (l *listing) print(w io.Writer) {
	width := 0
	for _, sec := range l.sections {
		for _, r := range sec {
			width = max(width, len(r.name))
		}
	}
	for i, sec := range l.sections {
		fmt.Fprintln(w, l.heads[i])
		for _, r := range sec {
			fmt.Fprintf(w, "  %-*s %s\n", width, r.name, r.text)
		}
	}
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func cmdExplain(args []string, w io.Writer) (int, error) {
	fs := newFlagSet("explain")
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	if fs.NArg() != 1 {
		return exitUsage, usagef("explain: want one scenario or lock (scenarios: %s)", strings.Join(scenarios.Names(), ", "))
	}
	d, ok := describedLock(fs.Arg(0))
	line, story, weak := d.About, d.Story, d.Weak
	if ok {
		fmt.Fprintf(w, "%s: %s\n", fs.Arg(0), line)
		for _, para := range strings.Split(story, "\n\n") {
			if para != "" {
				fmt.Fprintf(w, "\n%s\n", wrap(para, 78))
			}
		}
		documented(w, fs.Arg(0), weak)
		return exitOK, nil
	}
	if r, ok := knownBad(fs.Arg(0)); ok {
		explainBad(w, r)
		return exitOK, nil
	}
	s, err := scenarios.Lookup(fs.Arg(0))
	if err != nil {
		return exitUsage, usagef("%v", err)
	}
	fmt.Fprintf(w, "%s\n\n%s\n", s.Name, wrap(s.Lesson, 78))
	fmt.Fprintln(w, "\nWhat every run must show happened (else it is ERROR, a vacuous schedule):")
	for _, ef := range s.Effects {
		fmt.Fprintf(w, "  - %s\n", models.EffectName(ef))
	}
	steps, err := s.Script()
	if err != nil || steps == nil {
		return exitOK, nil
	}
	shows := "the lock of the first store it is for"
	if i := slices.IndexFunc(scenarios.Kinds(), s.For); i >= 0 {
		shows = scenarios.Kinds()[i].Shows
	}
	fmt.Fprintf(w, "\nStep by step (the scenario's script; each step's output is what %s shows):\n", shows)
	for _, st := range steps {
		if len(st.Narration) > 0 {
			fmt.Fprintf(w, "\n%s\n", wrap(strings.Join(st.Narration, " "), 78))
		}
		fmt.Fprintf(w, "  > %s\n", st.Cmd)
		for _, line := range strings.Split(st.Expected, "\n") {
			fmt.Fprintf(w, "    %s\n", line)
		}
	}
	return exitOK, nil
}

// describedLock is the lock people use (or the lab's adapter) called name,
// of any registered store; false for none, or for a known-bad lock.
func describedLock(name string) (lock.Description, bool) {
	for _, b := range scenarios.Backends() {
		for _, d := range b.Locks() {
			if d.Name == name && d.Bad == nil {
				return d, true
			}
		}
	}
	return lock.Description{}, false
}

// explainBad tells a known-bad lock: its bug, what catches it, where to
// see it caught.
func explainBad(w io.Writer, r lock.Regression) {
	fmt.Fprintf(w, "%s: a known-bad lock\n\n%s\n\n", r.Name, wrap(r.Bug, 78))
	fmt.Fprintln(w, wrap(fmt.Sprintf("Caught by %s (the %s check) on every resource and every seed: a change that "+
		"lets it pass is a red build.", strings.Join(r.Scenarios, ", "), r.Check), 78))
	fmt.Fprintf(w, "The bug, upstream: %s\nSee it caught: locklab run --lock %s --scenario %s\n",
		r.Link, r.Name, strings.Join(r.Scenarios, ","))
}

// knownBad is the known-bad lock called name, of any registered store.
func knownBad(name string) (lock.Regression, bool) {
	for _, b := range scenarios.Backends() {
		for _, r := range b.Regressions() {
			if r.Name == name {
				return r, true
			}
		}
	}
	return lock.Regression{}, false
}

func wrap(s string, width int) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return strings.Join(append(lines, line), "\n")
}

// documented says which lessons the lock called name fails as it ships,
// by design and as documented (weak: lesson → check), and how to see it.
func documented(w io.Writer, name string, weak map[string]string) {
	if len(weak) == 0 {
		return
	}
	lessons := slices.Sorted(maps.Keys(weak))
	fmt.Fprintf(w, "\nIt fails, as it ships and as documented (a run shows these FAILs as expected):\n")
	for _, l := range lessons {
		fmt.Fprintf(w, "  - %s: the %s check\n", l, weak[l])
	}
	fmt.Fprintf(w, "\nSee it: locklab run --lock %s --scenario %s\n", name, strings.Join(lessons, ","))
}

// kindNames names the stores a run can name.
func kindNames() string {
	var names []string
	for _, k := range scenarios.Kinds() {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

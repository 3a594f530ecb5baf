package main

import (
	"bufio"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/shell"

	"github.com/locklab/locklab/internal/testsize"
)

// repoRoot is the repository, from this package's folder.
const repoRoot = "../.."

// docBlock is one fenced block of README.md or a page of docs/.
type docBlock struct {
	file, lang, body string
	// mark is the HTML comment on the line before the fence, if any
	// ("excerpt of PATH").
	mark string
	line int
}

// docPages reads README.md and every page in docs/, by their path in the
// repository.
func docPages(t *testing.T) map[string]string {
	t.Helper()
	pages := map[string]string{}
	paths, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	for _, p := range append(paths, filepath.Join(repoRoot, "README.md")) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		rel, err := filepath.Rel(repoRoot, p)
		require.NoError(t, err)
		pages[filepath.ToSlash(rel)] = string(b)
	}
	return pages
}

var fence = regexp.MustCompile("(?ms)^(?:<!-- (.*?) -->\n)?```(\\w*)\n(.*?)^```")

// docBlocks are the fenced blocks of every page, in order of file and line.
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	var out []docBlock
	pages := docPages(t)
	for _, file := range slices.Sorted(func(yield func(string) bool) {
		for f := range pages {
			if !yield(f) {
				return
			}
		}
	}) {
		text := pages[file]
		for _, m := range fence.FindAllStringSubmatchIndex(text, -1) {
			b := docBlock{file: file, lang: text[m[4]:m[5]], body: text[m[6]:m[7]], line: strings.Count(text[:m[0]], "\n") + 1}
			if m[2] >= 0 {
				b.mark = text[m[2]:m[3]]
			}
			out = append(out, b)
		}
	}
	return out
}

// The pages' Go files are as gofmt writes them: a user pastes them into a
// file of their own.
func TestDocsGoIsFormatted(t *testing.T) {
	for _, b := range docBlocks(t) {
		if b.lang != "go" || !regexp.MustCompile(`(?m)^package `).MatchString(b.body) {
			continue // a fragment, not a file
		}
		out, err := format.Source([]byte(b.body))
		require.NoError(t, err, "%s:%d", b.file, b.line)
		assert.Equal(t, string(out), b.body, "gofmt changes the Go at %s:%d", b.file, b.line)
	}
}

// Every Go block of the pages runs, or is an excerpt of a file that does:
// the gate page's lock and test are run as written by locktest's
// TestTheReadmeGateAsWritten, and every other block is marked
// "<!-- excerpt of PATH -->" and found, line for line, in PATH (a test or
// example that runs, or the gate page); so is every other block so marked.
func TestEveryGoBlockRunsOrIsAnExcerpt(t *testing.T) {
	for _, b := range docBlocks(t) {
		where := b.file + ":" + strconv.Itoa(b.line)
		path, isExcerpt := strings.CutPrefix(b.mark, "excerpt of ")
		if !isExcerpt {
			gate := b.file == "docs/gate.md" && (strings.Contains(b.body, "\npackage mylock\n") || strings.HasPrefix(b.body, "package mylock_test\n"))
			assert.False(t, b.lang == "go" && !gate, "%s: a Go block that no test runs: mark it <!-- excerpt of PATH --> of a file that runs", where)
			continue
		}
		src, err := os.ReadFile(filepath.Join(repoRoot, path))
		if !assert.NoError(t, err, "%s: its excerpt's file", where) {
			continue
		}
		assert.Contains(t, string(src), b.body, "%s is not, line for line, in %s", where, path)
	}
}

// Every link from a page to a file of the repository leads to one, and
// the README links every guide.
func TestEveryDocLinkLeadsSomewhere(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	pages := docPages(t)
	for file, text := range pages {
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			_, err := os.Stat(filepath.Join(repoRoot, filepath.Dir(file), target))
			assert.NoError(t, err, "%s links to %s", file, target)
		}
	}
	for file := range pages {
		if strings.HasPrefix(file, "docs/") {
			assert.Contains(t, pages["README.md"], "]("+file+")", "the README links no %s", file)
		}
	}
	assert.LessOrEqual(t, strings.Count(pages["README.md"], "\n"), 300, "the README is a front page")
}

// docCommand is one command line of a page's shell block.
type docCommand struct {
	where string
	args  []string
}

// docCommands are the command lines of the pages' shell blocks: a block
// whose first line is a command (output shown, a diagram or a table is
// not); "$ " before a command and "# …" after it are not the command's.
func docCommands(t *testing.T) []docCommand {
	t.Helper()
	var out []docCommand
	for _, b := range docBlocks(t) {
		if b.lang != "" && b.lang != "sh" {
			continue
		}
		if b.lang == "sh" && b.mark != "" {
			continue // a program's excerpt (TestEveryGoBlockRunsOrIsAnExcerpt), not commands
		}
		if strings.HasPrefix(b.body, "go mod init ") {
			assert.Equal(t, "docs/gate.md", b.file, "the gate's commands are the gate page's")
			continue // run as written by locktest's TestTheReadmeGateAsWritten
		}
		sc := bufio.NewScanner(strings.NewReader(b.body))
		for i := 0; sc.Scan(); i++ {
			line := strings.TrimPrefix(sc.Text(), "$ ")
			words := strings.Fields(line)
			for len(words) > 0 && envAssignment.MatchString(words[0]) {
				words = words[1:] // LOCKLAB_LONG=1 go test …
			}
			if len(words) == 0 {
				continue
			}
			if !isCommand(words[0]) {
				if i == 0 {
					break // output, a diagram, a table
				}
				continue // output under a command
			}
			args, err := shell.Fields(line, func(string) string { return "" })
			require.NoError(t, err, "%s:%d", b.file, b.line+1+i)
			for len(args) > 0 && envAssignment.MatchString(args[0]) {
				args = args[1:]
			}
			out = append(out, docCommand{where: b.file + ":" + strconv.Itoa(b.line+1+i), args: args})
		}
	}
	return out
}

var envAssignment = regexp.MustCompile(`^[A-Z_]+=`)

func isCommand(word string) bool {
	return slices.Contains([]string{"go", "locklab", "apt-get", "npm", "docker"}, word)
}

// Every command on the pages is one this repository checks: a locklab
// command's flags are its own (and a run's, an exploration's and a bench's
// are a valid configuration, the names they give — locks, lessons,
// resources, faults — the lab's), a go test names packages and tests that
// exist, what apt-get and npm install is what .ci/run installs. The
// README's tour is run as written (TestTheTourAsWritten), and the gate
// page's commands by locktest's TestTheReadmeGateAsWritten.
func TestEveryDocCommandIsValid(t *testing.T) {
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	require.NoError(t, err)
	cmds := docCommands(t)
	t.Chdir(repoRoot)                     // the commands run from a clone's top
	t.Setenv("JOB_COMPLETION_INDEX", "2") // as a Kubernetes Indexed Job sets it, for --shard auto/N
	require.Greater(t, len(cmds), 40, "the pages' commands are read")
	for _, c := range cmds {
		args := c.args
		switch {
		case len(args) > 2 && args[0] == "go" && args[1] == "run" && args[2] == "./cmd/locklab":
			checkLocklabCommand(t, c.where, args[3:])
		case args[0] == "locklab":
			checkLocklabCommand(t, c.where, args[1:])
		case args[0] == "go" && args[1] == "test":
			checkGoTest(t, c.where, args[2:])
		case args[0] == "go" && args[1] == "install":
			assert.DirExists(t, args[len(args)-1], c.where)
		case args[0] == "apt-get" && args[1] == "install":
			for _, pkg := range args[2:] {
				assert.Contains(t, string(ci), pkg, "%s: .ci/run does not install %s", c.where, pkg)
			}
		case args[0] == "npm" && args[1] == "ci":
			dir := args[len(args)-1]
			assert.FileExists(t, filepath.Join(dir, "package-lock.json"), c.where)
			assert.Contains(t, string(ci), "npm ci --prefix "+dir, "%s: .ci/run does not install it", c.where)
		default:
			t.Errorf("%s: no test checks %q", c.where, strings.Join(args, " "))
		}
	}
}

// checkLocklabCommand holds a locklab command line of a page to the
// command's flags, and a run, an exploration or a bench to a valid
// configuration; list, explain and version run.
func checkLocklabCommand(t *testing.T, where string, args []string) {
	t.Helper()
	if !assert.NotEmpty(t, args, where) {
		return
	}
	cmd, rest := args[0], args[1:]
	code, help, _ := locklab(t, t.Context(), cmd, "--help")
	if !assert.Equal(t, exitOK, code, "%s: locklab %s is no command", where, cmd) {
		return
	}
	for _, a := range rest {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && !isHelp(a) {
			assert.Regexp(t, `(?m)^  -`+regexp.QuoteMeta(name)+`\b`, help, "%s: locklab %s has no flag %s", where, cmd, a)
		}
	}
	switch cmd {
	case "run":
		var f runFlags
		fs := newFlagSet("run")
		f.register(fs)
		if assert.NoError(t, parse(fs, rest), where) {
			_, err := f.config()
			assert.NoError(t, err, where)
		}
	case "explore":
		var f exploreFlags
		fs := newFlagSet("explore")
		f.register(fs)
		if assert.NoError(t, parse(fs, rest), where) {
			_, _, err := f.campaign()
			assert.NoError(t, err, where)
		}
	case "bench":
		_, err := parseBenchFlags(rest)
		assert.NoError(t, err, where)
	case "list", "explain", "version":
		code, _, stderr := locklab(t, t.Context(), args...)
		assert.Equal(t, exitOK, code, "%s: %s", where, stderr)
	}
}

// checkGoTest holds a go test line of a page to packages that exist and
// -run, -bench and -fuzz patterns that name a test of theirs.
func checkGoTest(t *testing.T, where string, args []string) {
	t.Helper()
	var pkgs, patterns []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-run" || a == "-bench" || a == "-fuzz":
			if i+1 < len(args) {
				patterns = append(patterns, args[i+1])
				i++
			}
		case strings.HasPrefix(a, "-"):
			if !strings.Contains(a, "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !strings.HasPrefix(args[i+1], "./") {
				i++ // a flag's value: -fuzztime 1m, -jepsen 60s
			}
		default:
			pkgs = append(pkgs, a)
		}
	}
	var dirs []string
	for _, p := range pkgs {
		if dir, all := strings.CutSuffix(p, "/..."); all {
			assert.DirExists(t, dir, where)
			filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() && !strings.Contains(path, "node_modules") {
					dirs = append(dirs, path)
				}
				return nil
			})
			continue
		}
		if assert.DirExists(t, p, where) {
			dirs = append(dirs, p)
		}
	}
	if len(pkgs) == 0 {
		dirs = []string{"."}
	}
	var funcs []string
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "*_test.go"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			for _, m := range regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz|Example)\w*)\(`).FindAllStringSubmatch(string(b), -1) {
				funcs = append(funcs, m[1])
			}
		}
	}
	for _, p := range patterns {
		if p == "XXX" || p == "." {
			continue // no test, or every benchmark
		}
		top, _, _ := strings.Cut(strings.Trim(p, "'"), "/")
		re, err := regexp.Compile(top)
		if !assert.NoError(t, err, where) {
			continue
		}
		assert.True(t, slices.ContainsFunc(funcs, re.MatchString), "%s: no test in %v matches %q", where, pkgs, p)
	}
}

// The README's tour, as written, in a directory of its own: each command
// in order, exiting as a reader is told it will — every run as expected,
// and explore's finding (exit 1; run in full by LOCKLAB_LONG=1, checked as
// a valid exploration otherwise).
func TestTheTourAsWritten(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	_, tour, ok := strings.Cut(string(b), "\n## A five-minute tour\n")
	require.True(t, ok, "the README has its tour")
	tour, _, _ = strings.Cut(tour, "\n## ")
	var steps [][]string
	for _, m := range fence.FindAllStringSubmatch(tour, -1) {
		for line := range strings.Lines(m[3]) {
			if !strings.HasPrefix(line, "go run ./cmd/locklab ") {
				continue // output shown
			}
			args, err := shell.Fields(line, nil)
			require.NoError(t, err)
			if len(args) > 3 && args[0] == "go" && args[1] == "run" && args[2] == "./cmd/locklab" {
				steps = append(steps, args[3:])
			}
		}
	}
	require.GreaterOrEqual(t, len(steps), 6, "the tour's commands are read")
	t.Chdir(t.TempDir())
	for _, args := range steps {
		want := exitOK
		if args[0] == "explore" {
			if !testsize.Long() {
				continue // TestEveryDocCommandIsValid checks its flags
			}
			want = exitMismatch
		}
		code, stdout, stderr := locklab(t, t.Context(), args...)
		require.Equal(t, want, code, "locklab %s:\n%s\n%s", strings.Join(args, " "), stdout, stderr)
		if args[0] == "replay" {
			assert.Regexp(t, `recorded FAIL +replayed FAIL +same`, stdout, "the replay replays the FAIL the tour explains")
		}
	}
}

package script_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/script"
)

// A command's values are checked when it is read, each error naming the
// command and the argument.
func TestParseLineChecksValues(t *testing.T) {
	for line, want := range map[string]string{
		"pause c1 at=before-lunch":          "pause: at=before-lunch: want one of after-acquire, before-write, before-release, in-acquire, in-release, any",
		"expire c1 mode=slowly":             "expire: mode=slowly: want one of revoke, lapse",
		"client c1 member=4":                "client: member=4: want a member name (m1, m2…)",
		"client c1 member=m0":               "client: member=m0: want a member name",
		"client c1":                         "client: want member=…",
		"pause c1":                          "pause: want at=…",
		"isolate":                           "isolate: want member=…",
		"isolate c1":                        `isolate: unexpected argument "c1" (it takes member=…)`,
		"release c1 grant=first":            "release: grant=first: want a grant's token label (t1, t2…)",
		"release c1 answer=late":            "release: answer=late: want one of lost",
		"release c1 answer=lost async":      "answer=lost releases the latest grant, in the foreground",
		"setup members=two":                 "setup: members=two: want a count of members, 1 to 9",
		"setup members=99999":               "setup: members=99999: want a count of members, 1 to 9",
		"setup ttl=0":                       "setup: ttl=0: want a whole number of seconds, 1 to 30",
		"setup ttl=100000":                  "setup: ttl=100000: want a whole number of seconds, 1 to 30",
		"acquire c1 fast":                   `acquire: unexpected argument "fast" (it takes CLIENT answer=… next=… async)`,
		"acquire c1 next=lost async":        "acquire: next=lost waits for the request after the acquire's write, in the foreground",
		"acquire c1 next=lost answer=lost":  "it takes no async or answer=",
		"acquire c1 next=late":              "acquire: next=late: want one of lost",
		"acquire c1 answer=lost async":      "acquire: answer=lost waits for the server to show the acquire's key, in the foreground",
		"acquire c1 answer=gone":            "acquire: answer=gone: want one of lost",
		"cut c1 for=soon":                   "cut: for=soon: want a positive duration (400ms, 3s)",
		"cs c1 work=-1s":                    "cs: work=-1s: want a positive duration",
		"wait-free c1":                      `wait-free: unexpected argument "c1" (it takes no arguments)`,
		"heal c1":                           `heal: unexpected argument "c1" (it takes no arguments)`,
		"grab c1":                           `unknown command "grab"`,
		"acquire":                           "acquire: want a client name",
		"client c<script> member=m1":        `client: client "c<script>": '<' is not allowed in a name`,
		"acquire ../c1":                     `acquire: client "../c1": a name starts with a letter or a digit`,
		"jump-clock c1 member=m1 offset=1s": "jump-clock: want a client name or member=…, not both (it takes CLIENT or member=… offset=…)",
		"jump-clock offset=1s":              "jump-clock: want a client name or member=…",
		"jump-clock c1":                     "jump-clock: want offset=…",
		"drift-clock member=m1 rate=1":      "drift-clock: rate=1: want how fast the clock runs against the machine's, 0.1 to 10 and not 1",
		"drift-clock member=m1 rate=fast":   "drift-clock: rate=fast: want how fast",
		"drift-clock member=m1":             "drift-clock: want rate=…",
		"drift-clock rate=2":                "drift-clock: want a client name or member=…",
	} {
		_, err := script.ParseLine(line)
		if assert.Error(t, err, line) {
			assert.Contains(t, err.Error(), want, line)
		}
	}
}

// A command reads back as the line that wrote it.
func TestCmdStringReadsBack(t *testing.T) {
	for _, line := range []string{
		"setup members=5 ttl=2", "client c1 member=m3", "acquire c2 async", "cs c1", "release c1 grant=t1",
		"release c1 answer=lost", "acquire c1 answer=lost", "jump-clock c1 offset=-1m0s", "jump-clock member=m2 offset=+30s", "drift-clock member=m3 rate=2.5", "drift-clock c2 rate=0.2", "acquire c1 next=lost", "cut c1 for=400ms", "cs c1 work=2s async", "wait-free", "pause c1 at=before-release", "expire c2 mode=lapse", "expire c2", "heal", "check",
		"delay c1 by=400ms", "isolate member=m1",
	} {
		c, err := script.ParseLine(line)
		require.NoError(t, err, line)
		assert.Equal(t, line, c.String())
		again, err := script.ParseLine(c.String())
		require.NoError(t, err)
		assert.Equal(t, c, again)
	}
}

// A script file is read step by step, its errors naming file and line.
func TestParse(t *testing.T) {
	const client = "client c1 member=m1\n----\nc1: connected to m1\n\n"
	steps, err := script.Parse("s.txt", client+"# c1 asks.\nacquire c1\n----\nc1: granted token=t1\n\ncheck\n----\nunfenced: PASS\nbelief: one holder at a time\n")
	require.NoError(t, err)
	require.Len(t, steps, 3)
	assert.Equal(t, []string{"c1 asks."}, steps[1].Narration)
	assert.Equal(t, script.Cmd{Name: "acquire", Client: "c1"}, steps[1].Cmd)
	assert.Equal(t, 6, steps[1].Line)
	assert.Equal(t, "unfenced: PASS\nbelief: one holder at a time", steps[2].Expected)

	_, err = script.Parse("s.txt", client+"acquire c1\n----\nok\n\npause c1 at=now\n----\n")
	assert.EqualError(t, err, "s.txt:9: pause: at=now: want one of after-acquire, before-write, before-release, in-acquire, in-release, any")
	_, err = script.Parse("s.txt", client+"acquire c7\n----\nok\n")
	assert.EqualError(t, err, `s.txt:5: acquire: client c7 is not declared (a step "client c7 member=m1" before it)`)
	_, err = script.Parse("s.txt", client+"# "+strings.Repeat("x", script.MaxLine)+"\n")
	assert.EqualError(t, err, fmt.Sprintf("s.txt:5: a line longer than %d bytes", script.MaxLine))
}

// Drawn scripts are a function of the seed, and every line they hold is a
// command the reader takes.
func TestDrawScript(t *testing.T) {
	opts := script.WalkOptions{Clients: 3}
	for seed := range uint64(20) {
		lines := script.DrawScript(seed, opts, 12)
		assert.Equal(t, lines, script.DrawScript(seed, opts, 12), "seed %d", seed)
		assert.Equal(t, "setup members=3 ttl=1", lines[0])
		assert.Equal(t, "check", lines[len(lines)-1])
		for _, l := range lines {
			_, err := script.ParseLine(l)
			assert.NoError(t, err, "seed %d: %s", seed, l)
		}
	}
}

// A walk learns from what a step came to: a refused acquire leaves the
// client holding nothing, so it is offered no critical section.
func TestWalkLearnsFromOutcomes(t *testing.T) {
	w := script.NewWalk(script.WalkOptions{Clients: 2, Faults: []string{}})
	w.Take(w.Preamble(), nil)
	a, ok := w.Pick(0) // "acquire c1"
	require.True(t, ok)
	require.Equal(t, "acquire c1", a.Name)
	w.Take(a, []run.Outcome{{Kind: run.Failed, Client: "c1", Failure: run.FailTimedOut}})
	for _, next := range w.Next() {
		assert.NotEqual(t, "cs c1", next.Name, "c1 was refused")
	}
	w.Take(a, []run.Outcome{{Kind: run.Granted, Client: "c1", Token: "t1"}})
	var names []string
	for _, next := range w.Next() {
		names = append(names, next.Name)
	}
	assert.Contains(t, names, "cs c1")
}

// A script line, read: its values checked, its command typed.
func ExampleParseLine() {
	c, err := script.ParseLine("pause c1 at=before-write")
	fmt.Println(c.Name, c.Client, c.At, err)
	_, err = script.ParseLine("pause c1 at=whenever")
	fmt.Println(err)
	// Output:
	// pause c1 before-write <nil>
	// pause: at=whenever: want one of after-acquire, before-write, before-release, in-acquire, in-release, any
}

// The random scenario's scripts are drawn from a seed alone.
func ExampleDrawScript() {
	lines := script.DrawScript(7, script.WalkOptions{Clients: 2, Faults: []string{script.WalkCut}}, 3)
	fmt.Println(lines[0])
	fmt.Println(lines[1])
	fmt.Println(lines[len(lines)-1])
	// Output:
	// setup members=3 ttl=1
	// client c1 member=m1
	// check
}

// A step's expected output may list answers that are all correct, one per
// block, between lines that say "or"; anything else does not match.
func TestMatchesAlternatives(t *testing.T) {
	both := "c2: error: session expired\nor\nc2: granted token=t2 on a new lease"
	assert.True(t, script.Matches(both, "c2: error: session expired"))
	assert.True(t, script.Matches(both, "c2: granted token=t2 on a new lease"))
	assert.False(t, script.Matches(both, "c2: granted token=t2"), "a grant on the lease that ended is the bug")
	assert.True(t, script.Matches("c1: released", "c1: released"))
}

// An alternative that ends in "…" is any answer that begins as it does:
// "c2: error: …" is any error, in whatever words the lock gives it.
func TestMatchesAnyEnding(t *testing.T) {
	anyErr := "c2: error: …"
	assert.True(t, script.Matches(anyErr, "c2: error: timed out"))
	assert.True(t, script.Matches(anyErr, "c2: error: lock: gave up waiting"))
	assert.False(t, script.Matches(anyErr, "c2: granted token=t2"))
	assert.False(t, script.Matches(anyErr, "c3: error: timed out"), "another client's answer")
	assert.False(t, script.Matches(anyErr, "c2: error: timed out\nc3: granted token=t2"), "one line only")
	assert.True(t, script.Matches("c2: granted token=t2\nor\nc2: error: …", "c2: error: session expired"))
}

package scenarios

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/script"
)

// FromScript makes a scenario of a script written outside the catalog, in
// the catalog scripts' format (see scenarios/scripts/). name names the
// scenario and file is used in messages ("file:line: …"). It is parsed as
// strictly as the catalog's: an unknown command or argument is an error
// naming its line.
//
// An optional first command `setup members=N ttl=S` sets the cluster size it
// needs (default 3) and the lease TTL in seconds (default 1). Its expected
// verdicts are read from its `check` step ("unfenced: FAIL (…)",
// "fenced: PASS"); a resource it does not name must PASS. Every other
// step's output is compared with the script's, as for the catalog: a step
// that printed something else makes the run an ERROR. A script without a
// check step expects nothing, and is refused. The lesson is the narration
// before its first command.
func FromScript(name, file, text string) (Scenario, error) {
	steps, err := script.Parse(file, text)
	if err != nil {
		return Scenario{}, err
	}
	if len(steps) == 0 {
		return Scenario{}, fmt.Errorf("%s: no command", file)
	}
	s := Scenario{Name: name, Members: 3, TTL: 1, script: file, text: text,
		Lesson: strings.Join(steps[0].Narration, " "), Minimum: history.Minimum{Grants: 1}}
	if st := steps[0].Cmd; st.Name == "setup" {
		// Parse has checked both values.
		s.Members = cmp.Or(st.Members, s.Members)
		s.TTL = cmp.Or(st.TTL, s.TTL)
	}
	if s.TTL > 1 {
		// Longer leases, longer operations: what explore ran the
		// script with, and what a scaled catalog scenario gets.
		s.opTimeout = run.OpTimeoutFor(s.TTL)
	}
	// A waiter may wait out every section the script makes last (cs
	// work=) and every blip (cut for=): its acquire gets that long more.
	var longer time.Duration
	for _, st := range steps {
		longer += st.Cmd.Work + st.Cmd.For
	}
	if longer > 0 {
		s.opTimeout = cmp.Or(s.opTimeout, run.DefaultOpTimeout) + longer
	}
	expect := map[string]Expect{}
	for _, d := range documentedVerdicts(steps) {
		switch models.Result(d.verdict) {
		case models.Pass:
			expect[d.resource] = ExpectPass
		case models.Fail:
			expect[d.resource] = ExpectFail
		default:
			return Scenario{}, fmt.Errorf("%s:%d: check: %s: want PASS or FAIL, got %q", file, d.line, d.resource, d.verdict)
		}
	}
	s.Expect = func(r string) Expect {
		if e, ok := expect[r]; ok {
			return e
		}
		for _, d := range documentedVerdicts(steps) {
			if guardedAlike(d.resource, r) {
				return expect[d.resource] // a script's etcd-guarded says what redis-guarded does on Redis
			}
		}
		return ExpectPass
	}
	for _, st := range steps {
		if m := st.Cmd.Member; st.Cmd.Name == "client" && memberIndex(m) > s.Members {
			return Scenario{}, fmt.Errorf("%s:%d: client: member=%s: the script's cluster has %d members (setup members=N)", file, st.Line, m, s.Members)
		}
	}
	if !slices.ContainsFunc(steps, func(st script.Step) bool { return st.Cmd.Name == "check" }) {
		return Scenario{}, fmt.Errorf("%s: no check step: a script says what it expects of each resource with one "+
			"(\"check\", then \"unfenced: FAIL …\", \"fenced: PASS\")", file)
	}
	return s, nil
}

// memberIndex is N of a member name "mN", or 0.
func memberIndex(m string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(m, "m"))
	if err != nil || !strings.HasPrefix(m, "m") {
		return 0
	}
	return n
}

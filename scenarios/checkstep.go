package scenarios

import (
	"slices"
	"strings"

	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/script"
)

// documented is one resource's line of a script's check step: the verdict
// the script documents for it ("unfenced: FAIL (counter FAIL, stale-writes
// FAIL)") and the checks it names as failing.
type documented struct {
	resource, verdict string
	failed            []string
	// line is the line's number in the script file.
	line int
}

// documentedVerdicts reads the check steps of steps: one entry per line
// that names a resource, in order.
func documentedVerdicts(steps []script.Step) []documented {
	var out []documented
	for _, st := range steps {
		if st.Cmd.Name != "check" {
			continue
		}
		for i, line := range strings.Split(st.Expected, "\n") {
			res, rest, ok := strings.Cut(line, ": ")
			if !ok || !slices.Contains(resource.Names(), res) {
				continue
			}
			verdict, checks, _ := strings.Cut(rest, " ")
			d := documented{resource: res, verdict: verdict, line: st.Line + 2 + i}
			checks = strings.TrimSuffix(strings.TrimPrefix(checks, "("), ")")
			for _, c := range strings.Split(checks, ", ") {
				if name, result, _ := strings.Cut(c, " "); result == "FAIL" {
					d.failed = append(d.failed, name)
				}
			}
			out = append(out, d)
		}
	}
	return out
}

// guardedAlike says whether a script's resource named and a run's resource
// r are two stores' guarded resources: a script written with etcd-guarded
// says what a lock on another store does to that store's.
func guardedAlike(named, r string) bool {
	_, a := resource.KeptBy(named)
	_, b := resource.KeptBy(r)
	return a && b
}

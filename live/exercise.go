package live

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// Exercise is a goal the student reaches by acting on the run, and how
// the lab knows it was reached: from the checks and the histories as they
// stand, never from which buttons were pressed.
type Exercise struct {
	Name string `json:"name"`
	// Goal says what to make happen; Hint how to begin.
	Goal string `json:"goal"`
	Hint string `json:"hint"`
	// reached tells, from the run's checks and histories, whether the goal
	// was reached.
	reached func(r outcome) bool
}

// outcome is what an exercise is judged on: each resource's report and
// history.
type outcome struct {
	reports map[string]models.Report
	events  map[string][]history.Event
}

// Exercises are the guided exercises, in the order a class takes them.
func Exercises() []Exercise { return slices.Clone(exercises) }

var exercises = []Exercise{
	{
		Name: "two-holders",
		Goal: "Make c2 believe it holds the lock while c1 still believes it does — with a correct lock.",
		Hint: "Connect c1 and c2, let c1 acquire, then stop c1 long enough for its lease to end " +
			"(pause it before its write, or cut its link), let c2 acquire, and let c1 go on: a client shows " +
			"what it believes by acting on its grant.",
		reached: func(r outcome) bool {
			rep, ok := r.reports["unfenced"]
			return ok && rep.Belief.Result == models.Fail
		},
	},
	{
		Name: "lost-update",
		Goal: "Make the unfenced counter lose an update: both holders' writes accepted, one increment gone.",
		Hint: "c1 must have read the counter before it froze (cs c1 async after pausing it before its write), " +
			"c2 must write, and then c1 must wake and finish.",
		reached: func(r outcome) bool {
			rep, ok := r.reports["unfenced"]
			return ok && slices.ContainsFunc(rep.Safety, func(v models.Verdict) bool {
				return v.Check == "counter" && v.Result == models.Fail
			})
		},
	},
	{
		Name: "fenced-refuses",
		Goal: "Do it again and watch the fenced store refuse the late write: a write rejected for its stale token.",
		Hint: "The fenced resource runs beside the unfenced one: choose it above the timeline once c1 has written.",
		reached: func(r outcome) bool {
			return slices.ContainsFunc(r.events["fenced"], func(e history.Event) bool {
				return e.Op == history.CS && e.Accepted != nil && !*e.Accepted
			})
		},
	},
}

// exercise is the exercise called name.
func exercise(name string) (Exercise, error) {
	i := slices.IndexFunc(exercises, func(x Exercise) bool { return x.Name == name })
	if i < 0 {
		var names []string
		for _, x := range exercises {
			names = append(names, x.Name)
		}
		return Exercise{}, fmt.Errorf("unknown exercise %q (exercises: %s)", name, strings.Join(names, ", "))
	}
	return exercises[i], nil
}

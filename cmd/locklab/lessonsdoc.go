package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// The generated part of docs/lessons.md lies between these two lines;
// the page's own words are above it (TestTheLessonsPageIsTheCatalog keeps
// the part the catalog's).
const (
	generatedBegin = "<!-- generated from the catalog by TestTheLessonsPageIsTheCatalog (LOCKLAB_UPDATE_DOCS=1 writes it): do not edit below -->"
	generatedEnd   = "<!-- end of the generated part -->"
)

// writeLessonsPage writes the lessons and checks reference from what the
// lab knows of them — the catalog, the stores' capabilities, the known-bad
// locks and the checks' remedies — as Markdown: the part of
// docs/lessons.md between generatedBegin and generatedEnd.
func writeLessonsPage(w io.Writer) {
	fmt.Fprintln(w, generatedBegin)
	fmt.Fprintln(w, "\n## The lessons")
	for _, s := range scenarios.Catalog() {
		fmt.Fprintf(w, "\n### `%s`\n\n", s.Name)
		fmt.Fprintf(w, "Runs on: %s. A correct lock: %s.\n\n", storesOf(s), expectations(s))
		fmt.Fprintln(w, s.Lesson)
		if len(s.Effects) > 0 {
			fmt.Fprintln(w, "\nWhat must happen in every run, or the run proves nothing (ERROR):")
			for _, e := range s.Effects {
				fmt.Fprintf(w, "- %s\n", models.EffectName(e))
			}
		}
		fmt.Fprintf(w, "\n`locklab explain %s` tells it step by step.\n", s.Name)
	}
	fmt.Fprintln(w, "\n## The checks, and what to change when one fails")
	fmt.Fprintln(w)
	for _, c := range models.Remedied() {
		fmt.Fprintf(w, "- **%s**: %s\n", c, models.Remedy(c))
	}
	fmt.Fprintln(w, "\n## The known-bad locks")
	fmt.Fprintln(w, "\nEach must FAIL its lessons on every resource and every seed; a change that lets one pass is a red build.")
	fmt.Fprintln(w, "\n| lock | the bug | caught by | check |\n|---|---|---|---|")
	for _, b := range scenarios.Backends() {
		for _, r := range b.Regressions() {
			bug := strings.ReplaceAll(r.Bug, "|", `\|`)
			if r.Link != "" {
				bug += fmt.Sprintf(" ([source](%s))", r.Link)
			}
			fmt.Fprintf(w, "| `%s` | %s | %s | %s |\n", r.Name, bug, "`"+strings.Join(r.Scenarios, "`, `")+"`", r.Check)
		}
	}
	fmt.Fprintln(w, "\n"+generatedEnd)
}

// expectations says a lesson's documented verdict for a correct lock, by
// resource: PASS on every one, or the resources where it is otherwise.
func expectations(s scenarios.Scenario) string {
	if s.Expect == nil {
		return "PASS on every resource"
	}
	var other []string
	for _, r := range resource.Names() {
		switch s.Expect(r) {
		case models.ExpectPass:
		case models.ExpectFail:
			other = append(other, "FAIL on "+r+" (documented)")
		default:
			other = append(other, "either verdict on "+r+" (timing decides)")
		}
	}
	if len(other) == 0 {
		return "PASS on every resource"
	}
	return strings.Join(other, ", ") + "; PASS on the others"
}

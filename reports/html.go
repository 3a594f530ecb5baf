package reports

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/locklab/locklab/models"
)

//go:embed page.html.tmpl
var pageText string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"f":     func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"add":   func(a, b float64) float64 { return a + b },
	"lower": strings.ToLower,
}).Parse(pageText))

// htmlRun is one run as the page shows it.
type htmlRun struct {
	Run
	ID       string
	Status   string
	Class    string
	Open     bool
	Timeline *timeline
	NotDrawn string
	Story    []string
	Views    map[string]string
}

// matrixRow is one scenario × lock (× seed) of the verdict matrix.
type matrixRow struct {
	Scenario, Lock string
	Seed           uint64
	Cells          []matrixCell
}

type matrixCell struct {
	ID, Status, Class string
	Missing           bool
}

func writeHTML(w io.Writer, r Report, views map[int]map[string]string) error {
	asExpected, not, skipped := counts(r.Runs)
	data := struct {
		Report
		AsExpected, Not, Skipped int
		Resources                []string
		Rows                     []matrixRow
		Runs                     []htmlRun
	}{Report: r, AsExpected: asExpected, Not: not, Skipped: skipped}
	seeds := map[uint64]bool{}
	for _, run := range r.Runs {
		seeds[run.Seed] = true
		if !slices.Contains(data.Resources, run.Resource) {
			data.Resources = append(data.Resources, run.Resource)
		}
	}
	many := len(r.Runs) > 12
	rowOf := map[[3]string]int{}
	for _, i := range order(r.Runs) {
		run := r.Runs[i]
		hr := htmlRun{Run: run, ID: fmt.Sprintf("run-%d", i), Status: status(run), Class: class(run), Views: views[i]}
		hr.Open = !many || !run.Matches
		if len(run.Events) > 0 {
			hr.Story = story(run.Events)
		}
		if n := len(run.Events); n > 0 && n <= maxDrawn {
			tl := buildTimeline(run.Events)
			hr.Timeline = &tl
		} else if n > maxDrawn {
			hr.NotDrawn = fmt.Sprintf("The timeline is not drawn: the history has %d events (more than %d). "+
				"Its file has them all; `locklab check` judges it.", n, maxDrawn)
		}
		data.Runs = append(data.Runs, hr)
		key := [3]string{run.Scenario, run.Lock, fmt.Sprint(run.Seed)}
		row, ok := rowOf[key]
		if !ok {
			row = len(data.Rows)
			rowOf[key] = row
			data.Rows = append(data.Rows, matrixRow{Scenario: run.Scenario, Lock: run.Lock, Seed: run.Seed,
				Cells: make([]matrixCell, len(data.Resources))})
			for c := range data.Rows[row].Cells {
				data.Rows[row].Cells[c].Missing = true
			}
		}
		col := slices.Index(data.Resources, run.Resource)
		data.Rows[row].Cells[col] = matrixCell{ID: hr.ID, Status: hr.Status, Class: hr.Class}
	}
	if len(seeds) <= 1 {
		for i := range data.Rows {
			data.Rows[i].Seed = 0 // one seed: the column says nothing
		}
	}
	return page.Execute(w, data)
}

// class is a run's colour on the page.
func class(r Run) string {
	switch {
	case r.Skipped != "":
		return "skip"
	case !r.Matches:
		return "bad"
	case r.Verdict == models.Fail:
		return "caught"
	}
	return "ok"
}

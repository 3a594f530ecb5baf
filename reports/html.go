package reports

import (
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/locklab/locklab/models"
)

//go:embed page.html.tmpl
var pageText string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"f":     func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"add":   func(a, b float64) float64 { return a + b },
	"sub":   func(a, b int) int { return a - b },
	"lower": strings.ToLower,
	// finding: the mutex model's FAIL, shown beside the verdict, never as it.
	"finding": func(v models.Verdict) bool { return v.Check == beliefCheck && v.Result == models.Fail },
	"calloutX": func(c callout) float64 {
		switch c.Anchor {
		case "end":
			return c.X - c.W + 2
		case "middle":
			return c.X - c.W/2
		}
		return c.X - 2
	},
}).Parse(pageText))

// pagedOver is the number of runs above which each run's detail is a page
// of its own and the index shows in full only the runs not as documented:
// a report of every scenario stays light to open.
const pagedOver = 12

// maxInline bounds the runs drawn in full on a paged index.
const maxInline = 20

// htmlRun is one run as a page shows it; its links are relative to that
// page's directory.
type htmlRun struct {
	Run
	ID       string
	Status   string
	Class    string
	Verdicts string // what the index's verdict filter matches
	Why      string // one line: why it failed, or why it was skipped
	Href     string // from the index, where its detail is
	Page     string // from the index, its own page ("" if none)
	Timeline *timeline
	NotDrawn string
	Story    []string
	Views    map[string]string
}

// groupRow is a row of the grouped matrix (Group) as the index shows it.
type groupRow struct {
	MatrixRow
	Verdicts string // what the index's verdict filter matches
	Cells    []groupCell
}

// groupCell is a grouped cell with where it leads: its run, or — for a
// cell of several runs — the list of runs showing only them (Only, their
// ids), or the first of them on an index that has no list.
type groupCell struct {
	MatrixCell
	Href, Only string
}

// indexPage is what the index shows.
type indexPage struct {
	Report
	AsExpected, Not, Skipped    int
	Interrupted                 int // stopped by Ctrl-C: no verdict, and not skipped
	Unjudged                    int // not judged: the machine was too busy (models.NotJudged)
	Scenarios, Locks, Resources []string
	// Groups are the grouped matrix's rows (Group), Bad the runs not as
	// documented, each a line with why.
	Groups []groupRow
	Bad    []htmlRun
	// Paged: each run has its own page; Inline are drawn in full on the
	// index (all of a small report, else those not as documented); List
	// is every run, a line each.
	Paged        bool
	Inline, List []htmlRun
}

// runPage is one run's own page.
type runPage struct {
	htmlRun
	Title    string
	Complete bool
	Index    string
}

// pageOf is where run i's own page is, relative to the report's
// directory: beside its history when that lies inside the directory,
// else under runs/.
func pageOf(r Run, i int) string {
	base := path.Clean(strings.ReplaceAll(strings.TrimSuffix(strings.TrimSuffix(r.History, ".jsonl"), ".history"), `\`, "/"))
	if r.History == "" || path.IsAbs(base) || base == ".." || strings.HasPrefix(base, "../") {
		return fmt.Sprintf("runs/run-%d.html", i)
	}
	return base + ".html"
}

// href is target (relative to the report's directory) as a link from a
// page in the directory from.
func href(from, target string) string {
	up := strings.Repeat("../", strings.Count(path.Clean(from), "/")+1)
	if from == "." || from == "" {
		up = ""
	}
	parts := strings.Split(path.Clean(strings.ReplaceAll(target, `\`, "/")), "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return up + strings.Join(parts, "/")
}

// summary is run i as a line of the index shows it.
func summary(r Run, i int) htmlRun {
	return htmlRun{Run: r, ID: fmt.Sprintf("run-%d", i), Status: status(r), Class: class(r),
		Verdicts: verdicts(r), Why: firstFailure(r)}
}

// detail makes run i as shown by a page in directory from.
func detail(r Run, i int, views map[string]string, from string) htmlRun {
	hr := summary(r, i)
	if r.History != "" {
		hr.Run.History = href(from, r.History)
	}
	if len(views) > 0 {
		hr.Views = map[string]string{}
		for check, v := range views {
			hr.Views[check] = href(from, v)
		}
	}
	if len(r.Events) > 0 {
		hr.Story = story(r.Events)
	}
	if n := len(r.Events); n > 0 && n <= maxDrawn {
		tl := buildTimeline(r.Events)
		hr.Timeline = &tl
	} else if n > maxDrawn {
		hr.NotDrawn = fmt.Sprintf("The timeline is not drawn: the history has %d events (more than %d). "+
			"Its file has them all; `locklab check` judges it.", n, maxDrawn)
	}
	return hr
}

// verdicts are the words the index's verdict filter matches for a run.
func verdicts(r Run) string {
	switch {
	case r.Skipped != "":
		return "skip"
	case !r.Matches:
		return "bad " + strings.ToLower(string(r.Verdict))
	}
	return strings.ToLower(string(r.Verdict))
}

// writePages writes the index to index and, when the report is paged,
// each run's own page through page(rel, write).
func writePages(r Report, views map[int]map[string]string, index io.Writer,
	pageFile func(rel string, write func(io.Writer) error) error) error {
	data := indexPage{Report: r, Paged: len(r.Runs) > pagedOver}
	data.AsExpected, data.Not, data.Unjudged, data.Skipped, data.Interrupted = counts(r.Runs)
	for _, run := range r.Runs {
		for _, s := range []struct {
			list *[]string
			name string
		}{{&data.Scenarios, run.Scenario}, {&data.Locks, run.Lock}, {&data.Resources, run.Resource}} {
			if !slices.Contains(*s.list, s.name) {
				*s.list = append(*s.list, s.name)
			}
		}
	}
	hrefs := make([]string, len(r.Runs))
	var errs []error
	for _, i := range order(r.Runs) {
		run := r.Runs[i]
		line := summary(run, i)
		inline := !data.Paged || (!run.Matches && run.Skipped == "" && len(data.Inline) < maxInline)
		if data.Paged && run.Skipped == "" {
			rel := pageOf(run, i)
			line.Page, line.Href = href(".", rel), href(".", rel)
			from := path.Dir(rel)
			p := runPage{htmlRun: detail(run, i, views[i], from), Title: r.Title, Complete: r.Complete, Index: href(from, IndexFile)}
			if err := pageFile(rel, func(w io.Writer) error { return page.ExecuteTemplate(w, "runpage", p) }); err != nil {
				errs = append(errs, err)
			}
		}
		if inline {
			d := detail(run, i, views[i], ".")
			d.Page = line.Page
			data.Inline = append(data.Inline, d)
			line.Href = "#" + line.ID
		}
		data.List = append(data.List, line)
		hrefs[i] = line.Href
		if !run.Matches && run.Skipped == "" && !run.Interrupted {
			data.Bad = append(data.Bad, line)
		}
	}
	data.Groups = groups(r.Runs, hrefs, data.Paged)
	if err := page.ExecuteTemplate(index, "index", data); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
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

// WriteRunPage writes run r as a page of its own, as a report's run pages
// show one — its timeline, checks, effects and story — titled title: the
// live lab serves it for the run as it grows.
func WriteRunPage(w io.Writer, r Run, title string) error {
	return page.ExecuteTemplate(w, "runpage", runPage{htmlRun: detail(r, 0, nil, "."), Title: title, Complete: true})
}

// groups is the grouped matrix of runs, each cell leading to its runs
// (hrefs: each run's link from the index).
func groups(runs []Run, hrefs []string, paged bool) []groupRow {
	var out []groupRow
	for _, row := range Group(runs).Rows {
		g := groupRow{MatrixRow: row}
		for _, c := range row.Cells {
			gc := groupCell{MatrixCell: c}
			if len(c.Runs) > 0 {
				gc.Href = hrefs[c.Runs[0]]
			}
			if len(c.Runs) > 1 && paged {
				ids := make([]string, len(c.Runs))
				for i, at := range c.Runs {
					ids[i] = fmt.Sprintf("run-%d", at)
				}
				gc.Href, gc.Only = "#runs", strings.Join(ids, " ")
			}
			for _, at := range c.Runs {
				g.Verdicts += " " + verdicts(runs[at])
			}
			g.Cells = append(g.Cells, gc)
		}
		g.Verdicts = strings.TrimSpace(g.Verdicts)
		out = append(out, g)
	}
	return out
}

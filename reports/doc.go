// Package reports turns the results of a run — verdicts, their evidence,
// the recorded histories — into files people read: index.html (one
// self-contained page: the verdict matrix, and per run a timeline drawn to
// scale, the lesson, a narrative, the checks and the replay command),
// summary.md (for a pull-request comment) and junit.xml (for CI
// dashboards). It knows histories and verdicts, nothing of etcd: callers
// fill a Report from what they ran.
//
// Where things are:
//   - reports.go: Report, Run and Write (the run's files, atomically)
//   - html.go: index.html; timeline.go: each run's timeline, drawn to
//     scale; narrative.go: the story of a run in words
//   - markdown.go: summary.md; junit.go: junit.xml
//   - bench.go: bench.html, the bench's plots
package reports

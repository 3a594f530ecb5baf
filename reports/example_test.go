package reports_test

import (
	"fmt"
	"os"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/reports"
)

// A report of two results: the page, the pull-request summary and the JUnit
// file are written side by side.
func Example() {
	dir, _ := os.MkdirTemp("", "report")
	defer os.RemoveAll(dir)
	err := reports.Write(dir, reports.Report{Title: "my lock", Complete: true, Runs: []reports.Run{
		{Scenario: "paused-holder", Lock: "mine", Resource: "fenced", Expected: "PASS", Verdict: models.Pass, Matches: true},
		{Scenario: "paused-holder", Lock: "mine", Resource: "unfenced", Expected: "FAIL", Verdict: models.Fail, Matches: true},
	}})
	fmt.Println(err)
	for _, f := range []string{reports.IndexFile, reports.SummaryFile, reports.JUnitFile} {
		_, err := os.Stat(dir + "/" + f)
		fmt.Println(f, err == nil)
	}
	// Output:
	// <nil>
	// index.html true
	// summary.md true
	// junit.xml true
}

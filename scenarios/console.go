package scenarios

import (
	"fmt"
	"io"
)

// progress prints one configuration's results as a line, with its notes
// under it.
func progress(w io.Writer, rs []Result) {
	if len(rs) == 0 {
		return
	}
	line := fmt.Sprintf("%-21s %-17s", rs[0].Scenario, rs[0].Lock)
	for _, r := range rs {
		mark := "ok"
		switch {
		case r.Skipped != "":
			mark = "skipped"
		case !r.Matches:
			mark = "UNEXPECTED"
		}
		if r.Verdict == "" {
			line += fmt.Sprintf("  %s %s", r.Resource, mark)
			continue
		}
		line += fmt.Sprintf("  %s %s (%s)", r.Resource, r.Verdict, mark)
	}
	fmt.Fprintf(w, "%s  %.1fs\n", line, rs[len(rs)-1].Seconds)
	for _, r := range rs[:1] {
		if r.Error != "" {
			fmt.Fprintf(w, "    note: %s\n", r.Error)
		}
		for _, a := range r.Retried {
			fmt.Fprintf(w, "    ran again after %s\n", a)
		}
	}
}

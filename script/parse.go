package script

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
)

// Step is one command of a scenario script: `#` lines narrate, a command
// line follows, then `----` and the expected output up to a blank line.
type Step struct {
	// Line is the command's line in its file.
	Line      int
	Narration []string
	Cmd       Cmd
	Expected  string
}

// Parse reads a script, checking every command as ParseLine does. name is
// used in errors ("name:line: …").
func Parse(name, text string) ([]Step, error) {
	var steps []Step
	var narration []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, MaxLine)
	line := 0
	declared := map[string]bool{}
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		switch {
		case s == "":
			continue
		case strings.HasPrefix(s, "#"):
			narration = append(narration, strings.TrimSpace(strings.TrimPrefix(s, "#")))
			continue
		}
		cmd, err := ParseLine(s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		st := Step{Line: line, Narration: narration, Cmd: cmd}
		narration = nil
		if !sc.Scan() || strings.TrimSpace(sc.Text()) != "----" {
			return nil, fmt.Errorf("%s:%d: %s: want a line \"----\" after the command", name, line, cmd.Name)
		}
		line++
		var out []string
		for sc.Scan() {
			line++
			if strings.TrimSpace(sc.Text()) == "" {
				break
			}
			out = append(out, sc.Text())
		}
		st.Expected = strings.Join(out, "\n")
		if cmd.Name == "setup" && len(steps) > 0 {
			return nil, fmt.Errorf("%s:%d: setup: must be the script's first command", name, st.Line)
		}
		if cmd.Name == "client" {
			declared[cmd.Client] = true
		} else if cmd.Client != "" && !declared[cmd.Client] {
			return nil, fmt.Errorf("%s:%d: %s: client %s is not declared (a step \"client %s member=m1\" before it)",
				name, st.Line, cmd.Name, cmd.Client, cmd.Client)
		}
		steps = append(steps, st)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("%s:%d: a line longer than %d bytes", name, line+1, MaxLine)
	} else if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return steps, nil
}

// MaxLine is the longest line of a script Parse reads.
const MaxLine = 64 << 10

// Render writes steps and their outputs in the scenario-file format,
// narration first (each line a comment).
func Render(narration []string, lines, outs []string) string {
	var b strings.Builder
	for _, n := range narration {
		b.WriteString(strings.TrimRight("# "+n, " ") + "\n")
	}
	for i, l := range lines {
		out := ""
		if i < len(outs) {
			out = outs[i]
		}
		fmt.Fprintf(&b, "%s\n----\n%s\n\n", l, out)
	}
	return b.String()
}

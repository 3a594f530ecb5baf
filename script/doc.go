// Package script is the scenario-file language: one reader, the commands
// it runs on any store's run (a Target), and the drawn scripts of exploration and the random
// scenario.
//
// A script is narrated steps in the datadriven format: `#` lines narrate, a
// command line follows, then `----` and the output the step must print:
//
//	pause c1 at=before-write
//	----
//	c1: will pause at before-write
//
// Every command and every argument's value is checked when the line is
// read (ParseLine, Parse), so a typo is an error naming its file and line,
// never a step that silently does less.
//
// Where things are:
//   - cmd.go: Cmd, ParseLine and what each command takes
//   - parse.go: Step, Parse, Render
//   - do.go: Do — each command's one call into the run — Run (a script,
//     each step compared with its output) and RunDrawn (a drawn script,
//     the steps that set up and apply faults compared)
//   - walk.go: Walk, the state machine that draws scripts from what each
//     step came to, and DrawScript
package script

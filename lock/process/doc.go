// Package process is the protocol a lock run as a program speaks with the
// lab, on any store: how its name starts (ExecPrefix), the variables it is
// started with (Env…), the time it is given to start and to stop, and the
// context that allows for it (WithStartup). The programs themselves are
// driven by the lab (internal/proc); docs/any-language.md
// describes the lines they read and answer.
package process

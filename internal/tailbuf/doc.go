// Package tailbuf keeps the last few KiB a process wrote, for the one line
// of an error that says what it said before it failed.
//
// Where things are: tailbuf.go, the bounded buffer and its last line.
package tailbuf

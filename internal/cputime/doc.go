// Package cputime reads the CPU time this process has used.
//
// Where things are: cputime.go (ErrUnsupported), cputime_unix.go (Self,
// from getrusage), cputime_other.go (Self elsewhere: ErrUnsupported).
package cputime

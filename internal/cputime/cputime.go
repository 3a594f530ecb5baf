// Package cputime reads the CPU time this process has used.
package cputime

import "errors"

// ErrUnsupported: this platform gives no CPU time of a process.
var ErrUnsupported = errors.New("cputime: not available on this platform")

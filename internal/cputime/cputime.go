package cputime

import "errors"

// ErrUnsupported: this platform gives no CPU time of a process.
var ErrUnsupported = errors.New("cputime: not available on this platform")

//go:build !unix

package cputime

import "time"

// Self is the CPU time this process has used; unsupported here.
func Self() (time.Duration, error) { return 0, ErrUnsupported }

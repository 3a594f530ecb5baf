//go:build !unix

package piddir

// dead cannot ask here: every process is taken to run.
func dead(int) bool { return false }

// Package poll waits for a condition that can only be asked about, not
// watched: the server's view of a lease, a member's answer to a read.
package poll

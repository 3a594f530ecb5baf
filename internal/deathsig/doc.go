// Package deathsig has the kernel kill a server the lab starts (a Redis, a
// ZooKeeper) if the lab dies without stopping it — a crash, a SIGKILL — so
// that no server outlives the lab. Where the kernel cannot (not Linux), the
// next run's sweep of its directories (internal/piddir) is what is left.
package deathsig

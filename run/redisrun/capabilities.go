package redisrun

import (
	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/script"
)

// The stores a Redis run is on, by name, and what their locks run on:
// one primary with replicas, or Redlock's independent masters.
const (
	Store        = "redis"
	Label        = "one Redis primary"
	MastersStore = "redlock"
	MastersLabel = "Redlock's independent masters"
)

// Capabilities are what a run on Redis can do beyond every run's, each
// with how: on one primary with replicas, or (masters) on independent
// masters (see scenarios.StoreKind).
func Capabilities(masters bool) script.Capabilities {
	if masters {
		return script.Capabilities{
			script.Masters:         "independent masters, the lock a majority of keys set with the same value",
			script.Split:           split,
			script.SplitAcquire:    split,
			script.JumpClock:       clock,
			script.WallClockLeases: "a key expires by its master's wall clock",
			script.Restart:         "the master killed and started again at once",
			script.Volatile:        "no RDB or AOF, as the lab runs Redis: a master restarted comes back empty",
			script.CutLink:         "the client's link to that master cut, its links to the others left",
			script.ReleaseAnswerLost: "each of the client's links holds every answer from the moment the grant's key " +
				"no longer holds its value on its master; once that is so on every master, the connections are severed",
			script.AcquireAnswerLost: "the client's links hold every answer from its acquire's first write on until " +
				"the lock's key stands on a majority of the masters, then the connections are severed",
		}
	}
	return script.Capabilities{
		script.OneStore:        "a primary that replicates to its replicas asynchronously",
		script.Failover:        "the primary killed and a replica promoted, as Sentinel does",
		script.IsolateMember:   "a server's replication links cut",
		script.Split:           split,
		script.SplitAcquire:    split,
		script.JumpClock:       clock,
		script.WallClockLeases: "a key expires by its server's wall clock",
		script.Restart:         "the server killed and started again at once",
		script.Volatile:        "no RDB or AOF, as the lab runs Redis: a server restarted comes back empty",
		script.ReleaseAnswerLost: "the client's link holds every answer from the moment the grant's key no longer " +
			"holds its value on the primary (the answers before, a GET's, pass), then the connection is severed",
		script.AcquireAnswerLost: "the client's link holds every answer from its acquire's first write on until the " +
			"lock's key stands on the primary, then the connection is severed",
		script.HoldAnswers: "the client's link holds every answer from its next request carrying a grant's value " +
			"(a renewal, read off the wire), for a while",
		script.KeepAlives: "every request carrying a grant's value read off the client's link: its renewals, " +
			"timed as sent (their answers are not told apart)",
		script.Told: "a watchdog's renewal finding the key gone or another's, or none answered for a TTL " +
			"(a lock that renews nothing cannot tell)",
	}
}

// clock is how a run on Redis moves a server's wall clock.
const clock = "the server's wall clock offset by a shim preloaded into it (built from source with the system's C " +
	"compiler): Redis expires keys by its wall clock"

// split is how a run on Redis stops a client inside its acquire or
// release: the commands it sends are read off the wire (RESP), and the
// client's links are cut before the one after its acquire's first write,
// or its release's first command, is forwarded.
const split = "the client's links cut before the command after its acquire's first write, or its release's first, " +
	"is forwarded (RESP read off the wire)"

// Requests reads a client connection's commands off the wire (see
// redisd.Requests): a pause at in-release stops the client before its
// release's second command reaches the server.
func (s store) Requests() func([]byte) bool { return redisd.Requests() }

// Writes reads a client connection's commands that may write off the
// wire (see redisd.Writes): a pause at in-acquire stops the client before
// the command after its acquire's first write reaches the server.
func (s store) Writes() func([]byte) bool { return redisd.Writes() }

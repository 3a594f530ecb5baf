package redislock

import "github.com/locklab/locklab/lock"

// stories are what locklab explain tells of a lock beyond its line
// (Lock.Story), by name.
var stories = map[string]string{
	"redis-setnx": "The lock most Redis users write: SET key value NX PX ttl, with a random value so that release " +
		"(a Lua script that deletes the key only if it still holds that value) never frees another's lock. The " +
		"lab's version takes a fencing token from an INCR in the same script. It runs on a real redis-server " +
		"primary with two asynchronous replicas that the lab starts, every client behind a link of its own.\n\n" +
		"What it gets right: stale-release (a late release deletes nothing of the next holder's) and " +
		"crashed-holder. What it cannot do: keep a lock for a holder that works longer than the TTL (nothing " +
		"renews the key), or survive a failover — the primary acknowledges the grant before its replicas have " +
		"it, and a promoted replica grants the lock again, with the same token (failover). Its known-bad " +
		"sibling redis-del releases with a plain DEL and frees the next holder's lock (the oversell).\n\n" +
		"See it: locklab run --lock redis-setnx,redis-del --scenario stale-release,failover --resource unfenced,fenced",
	"redis-watchdog": "redis-setnx whose holder renews its key every TTL/3 while it holds it, by a script that " +
		"extends the key only if it still holds its value, as Redisson's lock watchdog does. A live holder keeps " +
		"its lock however long it works; a paused or cut-off one cannot renew, and its lock goes to the next " +
		"client when the key expires — the pause the watchdog cannot see, so fence what you protect. A failover " +
		"loses it like any single-primary lock.\n\n" +
		"See it: locklab run --lock redis-watchdog --scenario paused-holder,failover --resource unfenced,fenced",
	"redlock": "Redlock sets the same key with the same random value on five independent masters and holds the " +
		"lock if a majority took it within the TTL, less the time that took and a clock-drift allowance; the lab " +
		"runs it with go-redsync/redsync. A minority of masters may fail. It gives no fencing token, so a holder " +
		"paused past its TTL writes after the next holder and no store can tell (Kleppmann's critique): on the " +
		"fenced store every write of it would be refused, so the lab runs it on the unfenced one only.\n\n" +
		"See it: locklab run --lock redlock --scenario redlock-paused --resource unfenced",
}

func init() { lock.Tell(locks, stories) }

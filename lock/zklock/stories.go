package zklock

import "github.com/locklab/locklab/lock"

// stories are what locklab explain tells of a lock beyond its line
// (Lock.Story), by name.
var stories = map[string]string{
	"zk-lock": "ZooKeeper's lock recipe as github.com/go-zookeeper/zk v1.0.4 ships it: each client creates a " +
		"protected ephemeral-sequential node under the lock's path, the lowest node holds the lock, and every " +
		"other client watches the node just before its own. The node lives as long as the client's session: " +
		"the session is the lease, its timeout the TTL, and ZooKeeper's servers end it when the client stops " +
		"answering — a paused or cut-off holder loses the lock while it still believes it holds it.\n\n" +
		"The node's creation zxid grows with every grant: it is the fencing token (Chubby's sequencer), and a " +
		"fenced store refuses the late write of a holder whose session ended (paused-holder). The recipe takes " +
		"no context: a caller that stops waiting leaves the recipe waiting, and whatever it is granted then is " +
		"given back at once.",
}

func init() { lock.Tell(locks, stories) }

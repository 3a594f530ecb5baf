package zkrun

import "github.com/locklab/locklab/script"

// Store is ZooKeeper's name as a store, and Label what its locks run on.
const (
	Store = "zookeeper"
	Label = "a ZooKeeper ensemble"
)

// Capabilities are what a run on a ZooKeeper ensemble can do beyond every
// run's, each with how (see scenarios.StoreKind).
func Capabilities() script.Capabilities {
	return script.Capabilities{
		script.OneStore:          "an ensemble whose leader commits every write on a quorum",
		script.Lapse:             "the client's link cut until the ensemble ends its session",
		script.AcquireAnswerLost: "the client's connection cut once the server has sent the create's answer",
		script.ReleaseAnswerLost: "the client's links hold every answer from the moment the grant's node is gone, " +
			"then its connections are severed (its session lives on)",
		script.AcquireNextLost: "the request after the acquire's create held off the wire, the connection cut under it",
		script.Split:           "the client's links cut as the request after its release's first is read off the wire",
		script.SplitAcquire:    "the client's links cut as the request after its acquire's create is read off the wire",
		script.KillMember:      "the server's JVM killed, started again on its data at heal",
		script.IsolateMember:   "the server's peer links cut, its clients' links kept",
		script.KillLeader:      "the server that leads killed, started again at heal",
		script.WaitServed:      "until the faulted server serves nobody, another leads and every client was answered since",
		script.Told:            "the session's expiry, heard by the client once it reconnects",
		script.HoldAnswers:     "the client's link holds every answer from its next ping (read off the wire), for a while",
		script.JumpClock: "the server's wall clock offset by a shim preloaded into its JVM (built from source with " +
			"the system's C compiler)",
		script.MonotonicLeases: "sessions timed on System.nanoTime, a monotonic clock",
		script.KeepAlives: "every request the client sends on its session, a ping among them, read off its link " +
			"and timed as sent (their answers are not told apart)",
	}
}

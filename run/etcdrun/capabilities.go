package etcdrun

import "github.com/locklab/locklab/script"

// Store is etcd's name as a store, and Label what its locks run on.
const (
	Store = "etcd"
	Label = "etcd"
)

// Capabilities are what a run on etcd can do beyond every run's, each
// with how: the lessons that need no more are etcd's (see
// scenarios.StoreKind).
func Capabilities() script.Capabilities {
	return script.Capabilities{
		script.OneStore:          "a cluster of members that replicate every key by Raft",
		script.Revoke:            "LeaseRevoke on the client's lease",
		script.Lapse:             "the client's link cut until the cluster reports its lease gone",
		script.AcquireAnswerLost: "the client's link cut once the member has sent the acquire's write answer",
		script.ReleaseAnswerLost: "the client's link cut once the member has sent the release's answer",
		script.HoldAnswers:       "the member's answers to the client held from its next LeaseKeepAlive",
		script.KillMember:        "the member's process stopped, restarted on its data directory at heal",
		script.IsolateMember:     "the member's peer links cut, its clients' links kept",
		script.KillLeader:        "the member that leads stopped, restarted at heal",
		script.Told:              "a lease's keep-alive answered with its end, or none answered for a TTL",
		script.KeepAlives:        "every LeaseKeepAlive and its answer seen on the client's link",
		script.PinnedClients:     "each client has its member as its only endpoint",
		script.Split:             split,
	}
}

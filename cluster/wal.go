package cluster

import "go.etcd.io/etcd/server/v3/storage/wal"

// walSegmentBytes is the size of a member's WAL segment. etcd's default,
// 64 MB, preallocated on disk together with the next segment, made every
// 3-member cluster about 370 MB of temporary files; a lab's run writes a
// few thousand small entries, and 2 MB segments keep a cluster near 13 MB.
// etcd cuts a new segment when one fills, so a longer run only writes
// more of them.
const walSegmentBytes = 2 << 20

// The WAL's segment size is a variable of etcd's wal package, read by every
// member of the process: it is set once, before any member can start.
func init() { wal.SegmentSizeBytes = walSegmentBytes }

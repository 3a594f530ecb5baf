package zklock

import (
	"context"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/lock"
)

// mine is zk-release-mine, known-bad: zk-herd whose release deletes the
// node its session owns under the lock, looked up by owner, instead of the
// node of the grant it is given. Asked to release an older grant — a
// release retried after its answer was lost, once the client holds the
// lock again on the same session — it deletes the newer grant's node, and
// the next waiter is granted beside its holder. A lock object that keeps
// "my node" in one field and forgets which grant it belongs to does the
// same.
type mine struct{ herd }

// NewReleaseMine is zk-release-mine on c: known-bad.
func NewReleaseMine(c *zk.Conn, name string, opts lock.Options) (lock.Locker, error) {
	n, err := newNodes(c, name, opts)
	return &mine{herd{n}}, err
}

// Release deletes a node its session owns under the lock, whichever grant
// g names (the bug); none is lock.ErrNotHeld.
func (m *mine) Release(ctx context.Context, g lock.Grant) error {
	children, _, err := m.c.Children(m.path)
	if err != nil {
		return err
	}
	session := m.c.SessionID()
	for _, ch := range children {
		ok, st, err := m.c.Exists(m.path + "/" + ch)
		if err != nil {
			return err
		}
		if ok && st.EphemeralOwner == session {
			m.tells.stop(g.Token)
			return m.remove(ctx, m.path+"/"+ch)
		}
	}
	return lock.ErrNotHeld
}

var _ lock.Locker = (*mine)(nil)

package zkrun

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/lock/zklock"
	"github.com/locklab/locklab/run"
)

// Writes reads a client connection's requests for writes off the wire
// (see zkd.Writes): what loses an acquire's answer holds the answers from
// the client's first create on.
func (s store) Writes() func([]byte) bool { return zkd.Writes() }

// Requests reads a client connection's requests for those it waits on an
// answer to (see zkd.Requests): what loses the request after an
// acquire's write holds the first of them after the create.
func (s store) Requests() func([]byte) bool { return zkd.Requests() }

// Mark makes sure the lock's parent node stands — so that a client's
// first write is its lock node, not the parent a recipe makes on first
// use — and returns the zxid of its children's last change: a node made
// after has a later creation zxid.
func (s store) Mark(context.Context) (int64, error) {
	admin, path := s.e.ens.Admin(), s.e.lockPath()
	if err := zklock.MakePath(admin, path); err != nil {
		return 0, fmt.Errorf("making %s: %w", path, err)
	}
	_, st, err := admin.Exists(path)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return st.Pzxid, nil
}

// Written reports whether a node was made under the lock's parent since
// mark by client's session (read off its links; where none was read yet,
// a node of any session counts: the lesson has no other client at work
// meanwhile) — or one no session owns (a persistent node, the lock's bug
// to be judged, not a write the lab failed to see).
func (s store) Written(_ context.Context, client string, mark int64) (bool, error) {
	admin, path := s.e.ens.Admin(), s.e.lockPath()
	children, _, err := admin.Children(path)
	if err != nil {
		return false, err
	}
	session := s.e.sessionOf(client)
	for _, ch := range children {
		ok, st, err := admin.Exists(path + "/" + ch)
		if err != nil {
			return false, err
		}
		if ok && st.Czxid > mark && (session == 0 || st.EphemeralOwner == session || st.EphemeralOwner == 0) {
			return true, nil
		}
	}
	return false, nil
}

// Where says where Written looks.
func (s store) Where() string { return "node under " + s.e.lockPath() }

// Renewals reads a client connection's pings off the wire (see
// zkd.Pings): hold-answers holds the client's answers from its next one.
func (s store) Renewals() func([]byte) bool { return zkd.Pings() }

// ReleaseAnswerLost has client release its latest grant over links that
// fail one way once the release took effect: the answers are held from
// the moment the grant's node is gone, read on the ensemble, and once the
// lab has seen it gone the client's connections are severed, the answers
// unheard. The session lives on: the client reconnects on it.
func (e *Env) ReleaseAnswerLost(ctx context.Context, client string) (run.Outcome, error) {
	g, held, _ := e.Holding(client)
	switch {
	case !held:
		return run.Outcome{}, fmt.Errorf("release answer=lost: %s holds nothing", client)
	case g.Key == "":
		return run.Outcome{}, fmt.Errorf("release answer=lost: %s's grant names no node to watch on the ensemble", client)
	}
	admin := e.ens.Admin()
	return e.ReleaseAnswerLostWhen(ctx, client, func(context.Context, int) (bool, error) {
		ok, _, err := admin.Exists(g.Key)
		return err == nil && !ok, err
	})
}

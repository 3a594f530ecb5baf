package zklock

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/knownbad"
)

// Factory makes a Locker for the lock called name on a client's own
// ZooKeeper connection.
type Factory = lock.Factory[*zk.Conn]

// ErrUnknownLock: no ZooKeeper lock of that name.
var ErrUnknownLock = errors.New("zklock: unknown lock")

// Lock describes one ZooKeeper lock the lab runs by name.
type Lock = lock.Descriptor[*zk.Conn]

// locks are the ZooKeeper locks: the ones people use, then the known-bad.
var locks = []Lock{
	{Name: "zk-lock", Factory: NewRecipe,
		About: "go-zookeeper's Lock recipe as it ships: protected ephemeral-sequential nodes, each waiter watching its predecessor; the node's zxid as its token",
		Weak:  map[string]string{"lost-request": "liveness", "lost-acquire": "liveness"}},
	{Name: "zk-herd", Factory: NewHerd,
		About: "the naive recipe: each waiter watches the lock's children and looks again at every change — safe, but every release wakes every waiter (bench counts it)"},
	{Name: "zk-unprotected", Factory: NewUnprotected,
		About: "the recipe with plain ephemeral-sequential nodes, a create whose answer was lost asked again as is: known-bad",
		Bad: &lock.Regression{
			Name: "zk-unprotected",
			Bug: "creates its node with a plain ephemeral-sequential create and, when the connection breaks before " +
				"the answer, creates again: the first node, made all the same, stays under a session that lives on " +
				"and holds the lock for nobody — the client waits behind its own orphan, and so does everyone after " +
				"it (why Curator and go-zookeeper protect their nodes with a GUID and look for it after a broken connection)",
			Link:      "https://zookeeper.apache.org/doc/current/recipes.html#sc_recipes_GuidNote",
			Scenarios: []string{"lost-acquire"},
			Check:     "liveness",
		}},
	{Name: "zk-persistent", Factory: NewPersistent,
		About: "zk-unprotected with persistent nodes, not ephemeral: known-bad",
		Bad: &lock.Regression{
			Name: "zk-persistent",
			Bug: "makes its node persistent (sequential, not ephemeral): only its own release, or an acquire that " +
				"fails, deletes it, never its session's end — a client that dies holding the lock, or between its " +
				"create and its first look at the queue, leaves its node, and the lock is held by nobody for ever",
			Link:      "https://zookeeper.apache.org/doc/current/recipes.html#sc_recipes_Locks",
			Scenarios: []string{"split-acquire"},
			Check:     "liveness",
		}},
	{Name: "zk-release-mine", Factory: NewReleaseMine,
		About: "zk-herd whose release deletes the node its session owns, not the grant's: known-bad",
		Bad: &lock.Regression{
			Name: "zk-release-mine",
			Bug: "releases the node its session owns under the lock, looked up by owner, not the node of the grant " +
				"it is given: a release retried after its answer was lost, once the client holds the lock again on " +
				"the same session, deletes the newer grant's node, and the next waiter is granted beside the holder " +
				"(a release must name the grant it ends, as etcd issue 22082 shows of a key named after its session)",
			Link:      "https://github.com/etcd-io/etcd/issues/22082",
			Scenarios: []string{"retried-release"},
			Check:     "validity",
		}},
	{Name: "zk-deaf", Factory: NewDeaf,
		About: "zk-herd told of a lost session only by ZooKeeper's word of its expiry: known-bad",
		Bad: &lock.Regression{
			Name: "zk-deaf",
			Bug: "tells its holder the lock is lost (Grant.Lost) only when ZooKeeper says the session expired — which " +
				"a client cut off from the ensemble hears only once it reconnects: the holder works on, told nothing, " +
				"while the ensemble has ended its session and granted the next client (Curator counts the session " +
				"timeout from the disconnect instead)",
			Link:      "https://cwiki.apache.org/confluence/display/ZOOKEEPER/FAQ",
			Scenarios: []string{"holder-told"},
			Check:     "told-lost",
		}},
	{Name: "zk-ignores-deadline", Factory: knownbad.IgnoringDeadlineFactory(NewHerd),
		About: "zk-herd waited on with a context of its own, not the caller's: known-bad",
		Bad:   ptr(knownbad.IgnoringDeadlineRegression("zk-ignores-deadline"))},
}

func ptr[T any](v T) *T { return &v }

// Locks lists the ZooKeeper locks, the ones people use first, then the
// known-bad; a fresh slice each call.
func Locks() []Lock { return slices.Clone(locks) }

// Regressions are the known-bad ZooKeeper locks, each with the catalog
// lessons that must catch it and the check that does (Factory, etcd's, is
// nil: Find makes them).
func Regressions() []lock.Regression { return lock.Regressions(locks) }

// Find returns the ZooKeeper lock called name.
func Find(name string) (Lock, error) {
	l, ok := lock.Find(locks, name)
	if !ok {
		return Lock{}, fmt.Errorf("%w %q", ErrUnknownLock, name)
	}
	return l, nil
}

// Path is where the lock called name keeps its nodes under opts' prefix.
func Path(name string, opts lock.Options) string {
	return "/" + strings.Trim(path.Join(opts.Prefix, name), "/")
}

// recipe is zk-lock: one zk.Lock per acquire, kept until its release.
type recipe struct {
	c    *zk.Conn
	path string

	mu   sync.Mutex
	held map[int64]*zk.Lock // by grant token
}

// NewRecipe is zk-lock: go-zookeeper's Lock recipe as it ships, on c.
func NewRecipe(c *zk.Conn, name string, opts lock.Options) (lock.Locker, error) {
	if opts.TTL < 0 {
		return nil, fmt.Errorf("%w, got %d", lock.ErrBadTTL, opts.TTL)
	}
	if opts.Prefix == "" {
		opts.Prefix = lock.DefaultPrefix
	}
	return &recipe{c: c, path: Path(name, opts), held: map[int64]*zk.Lock{}}, nil
}

// Acquire takes the lock, or returns ctx's error once ctx ends. The recipe
// itself takes no context: a wait given up on goes on in the background,
// and what it is granted then is released at once.
func (r *recipe) Acquire(ctx context.Context) (lock.Grant, error) {
	l := zk.NewLock(r.c, r.path, zk.WorldACL(zk.PermAll))
	done := make(chan error, 1)
	go func() { done <- l.Lock() }()
	select {
	case err := <-done:
		if err != nil {
			return lock.Grant{}, expired(err)
		}
	case <-ctx.Done():
		go func() {
			if <-done == nil {
				l.Unlock() //nolint:errcheck // nobody is left to hear it
			}
		}()
		return lock.Grant{}, ctx.Err()
	}
	g, err := r.grantOf()
	if err != nil {
		l.Unlock() //nolint:errcheck // the grant could not be told: give it back
		return lock.Grant{}, err
	}
	r.mu.Lock()
	r.held[g.Token] = l
	r.mu.Unlock()
	return g, nil
}

// grantOf reads the node the lock was just granted on: the lowest of the
// lock's children, its zxid and its session.
func (r *recipe) grantOf() (lock.Grant, error) {
	children, _, err := r.c.Children(r.path)
	if err != nil {
		return lock.Grant{}, err
	}
	lowest, low := "", -1
	for _, ch := range children {
		_, n, ok := strings.Cut(ch, "lock-")
		seq, err := strconv.Atoi(n)
		if ok && err == nil && (low < 0 || seq < low) {
			lowest, low = ch, seq
		}
	}
	if lowest == "" {
		return lock.Grant{}, fmt.Errorf("zklock: granted, but %s has no lock node", r.path)
	}
	node := r.path + "/" + lowest
	ok, st, err := r.c.Exists(node)
	switch {
	case err != nil:
		return lock.Grant{}, err
	case !ok:
		return lock.Grant{}, fmt.Errorf("zklock: granted, but %s is gone", node)
	case st.EphemeralOwner != r.c.SessionID():
		return lock.Grant{}, fmt.Errorf("zklock: granted, but %s is another session's", node)
	}
	return lock.Grant{Key: node, Token: st.Czxid, Lease: st.EphemeralOwner}, nil
}

// Release deletes g's node; a node already gone (its session ended) is
// lock.ErrNotHeld.
func (r *recipe) Release(_ context.Context, g lock.Grant) error {
	r.mu.Lock()
	l, ok := r.held[g.Token]
	delete(r.held, g.Token)
	r.mu.Unlock()
	if !ok {
		return lock.ErrNotHeld
	}
	err := l.Unlock()
	if errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("%w: %s is gone", lock.ErrNotHeld, g.Key)
	}
	return err
}

// Close does nothing: the connection is its maker's.
func (r *recipe) Close() error { return nil }

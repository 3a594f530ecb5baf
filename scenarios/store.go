package scenarios

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/run/etcdrun"
	"github.com/locklab/locklab/script"
)

// etcdKind is etcd's store kind: what the locks of package etcdlock, and
// every etcdlock.Factory, run on. Its scripts' output is the queue lock's.
var etcdKind = StoreKind{Name: etcdrun.Store, Label: etcdrun.Label, Can: etcdrun.Capabilities(), Shows: "the queue lock"}

// Kinds are the kinds of store a run can name, each once: etcd's, then
// each registered backend's, in the order registered.
func Kinds() []StoreKind {
	out := []StoreKind{etcdKind}
	for _, b := range Backends() {
		if k := b.Kind(); !slices.ContainsFunc(out, func(o StoreKind) bool { return o.Name == k.Name }) {
			out = append(out, k)
		}
	}
	return out
}

// storeNames are the names of the stores a run can name, for a message.
func storeNames() string {
	var names []string
	for _, k := range Kinds() {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

// etcdStore runs a configuration on an etcd cluster.
type etcdStore struct {
	c       *cluster.Cluster
	factory etcdlock.Factory
	shape   grantShape
}

func (st etcdStore) Skip(s Scenario) string {
	if s.MemberFaults && st.c.IsExternal() {
		return "needs member faults, not available on an external cluster"
	}
	if !st.shape.key && s.losesReleaseAnswer() {
		return "does not apply to this lock: its grants name no key (Grant.Key is empty, as the contract allows), " +
			"so the lab cannot see a release whose answer it cuts take effect on the server, which the lesson is about"
	}
	return ""
}

func (st etcdStore) Members() int { return len(st.c.Members()) }

// Resources are the resources asked for that the lock's grants can write
// to: an etcd-guarded write needs a key besides a token (tokenless skips
// what needs a token, on any store); the others are skipped, saying why.
func (st etcdStore) Resources(asked []string) ([]string, map[string]string) {
	why := map[string]string{}
	for _, r := range asked {
		switch {
		case !st.shape.key && st.shape.token && r == "etcd-guarded":
			why[r] = "the lock's grants name no key (Grant.Key is empty, as the contract allows for a token of its " +
				"own), so an etcd write cannot be guarded by them: its token fences the fenced resource instead"
		}
	}
	return slices.DeleteFunc(slices.Clone(asked), func(r string) bool { return why[r] != "" }), why
}

func (st etcdStore) Open(ctx context.Context, cfg EngineConfig) (Engine, func() error, error) {
	env, err := etcdrun.New(etcdrun.Config{Cluster: st.c, Factory: st.factory, TTL: cfg.TTL, Minimum: cfg.Minimum,
		OpTimeout: cfg.OpTimeout, RunID: cfg.RunID, Sinks: cfg.Sinks, Resource: cfg.Resources})
	if err != nil {
		return nil, nil, err
	}
	return env, func() error { return errors.Join(env.Close(), restore(context.WithoutCancel(ctx), st.c)) }, nil
}

// grantShape is what a lock's grants carry: a fencing token, and a key an
// etcd write can be guarded by (Grant.Token, Grant.Key).
type grantShape struct{ token, key bool }

// shape is what lock's grants carry; a lock of another store, or one whose
// grant could not be learnt, is taken to carry both (its lessons say
// otherwise if it does not).
func (cfg Config) shape(lock string) grantShape {
	if s, ok := cfg.shapes[lock]; ok {
		return s
	}
	return grantShape{token: true, key: true}
}

// shapesOf learns, for each etcd lock of jobs, what its grants carry, from
// one grant on c (probe: a Locker alone, under a prefix of its own), and
// for each lock of another store that has a preflight, whether they carry
// a token. A lock that was not granted is left out: its lessons will say
// why.
func shapesOf(ctx context.Context, c *cluster.Cluster, own Servers, jobs []job) map[string]grantShape {
	out := map[string]grantShape{}
	tried := map[string]bool{}
	for _, j := range jobs {
		if tried[j.lock] {
			continue
		}
		tried[j.lock] = true
		if j.other != nil && j.other.Preflight != nil {
			if token, err := j.other.Preflight(ctx, own); err == nil {
				out[j.lock] = grantShape{token: token, key: true}
			}
			continue
		}
		if j.factory == nil {
			continue
		}
		if g, err := probe(ctx, c, j.factory); err == nil {
			out[j.lock] = grantShape{token: g.Token != 0, key: g.Key != ""}
		}
	}
	return out
}

// faultsMembers reports whether s acts on the store's members — by its
// workload or a step of its script (isolate, kill, failover) — so that its
// servers cannot be shared with another configuration.
func (s Scenario) faultsMembers() bool {
	if s.MemberFaults {
		return true
	}
	steps, err := s.Script()
	return err != nil || slices.ContainsFunc(steps, func(st script.Step) bool {
		return slices.Contains([]string{"isolate", "kill", "failover"}, st.Cmd.Name)
	})
}

// losesReleaseAnswer reports whether s's script cuts a release's answer
// (release answer=lost): the lab then watches the grant's key on the
// server to see the release take effect.
func (s Scenario) losesReleaseAnswer() bool {
	steps, err := s.Script()
	return err == nil && slices.ContainsFunc(steps, func(st script.Step) bool {
		return st.Cmd.Name == "release" && st.Cmd.Answer != ""
	})
}

// tokenFindings lists the resources on which s's documented FAIL is one
// only a fencing token can show: its script's check step names no failed
// check but stale-writes and tokens for them ("unfenced: FAIL (stale-writes
// FAIL)": a late write that, without tokens, reads as one more increment).
func (s Scenario) tokenFindings() []string {
	steps, err := s.Script()
	if err != nil {
		return nil
	}
	other := func(check string) bool { return check != "stale-writes" && check != "tokens" }
	var out []string
	for _, d := range documentedVerdicts(steps) {
		if d.verdict == "FAIL" && len(d.failed) > 0 && !slices.ContainsFunc(d.failed, other) {
			out = append(out, d.resource)
		}
	}
	return out
}

// tokenless skips, for a lock whose grants carry no token (shape), the
// resources of ran that fence by one, and those on which s's finding
// needs one (see tokenFindings).
func tokenless(s Scenario, shape grantShape, ran []string, skipped map[string]string) ([]string, map[string]string) {
	if shape.token {
		return ran, skipped
	}
	for _, r := range ran {
		if r == "fenced" || r == "etcd-guarded" {
			skipped[r] = "the lock's grants carry no fencing token (Grant.Token is zero; a program answers no token=), so a fenced store refuses " +
				"every write of its holders: the store cannot fence what it is not given"
		}
	}
	for _, r := range s.tokenFindings() {
		if slices.Contains(ran, r) {
			skipped[r] = "does not apply to this lock: the lesson's finding on " + r + " is a stale write, which only " +
				"a fencing token shows, and the lock's grants carry none (Grant.Token is zero)"
		}
	}
	return slices.DeleteFunc(ran, func(r string) bool { return skipped[r] != "" }), skipped
}

// EtcdKind is etcd's store kind: what every etcdlock.Factory runs on.
func EtcdKind() StoreKind { return etcdKind }

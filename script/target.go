package script

import (
	"context"
	"time"

	"github.com/locklab/locklab/run"
)

// Target is what a script runs on: one run of one lock on one store. Each
// store's run on the run engine (etcdrun.Env, redisrun.Env, zkrun.Env) is
// one, so the catalog's scripts, their outputs and their histories are the
// same on every store. A command a store cannot do (isolate a
// member of a store that has none) answers an error saying so.
type Target interface {
	Runner
	Workload
	Faults
}

// Runner is the run as a whole: its setting, its clients and its checks.
type Runner interface {
	// Bind makes ctx the run's context: background steps outlive the step
	// that starts them and end with ctx.
	Bind(ctx context.Context)
	// Members names the store's members (servers), in order.
	Members() []string
	// TTL is the lease (key expiry) in seconds the run's locks use.
	TTL() int
	// Resources names the run's resources, in history order.
	Resources() []string
	AddClient(ctx context.Context, name, member string) error
	// Check judges every history so far.
	Check() (run.Outcome, error)
}

// Workload is what clients do with the lock.
type Workload interface {
	Acquire(ctx context.Context, client string) (run.Outcome, error)
	CSWork(ctx context.Context, client string, d time.Duration) (run.Outcome, error)
	ReleaseGrant(ctx context.Context, client, label string) (run.Outcome, error)
	// Start runs step for client in the background; Await reads its outcome.
	Start(ctx context.Context, client string, doing run.Doing, step func(context.Context, string) (run.Outcome, error)) (run.Outcome, error)
	Await(ctx context.Context, client string) (run.Outcome, error)
	WaitLeaseGone(ctx context.Context, client string) (run.Outcome, error)
	WaitQueued(ctx context.Context, client string) (run.Outcome, error)
	WaitFree(ctx context.Context) (run.Outcome, error)
}

// Faults are what the lab does to the clients and the store.
type Faults interface {
	Pause(ctx context.Context, client, point string) (run.Outcome, error)
	WaitPaused(ctx context.Context, client string) (run.Outcome, error)
	Resume(ctx context.Context, client string) (run.Outcome, error)
	Cut(ctx context.Context, client string) (run.Outcome, error)
	Blip(ctx context.Context, client string, d time.Duration) (run.Outcome, error)
	Delay(ctx context.Context, client string, d time.Duration) (run.Outcome, error)
	Crash(ctx context.Context, client string) (run.Outcome, error)
	Heal(ctx context.Context) (run.Outcome, error)
	Isolate(ctx context.Context, member string) (run.Outcome, error)
	// Kill kills member (SIGKILL) until heal restarts it on its data.
	Kill(ctx context.Context, member string) (run.Outcome, error)
	Expire(ctx context.Context, client, mode string) (run.Outcome, error)
	AcquireAnswerLost(ctx context.Context, client string) (run.Outcome, error)
	ReleaseAnswerLost(ctx context.Context, client string) (run.Outcome, error)
}

// A FailingOver store can fail its primary over to a replica, as Redis
// Sentinel does: the primary is killed and a replica promoted, whatever it
// had not yet replicated lost (the `failover` command).
type FailingOver interface {
	Failover(ctx context.Context) (run.Outcome, error)
}

// A Restarting store can crash a server and start it again at once on
// what it kept (`restart member=mN`), as a supervisor restarts a crashed
// server.
type Restarting interface {
	Restart(ctx context.Context, member string) (run.Outcome, error)
}

// A ClockJumping store can move a server's wall clock (`jump-clock
// member=mN offset=+3s`) until heal sets it right; its monotonic clock
// does not move.
type ClockJumping interface {
	JumpClock(ctx context.Context, member string, offset time.Duration) (run.Outcome, error)
}

// A ClockDrifting store can run a server's wall clock fast or slow
// (`drift-clock member=mN rate=2`) until heal sets it right; its
// monotonic clock does not move.
type ClockDrifting interface {
	DriftClock(ctx context.Context, member string, rate float64) (run.Outcome, error)
}

// A ClientClockJumping run can move a client's own wall clock (`jump-clock
// cN offset=-1m`) until heal sets it right: the clock its lock reads, where
// the lock runs as a program the lab started with its clock shim.
type ClientClockJumping interface {
	JumpClientClock(ctx context.Context, client string, offset time.Duration) (run.Outcome, error)
}

// A ClientClockDrifting run can run a client's own wall clock fast or
// slow (`drift-clock cN rate=0.5`) until heal sets it right, where its
// lock runs as a program the lab started with its clock shim.
type ClientClockDrifting interface {
	DriftClientClock(ctx context.Context, client string, rate float64) (run.Outcome, error)
}

// Leader, as a kill's member (`kill member=leader`), is whichever member
// leads when the step runs: the history's fault names it.
const Leader = "leader"

// A LeaderKilling store can kill the member that leads (`kill
// member=leader`) until heal starts it again.
type LeaderKilling interface {
	KillLeader(ctx context.Context) (run.Outcome, error)
}

// A Serving store can wait, after a member was killed or isolated, until
// that member serves nobody, another leads, and every client has been
// answered since (`wait-served`): each has moved to a member that serves
// it, so what it asks next is not met by the connection the fault broke.
type Serving interface {
	WaitServed(ctx context.Context) (run.Outcome, error)
}

// An AnswerHolding store can hold the answers a client's server sends
// while its requests still arrive, from the client's next keep-alive, for
// d (the `hold-answers` command): a link failing one way for a moment,
// met by every renewer whatever its rhythm.
type AnswerHolding interface {
	HoldAnswers(ctx context.Context, client string, d time.Duration) (run.Outcome, error)
}

// A LinkCutting store can cut one of a client's links, the one to member,
// until heal, the others left as they are (`cut cN member=mK`): a client
// of Redlock's independent masters cut off from some of them.
type LinkCutting interface {
	CutLink(ctx context.Context, client, member string) (run.Outcome, error)
}

// A RequestLosing store can lose the request a client's acquire sends
// after its write, with the client's connections (acquire next=lost): the
// write made and answered, the request after it never arrives.
type RequestLosing interface {
	AcquireNextLost(ctx context.Context, client string) (run.Outcome, error)
}

// A Telling store follows each grant's Grant.Lost: WaitTold waits, for at
// most history.LostGrace, until the lock tells client its lease is gone
// (the `wait-told` command).
type Telling interface {
	WaitTold(ctx context.Context, client string) (run.Outcome, error)
}

// A Wrapper is a Target around another (a store's run with its servers):
// what the wrapped one can do beside Target's — fail over, hold answers,
// tell — the wrapper can too.
type Wrapper interface {
	Unwrap() Target
}

// as is e as a T, or what e wraps as one.
func as[T any](e Target) (T, bool) {
	for {
		if t, ok := e.(T); ok {
			return t, true
		}
		w, ok := e.(Wrapper)
		if !ok {
			var zero T
			return zero, false
		}
		e = w.Unwrap()
	}
}

package script

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run"
)

// StepTimeout bounds one script step; the slowest (waiting for a lease to
// lapse) takes about 1.5 s.
const StepTimeout = 30 * time.Second

// Do runs one command on the run, bounded by StepTimeout (no step may hang
// a run), and returns its outcome. A step that could not be taken is an
// outcome too (run.StepError), as a script prints it. Work a step leaves
// in the background (an async acquire, a pause being applied) outlives it
// only on a run bound to a longer context (Target.Bind).
func Do(ctx context.Context, e Target, c Cmd) run.Outcome {
	ctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	return run.Settled(do(ctx, e, c))
}

// DoLine runs one command line as a scenario file writes it ("acquire c2
// async"), as Do runs a command. A line that does not parse, names an
// unknown command or gives it an argument it does not take is an error.
func DoLine(ctx context.Context, e Target, line string) (run.Outcome, error) {
	c, err := ParseLine(line)
	if err != nil {
		return run.Outcome{}, fmt.Errorf("%s: %w", line, err)
	}
	return Do(ctx, e, c), nil
}

// do is each command's one call into the run.
func do(ctx context.Context, e Target, c Cmd) (run.Outcome, error) {
	switch c.Name {
	case "setup":
		return setup(e, c)
	case "client":
		if err := e.AddClient(ctx, c.Client, c.Member); err != nil {
			return run.Outcome{}, err
		}
		return run.Outcome{Kind: run.Connected, Client: c.Client, Member: c.Member}, nil
	case "acquire":
		if c.Answer != "" {
			return e.AcquireAnswerLost(ctx, c.Client)
		}
		if c.Next != "" {
			l, ok := as[RequestLosing](e)
			if !ok {
				return run.Outcome{}, errors.New("acquire next=lost: the lab cannot tell a client's requests on the wire on this store")
			}
			return l.AcquireNextLost(ctx, c.Client)
		}
		return maybeAsync(ctx, e, c, e.Acquire, run.DoingAcquire)
	case "cs":
		return maybeAsync(ctx, e, c, func(ctx context.Context, client string) (run.Outcome, error) {
			return e.CSWork(ctx, client, c.Work)
		}, run.DoingSection)
	case "release":
		if c.Answer != "" {
			return e.ReleaseAnswerLost(ctx, c.Client)
		}
		return maybeAsync(ctx, e, c, func(ctx context.Context, client string) (run.Outcome, error) {
			return e.ReleaseGrant(ctx, client, c.Grant)
		}, run.DoingRelease)
	case "await":
		return e.Await(ctx, c.Client)
	case "pause":
		return e.Pause(ctx, c.Client, c.At)
	case "wait-paused":
		return e.WaitPaused(ctx, c.Client)
	case "resume":
		return e.Resume(ctx, c.Client)
	case "cut":
		return cut(ctx, e, c)
	case "delay":
		return e.Delay(ctx, c.Client, c.By)
	case "isolate":
		return e.Isolate(ctx, c.Member)
	case "kill":
		return kill(ctx, e, c)
	case "crash":
		return e.Crash(ctx, c.Client)
	case "heal":
		return e.Heal(ctx)
	case "expire":
		return e.Expire(ctx, c.Client, cmp.Or(c.Mode, faults.ModeRevoke))
	case "wait-lease-gone":
		return e.WaitLeaseGone(ctx, c.Client)
	case "wait-queued":
		return e.WaitQueued(ctx, c.Client)
	case "wait-free":
		return e.WaitFree(ctx)
	case "check":
		return e.Check()
	}
	return doOptional(ctx, e, c)
}

// cut cuts a client's links: all of them, until heal or for c.For, or the
// one to c.Member where the store can cut one alone (LinkCutting).
func cut(ctx context.Context, e Target, c Cmd) (run.Outcome, error) {
	if c.Member != "" {
		l, ok := as[LinkCutting](e)
		if !ok || c.For > 0 {
			return run.Outcome{}, errors.New("cut member=: the lab cannot cut one of a client's links on this store")
		}
		return l.CutLink(ctx, c.Client, c.Member)
	}
	if c.For > 0 {
		return e.Blip(ctx, c.Client, c.For)
	}
	return e.Cut(ctx, c.Client)
}

// kill kills a member, or whichever leads where the store can tell
// (LeaderKilling).
func kill(ctx context.Context, e Target, c Cmd) (run.Outcome, error) {
	if c.Member != Leader {
		return e.Kill(ctx, c.Member)
	}
	k, ok := as[LeaderKilling](e)
	if !ok {
		return run.Outcome{}, errors.New("kill member=leader: the lab cannot kill the leader of this store")
	}
	return k.KillLeader(ctx)
}

// doOptional is the call of a command only some stores can do (see
// Capability), through the optional interface that does it.
func doOptional(ctx context.Context, e Target, c Cmd) (run.Outcome, error) {
	switch c.Name {
	case "wait-served":
		k, ok := as[Serving](e)
		if !ok {
			return run.Outcome{}, errors.New("wait-served: the lab cannot tell when this store serves every client again")
		}
		return k.WaitServed(ctx)
	case "hold-answers":
		h, ok := as[AnswerHolding](e)
		if !ok {
			return run.Outcome{}, errors.New("hold-answers: the lab cannot hold one direction of a client's link on this store")
		}
		return h.HoldAnswers(ctx, c.Client, c.For)
	case "wait-told":
		t, ok := as[Telling](e)
		if !ok {
			return run.Outcome{}, errors.New("wait-told: the lab does not follow Grant.Lost on this store")
		}
		return t.WaitTold(ctx, c.Client)
	case "restart":
		r, ok := as[Restarting](e)
		if !ok {
			return run.Outcome{}, errors.New("restart: the lab cannot restart this store's servers")
		}
		return r.Restart(ctx, c.Member)
	case "jump-clock":
		if c.Client != "" {
			j, ok := as[ClientClockJumping](e)
			if !ok {
				return run.Outcome{}, errors.New("jump-clock: the lab cannot move a client's clock on this store")
			}
			return j.JumpClientClock(ctx, c.Client, c.Offset)
		}
		j, ok := as[ClockJumping](e)
		if !ok {
			return run.Outcome{}, errors.New("jump-clock: the lab cannot move this store's clocks")
		}
		return j.JumpClock(ctx, c.Member, c.Offset)
	case "drift-clock":
		if c.Client != "" {
			d, ok := as[ClientClockDrifting](e)
			if !ok {
				return run.Outcome{}, errors.New("drift-clock: the lab cannot move a client's clock on this store")
			}
			return d.DriftClientClock(ctx, c.Client, c.Rate)
		}
		d, ok := as[ClockDrifting](e)
		if !ok {
			return run.Outcome{}, errors.New("drift-clock: the lab cannot run this store's clocks fast or slow")
		}
		return d.DriftClock(ctx, c.Member, c.Rate)
	case "failover":
		f, ok := as[FailingOver](e)
		if !ok {
			return run.Outcome{}, errors.New("failover: this store has no primary to fail over (etcd elects its leader itself: see leader-failover)")
		}
		return f.Failover(ctx)
	}
	return run.Outcome{}, fmt.Errorf("unknown command %q", c.Name)
}

// setup checks that the run is what the script needs.
func setup(e Target, c Cmd) (run.Outcome, error) {
	if have := len(e.Members()); c.Members > have {
		return run.Outcome{}, fmt.Errorf("setup: the script needs %d members, the cluster has %d", c.Members, have)
	}
	if c.TTL != 0 && c.TTL != e.TTL() {
		return run.Outcome{}, fmt.Errorf("setup: the script's lease TTL is %d s, the run's %d s", c.TTL, e.TTL())
	}
	return run.Outcome{Kind: run.Ready}, nil
}

// maybeAsync runs step now, or in the background with the `async` flag (the
// outcome is read with `await`).
func maybeAsync(ctx context.Context, e Target, c Cmd, step func(context.Context, string) (run.Outcome, error), doing run.Doing) (run.Outcome, error) {
	if !c.Async {
		return step(ctx, c.Client)
	}
	return e.Start(ctx, c.Client, doing, step)
}

// Run runs a script's steps on e, comparing every step's output with the
// script's (only the resources the run has are compared): a step that did
// not do what the script says did not exercise what the script claims, and
// the error Run returns says which. Every step still runs, so the history
// is whole; the check step is left to the caller, which judges every
// history itself. file names the script in messages.
func Run(ctx context.Context, e Target, file string, steps []Step) error {
	e.Bind(ctx)
	var diffs []string
	for _, st := range steps {
		if st.Cmd.Name == "check" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		o := Do(ctx, e, st.Cmd)
		out := o.String()
		if want := tokenlessWant(expectedFor(st.Expected, e.Resources()), o); !Matches(want, out) {
			diffs = append(diffs, fmt.Sprintf("%s:%d: %s: got %q, script says %q", file, st.Line, st.Cmd, out, want))
		}
	}
	if len(diffs) > 0 {
		return errors.New(strings.Join(diffs, "\n"))
	}
	return nil
}

// RunDrawn runs a drawn script (see DrawScript) on e, every line as drawn.
// What a lock answers is the lock's (a known-bad one may grant where a
// correct one refuses), so those outcomes are not compared; the steps that
// set up and apply faults must come to what they come to for every lock,
// or the script did not run as drawn and the error says where.
func RunDrawn(ctx context.Context, e Target, lines []string) error {
	if len(lines) == 0 {
		return errors.New("the plan lists no steps (a schedule recorded by an older locklab?)")
	}
	e.Bind(ctx)
	var diffs []string
	points := map[string]string{}
	for i, line := range lines {
		c, err := ParseLine(line)
		if err != nil {
			return fmt.Errorf("step %d: %s: %w", i+1, line, err)
		}
		if c.Name == "check" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		out := Do(ctx, e, c)
		if want, ok := fixedOutcome(c, points); ok && out.String() != want.String() {
			diffs = append(diffs, fmt.Sprintf("step %d: %s: got %q, want %q", i+1, line, out, want))
		}
		if c.Answer != "" && !out.Effected {
			// What the lock answered is its own; that the server took the
			// request while its answer was lost is the fault's.
			diffs = append(diffs, fmt.Sprintf("step %d: %s: got %q: the server never showed it take effect", i+1, line, out))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("the drawn script did not run as drawn:\n%s", strings.Join(diffs, "\n"))
	}
	return nil
}

// fixedOutcome is what a step comes to whatever the lock, if it is such a
// step: setup, clients and faults. points remembers each client's armed
// pause point.
func fixedOutcome(c Cmd, points map[string]string) (run.Outcome, bool) {
	o := run.Outcome{Client: c.Client}
	switch c.Name {
	case "setup":
		o.Kind = run.Ready
	case "client":
		o.Kind, o.Member = run.Connected, c.Member
	case "pause":
		points[c.Client] = c.At
		o.Kind, o.Point = run.WillPause, c.At
	case "wait-paused":
		o.Kind, o.Point = run.Paused, points[c.Client]
	case "resume":
		o.Kind = run.Resumed
	case "cut":
		o.Kind, o.For, o.Member = run.Cut, c.For, c.Member
	case "delay":
		o.Kind, o.For = run.Delayed, c.By
	case "hold-answers":
		o.Kind, o.For = run.AnswersHeld, c.For
	case "isolate":
		o.Kind, o.Member = run.Isolated, c.Member
	case "kill":
		o.Kind, o.Member = run.Killed, c.Member
		if c.Member == Leader {
			o.Kind, o.Member = run.LeaderKilled, ""
		}
	case "crash":
		o.Kind = run.Crashed
	case "heal":
		o.Kind = run.Healed
	case "expire":
		o.Kind, o.Mode = run.LeaseEnded, cmp.Or(c.Mode, faults.ModeRevoke)
	case "wait-lease-gone":
		o.Kind = run.LeaseGone
	case "wait-queued":
		o.Kind = run.Waiting
	case "wait-served":
		o.Kind = run.Served
	default:
		return run.Outcome{}, false
	}
	return o, true
}

// Matches reports whether a step's output is what the script expects: the
// expected text, or one of its alternatives, each on lines of its own
// between lines that say "or" (an answer that depends on the lock's
// design, both correct: "c2: error: session expired", or a grant on a new
// lease for a lock that takes a lease per attempt). An alternative that
// ends in "…" matches any output that begins with the text before it:
// "c2: error: …" is any error, in the lock's own words.
func Matches(expected, got string) bool {
	return slices.ContainsFunc(strings.Split(expected, "\nor\n"), func(want string) bool {
		if prefix, ok := strings.CutSuffix(want, "…"); ok {
			return strings.HasPrefix(got, prefix) && !strings.Contains(got, "\n")
		}
		return want == got
	})
}

// tokenLabel is a token's label in a script's expected output.
var tokenLabel = regexp.MustCompile(`\btoken=t[0-9]+\b`)

// tokenlessWant is want, the expected output of a step, held to out, a
// grant with no fencing token, on everything but its token: such a grant's
// label names it alone (see run.TokenLabels), and a script that says which
// token a grant carries — the same as an earlier one's, after a failover
// — says nothing a lock without tokens can keep or break.
func tokenlessWant(want string, out run.Outcome) string {
	if !out.Granted() || !out.Tokenless {
		return want
	}
	return tokenLabel.ReplaceAllString(want, "token="+out.Token)
}

// expectedFor keeps, of a script's expected output, what the run's
// resources print: a line "c1: unfenced read 0 wrote 1; fenced read 0 wrote
// 1; etcd-guarded …" keeps the parts of the resources that ran, in the
// order the run has them. A store's guarded resource the line does not
// name takes the part of the one it names (a script written with
// etcd-guarded says what redis-guarded does on Redis).
func expectedFor(expected string, resources []string) string {
	all := resource.Names()
	lines := strings.Split(expected, "\n")
	for i, line := range lines {
		head, body, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		parts := strings.Split(body, "; ")
		byRes := map[string]string{}
		guarded := "" // the first store's guarded resource the line names
		for _, part := range parts {
			name, _, _ := strings.Cut(part, " ")
			if slices.Contains(all, name) {
				byRes[name] = part
			}
			if _, ok := resource.KeptBy(name); ok && guarded == "" {
				guarded = name
			}
		}
		if len(byRes) != len(parts) {
			continue // not a line of per-resource parts
		}
		var kept []string
		for _, r := range resources {
			if p, ok := byRes[r]; ok {
				kept = append(kept, p)
			} else if _, ok := resource.KeptBy(r); ok && guarded != "" {
				kept = append(kept, r+strings.TrimPrefix(byRes[guarded], guarded))
			}
		}
		lines[i] = head + ": " + strings.Join(kept, "; ")
	}
	return strings.Join(lines, "\n")
}

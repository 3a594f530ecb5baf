package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/pausegate"
	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/internal/registry"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/models"
)

// Kind says what a step came to.
type Kind int

// The kinds of outcome.
const (
	// StepError: the step could not be taken at all (an unknown client, a
	// fault that did not apply); Detail says why.
	StepError     Kind = iota + 1
	Ready              // the run is set up
	Connected          // a client connected to Member
	Granted            // the client was granted the lock: Token
	Failed             // an acquire or a critical section that did not start: Failure
	Section            // a critical section: Writes, one per resource
	Released           // the release returned ok
	ReleasedEnded      // a release of a grant whose lease the server had ended
	ReleaseFailed      // the release answered an error: Failure
	Started            // a background step began: Doing
	WillPause          // a pause is armed at Point
	Paused             // the client stopped at Point, its link cut
	Resumed            // the pause ended
	Cut                // the client's link is cut
	Crashed            // the client was killed and started again
	Healed             // every fault is undone
	LeaseEnded         // the lab ended the client's lease: Mode
	LeaseGone          // the server no longer has the client's lease
	Waiting            // the client's acquire visibly waits for the lock
	Checked            // every history was checked: Checks
	Free               // no key of any lease is left under the run's prefix
	Delayed            // the client's link delays every message: For, each way
	Isolated           // Member is cut off from the other members (its clients still reach it)
	FailedOver         // the primary From was killed and Member promoted; Lacked: whose lock keys it lacked
	Killed             // Member was killed, until heal restarts it
	Told               // the client's grant's Grant.Lost closed: the lock told it its lease is gone
	NotTold            // it did not close within For
	CannotTell         // the client's grant has no Grant.Lost
	AnswersHeld        // the client's answers were held For from its next keep-alive, then delivered
	LeaderKilled       // the member that led was killed, until heal restarts it
	Served             // another member leads, and every client has been answered since
	ClockJumped        // Member's (or Client's own) wall clock was moved: For is its offset now (negative: behind)
	Restarted          // Member crashed and was started again at once, on what it had kept
	ClockDrifts        // Member's (or Client's own) wall clock runs at Rate times the machine's
)

// Failure classes why an operation failed, without anything that changes
// run to run.
type Failure int

// The failures an operation can meet.
const (
	FailOther          Failure = iota + 1 // Detail says what
	FailSessionExpired                    // the lease is gone (the lock said so, or the server)
	FailNotHeld                           // the lock says the grant is not held
	FailNoToken                           // the grant carries no fencing token
	FailTimedOut                          // the operation's deadline passed
	FailCancelled                         // the run ended under it
	FailConnectionLost                    // the client's link to the cluster broke
	FailCrashed                           // the client crashed during it
	FailNoGrant                           // a critical section without a grant
)

// Doing names a background step that was started.
type Doing string

// The background steps.
const (
	DoingAcquire Doing = "acquiring"
	DoingSection Doing = "in critical section"
	DoingRelease Doing = "releasing"
)

// Write is what one critical section did on one resource.
type Write struct {
	Resource string
	// Read is the value read, if the read succeeded.
	Read *int64
	// Failure, if set, is why the section failed on this resource; else
	// Written says what the resource did with the write.
	Failure Failure
	Detail  string
	Written resource.Written
}

// ResourceCheck is one resource's checked history.
type ResourceCheck struct {
	Resource string
	Report   models.Report
}

// An Outcome is what one step of a run came to, as typed facts: a script
// compares it, a drawn walk learns from it, and String is the one place it
// becomes text.
type Outcome struct {
	Kind   Kind
	Client string
	// Token labels the grant (t1, t2… in order of first appearance).
	Token string
	// Failure and Detail say why a Failed or ReleaseFailed step failed
	// (Detail: the error's text, for FailOther and StepError).
	Failure Failure
	Detail  string
	Writes  []Write
	Member  string
	Point   string
	Mode    string
	Doing   Doing
	Checks  []ResourceCheck
	// NewLease, for a grant: the lease the client had when it asked ended
	// while it waited, and the grant rests on a newer one (a lock that
	// takes a lease per attempt).
	NewLease bool
	// Tokenless, for a grant: it carried no fencing token (the contract
	// allows it), so its label names the grant alone, and what a script
	// says of a grant's token is no claim about it (see script.Run).
	Tokenless bool
	// Rate, for a clock that drifts, is how fast it runs (2: twice the
	// machine's).
	Rate float64
	// For, for a cut that was healed after a while (a blip), is how long;
	// for a delayed link, the delay each way.
	For time.Duration
	// Effected, for an acquire or a release whose answer was lost: the lab
	// saw it take effect on the server.
	Effected bool
	// From, for a failover, is the primary that was killed; Lacked the
	// holders whose lock keys the promoted replica did not have.
	From   string
	Lacked []string
}

// Granted reports whether the step granted the lock.
func (o Outcome) Granted() bool { return o.Kind == Granted }

// String renders the outcome as a script prints it: stable text, with
// symbolic names and relative tokens only.
func (o Outcome) String() string {
	if s, ok := o.stepString(); ok {
		return s
	}
	return o.faultString()
}

// stepString renders an outcome of a client's own step (an acquire, a
// section, a release), and reports whether o is one.
func (o Outcome) stepString() (string, bool) {
	c := o.Client
	switch o.Kind {
	case StepError:
		return "error: " + o.Detail, true
	case Ready:
		return "ready", true
	case Connected:
		return fmt.Sprintf("%s: connected to %s", c, o.Member), true
	case Granted:
		s := fmt.Sprintf("%s: granted token=%s", c, o.Token)
		if o.NewLease {
			s += " on a new lease"
		}
		return o.effected(s, "acquire"), true
	case Failed:
		return o.effected(fmt.Sprintf("%s: %s", c, describe(o.Failure, o.Detail)), "acquire"), true
	case Section:
		parts := make([]string, len(o.Writes))
		for i, w := range o.Writes {
			parts[i] = w.String()
		}
		return fmt.Sprintf("%s: %s", c, strings.Join(parts, "; ")), true
	case Released:
		return o.effected(c+": released", "release"), true
	case ReleasedEnded:
		return o.effected(c+": released a grant whose lease had ended", "release"), true
	case ReleaseFailed:
		return o.effected(fmt.Sprintf("%s: release %s", c, describe(o.Failure, o.Detail)), "release"), true
	case Started:
		return fmt.Sprintf("%s: %s", c, o.Doing), true
	}
	return "", false
}

// faultString renders an outcome of a fault, a wait or a check: what the
// lab did and saw, not a client's step.
func (o Outcome) faultString() string {
	c := o.Client
	switch o.Kind {
	case WillPause:
		return fmt.Sprintf("%s: will pause at %s", c, o.Point)
	case Paused:
		return fmt.Sprintf("%s: paused at %s, link cut", c, o.Point)
	case Resumed:
		return c + ": resumed"
	case Cut:
		if o.Member != "" {
			return fmt.Sprintf("%s: link to %s cut", c, o.Member)
		}
		if o.For > 0 {
			return fmt.Sprintf("%s: link cut for %v, then healed", c, o.For)
		}
		return c + ": link cut"
	case Delayed:
		return fmt.Sprintf("%s: link delayed %v each way", c, o.For)
	case AnswersHeld:
		return fmt.Sprintf("%s: answers held for %v from its next keep-alive, then delivered", c, o.For)
	case Isolated:
		return o.Member + ": cut off from the other members"
	case Killed:
		return o.Member + ": killed (heal restarts it)"
	case Restarted:
		return o.Member + ": crashed and started again"
	case ClockJumped:
		return fmt.Sprintf("%s: wall clock %s off (heal sets it right)", cmp.Or(o.Member, o.Client), history.Signed(o.For))
	case ClockDrifts:
		return fmt.Sprintf("%s: wall clock runs ×%s (heal sets it right)", cmp.Or(o.Member, o.Client), strconv.FormatFloat(o.Rate, 'f', -1, 64))
	case LeaderKilled:
		return "server: the leader killed (heal restarts it)"
	case Served:
		return "server: another member leads, and every client is answered again"
	case Crashed:
		return c + ": crashed, and started again holding nothing"
	case Healed:
		return "all faults undone"
	case LeaseEnded:
		return fmt.Sprintf("server: %s's lease ended (%s)", c, o.Mode)
	case LeaseGone:
		return fmt.Sprintf("server: %s's lease is gone", c)
	case Waiting:
		return c + ": waiting"
	case Told:
		return c + ": told its lock is lost"
	case NotTold:
		return fmt.Sprintf("%s: not told its lock is lost within %v", c, o.For)
	case CannotTell:
		return c + ": its lock cannot tell it (no Grant.Lost)"
	case Checked:
		return renderChecks(o.Checks)
	case Free:
		return "server: the lock is free"
	case FailedOver:
		s := fmt.Sprintf("server: %s killed, %s promoted", o.From, o.Member)
		if len(o.Lacked) > 0 {
			s += " without the lock keys of " + strings.Join(o.Lacked, ", ")
		}
		return s
	}
	return fmt.Sprintf("outcome %d of %s", o.Kind, c)
}

// effected adds, to an acquire or a release whose answer was lost, what
// the server did.
func (o Outcome) effected(s, op string) string {
	if o.Effected {
		s += "\nserver: " + o.Client + "'s " + op + " took effect"
	}
	return s
}

// String renders one resource's part of a critical section.
func (w Write) String() string {
	switch {
	case w.Failure != 0:
		return fmt.Sprintf("%s %s", w.Resource, describe(w.Failure, w.Detail))
	case w.Written.Accepted:
		return fmt.Sprintf("%s read %d wrote %d", w.Resource, *w.Read, *w.Read+1)
	}
	reason := "rejected"
	switch w.Written.Rejection {
	case resource.StaleToken:
		reason = "rejected: stale token"
	case resource.LockLost:
		reason = "rejected: lock lost"
	}
	return fmt.Sprintf("%s read %d %s", w.Resource, *w.Read, reason)
}

// renderChecks is the check step's output: one line per resource and the
// belief finding.
func renderChecks(checks []ResourceCheck) string {
	var lines []string
	for _, rc := range checks {
		r := rc.Report
		line := fmt.Sprintf("%s: %s", rc.Resource, r.Result())
		var failed []string
		for _, v := range r.Safety {
			if v.Result == models.Fail || v.Result == models.Unknown {
				failed = append(failed, fmt.Sprintf("%s %s", v.Check, v.Result))
			}
		}
		if len(failed) > 0 {
			line += " (" + strings.Join(failed, ", ") + ")"
		}
		lines = append(lines, line)
	}
	belief := "belief: one holder at a time"
	if len(checks) > 0 && checks[0].Report.Belief.Result == models.Fail {
		belief = "belief: two clients believed they held the lock at once"
	}
	return strings.Join(append(lines, belief), "\n")
}

// describe names a failure.
func describe(f Failure, detail string) string {
	switch f {
	case FailSessionExpired:
		return "error: session expired"
	case FailNotHeld:
		return "error: not held"
	case FailNoToken:
		return "error: no fencing token"
	case FailTimedOut:
		return "error: timed out"
	case FailCancelled:
		return "error: cancelled"
	case FailConnectionLost:
		return "error: connection lost"
	case FailCrashed:
		return "error: crashed"
	case FailNoGrant:
		return "error: holds no grant"
	}
	return "error: " + detail
}

// failureOf classes an error (nil: none) and, for one it does not know,
// keeps its text. A store's own errors are classed by what it registered
// (see StoreErrors), in the same order of precedence as the lock's.
func failureOf(err error) (Failure, string) {
	if err == nil {
		return 0, ""
	}
	c := storeClass(err)
	switch {
	case errors.Is(err, lock.ErrSessionExpired), c == FailSessionExpired:
		return FailSessionExpired, ""
	case errors.Is(err, lock.ErrNotHeld):
		return FailNotHeld, ""
	case errors.Is(err, lock.ErrNoToken):
		return FailNoToken, ""
	case errors.Is(err, context.DeadlineExceeded), c == FailTimedOut:
		return FailTimedOut, ""
	case errors.Is(err, context.Canceled):
		return FailCancelled, ""
	case c != 0:
		return c, ""
	case isTimeout(err):
		return FailTimedOut, ""
	case isConnectionLost(err), errors.Is(err, proc.ErrUnavailable):
		return FailConnectionLost, ""
	case errors.Is(err, pausegate.ErrCrashed):
		return FailCrashed, ""
	}
	return FailOther, err.Error()
}

// isTimeout reports whether err is a network deadline (a store whose
// client speaks plain TCP, Redis, times out this way).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// isConnectionLost reports whether err is a broken or refused connection:
// the network's own errors.
func isConnectionLost(err error) bool {
	var op *net.OpError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, net.ErrClosed) || errors.As(err, &op)
}

// An ErrorClasser classes a store client's own errors: the Failure err
// says (etcd's "lease not found" is FailSessionExpired, go-zookeeper's
// "zk: connection closed" FailConnectionLost), 0 for one it does not know.
type ErrorClasser func(err error) Failure

// classers are the stores' ErrorClassers.
var classers registry.List[ErrorClasser]

// StoreErrors adds a store's ErrorClasser, so that a lock's error is
// classed alike on every store. A store's package calls it from its init
// function.
func StoreErrors(c ErrorClasser) { classers.Add(c) }

// ErrorsAre is an ErrorClasser that classes errs, and whatever wraps one
// of them, as f.
func ErrorsAre(f Failure, errs ...error) ErrorClasser {
	return func(err error) Failure {
		if slices.ContainsFunc(errs, func(e error) bool { return errors.Is(err, e) }) {
			return f
		}
		return 0
	}
}

// storeClass is the first registered store's class of err, 0 if none
// knows it.
func storeClass(err error) Failure {
	cs := classers.All()
	for _, c := range cs {
		if f := c(err); f != 0 {
			return f
		}
	}
	return 0
}

// FailedOutcome is the outcome of an operation of client that failed with err, of
// kind Failed or ReleaseFailed: the error classed (see Failure), its text
// kept only for an error of no known class.
func FailedOutcome(kind Kind, client string, err error) Outcome { return failed(kind, client, err) }

// failed is the outcome of an operation of client that failed with err.
func failed(kind Kind, client string, err error) Outcome {
	f, d := failureOf(err)
	return Outcome{Kind: kind, Client: client, Failure: f, Detail: d}
}

// Errored is the outcome of a step that could not be taken: err says why.
func Errored(err error) Outcome { return Outcome{Kind: StepError, Detail: err.Error()} }

// Settled is a step's outcome as a script prints it: out, or, when the step
// came to none, the error that stopped it (run.StepError).
func Settled(out Outcome, err error) Outcome {
	switch {
	case out.Kind != 0:
		return out
	case err == nil:
		err = errors.New("the step came to no outcome")
	}
	return Errored(err)
}

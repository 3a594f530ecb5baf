package script

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run"
)

// Fault kinds a Walk may draw.
const (
	WalkPause  = "pause"  // freeze a holder before its write or its release, link cut
	WalkCut    = "cut"    // cut a holder's link until its lease lapses, then heal
	WalkExpire = "expire" // revoke a holder's or a waiter's lease
	WalkCrash  = "crash"  // kill a holder (SIGKILL) and start it again; its lease lapses
	// WalkLostAcquire: an acquire of the free lock whose key the server
	// writes while its answer is lost (acquire answer=lost); the client
	// gives up, or asks again later.
	WalkLostAcquire = "lost-acquire"
	// WalkBlip: a holder's link fails for 0.4 TTL, and it goes on holding
	// (working) for 1.5 TTL after: a lock must ride through. On leases of
	// 3 s or more the link fails one way from the holder's next keep-alive
	// (hold-answers, as in the link-blip lesson), so every renewer meets
	// the blip at a renewal; on shorter ones it is cut both ways (etcd's own
	// client lets a 1 s lease lapse when its answers are a sixth of a
	// second late), and a renewer meets it only if it renews within it.
	WalkBlip = "blip"
	// WalkIsolate: a holder's member is cut off from the other members
	// until the holder's lease has ended; the holder asks for the lock
	// again from the cut-off side (a correct lock cannot grant it: a new
	// lease needs the quorum), then the member rejoins. Drawn only on 3
	// members or more, for a holder alone on its member, with every other
	// client idle.
	WalkIsolate = "isolate"
	// WalkSlow: a holder's link turns slow — every message delayed 2/15
	// of the TTL each way, 400 ms on 3 s leases — while it works for two
	// TTLs, then heals: a lock must keep its lease over it. Drawn only on
	// leases of 3 s or more (--ttl 3): on 1 s ones etcd's own client keeps
	// no lease over a link slow by more than about 80 ms, too little for a
	// renewal's lateness to show.
	WalkSlow = "slow"
)

// slowMinTTL is the shortest lease, in seconds, a walk draws a slow link
// on (see WalkSlow).
const slowMinTTL = 3

// heldBlipMinTTL is the shortest lease, in seconds, on which a walk's blip
// holds the holder's answers rather than cutting its link (see WalkBlip).
const heldBlipMinTTL = 3

// WalkFaults lists every fault kind a Walk can draw.
func WalkFaults() []string {
	return []string{WalkPause, WalkCut, WalkExpire, WalkCrash, WalkLostAcquire, WalkBlip, WalkIsolate, WalkSlow}
}

// WalkOptions shape the scripts a Walk draws.
type WalkOptions struct {
	// Clients is how many clients the script uses (c1…; 2 or 3, default
	// 3), on members m1… in turn.
	Clients int
	// Members is the cluster size (default 3); TTL the lease TTL in
	// seconds (default 1).
	Members, TTL int
	// Faults are the fault kinds that may be drawn (nil: every one).
	Faults []string
}

// Action is one drawn step of a script: one or more commands that belong
// together (a pause is armed, the work that reaches it started and the
// pause waited for, so no step leaves the clients racing).
type Action struct {
	// Name says what the action does, for messages ("pause-write c1").
	Name string
	Cmds []Cmd
}

// Lines are the action's commands as a script writes them.
func (a Action) Lines() []string {
	out := make([]string, len(a.Cmds))
	for i, c := range a.Cmds {
		out[i] = c.String()
	}
	return out
}

// walkClient is what a Walk knows of one client.
type walkClient struct {
	name   string
	member string
	// isolated: its member is cut off from the others.
	isolated bool
	// held: it believes it holds the lock (granted, not yet released).
	held bool
	// leaseGone: the server has ended the lease of its session, as a step
	// saw; doomed: its lease will lapse (its link is cut), not yet seen.
	leaseGone, doomed bool
	// paused: "" or the step it is frozen in ("cs", "release").
	paused string
	cut    bool
	// ghost: it crashed holding the lock, and its dead grant's key keeps
	// the lock until its lease, doomed, is seen gone.
	ghost bool
	// waiting: its acquire is pending (queued); waiterExpired: its lease
	// was revoked while it waited.
	waiting, waiterExpired bool
}

// A Walk draws scenario scripts as a state machine: at each point it lists
// the actions whose preconditions hold (Next), and it learns from each
// action's output (Take). The preconditions make every step wait on
// something observable — a waiter is only awaited once no live holder is
// left, a cut or paused holder's lease is waited out before it acts again,
// only one client waits at a time — so a drawn script runs the same way
// each time it runs, which is what lets a failing one be shrunk and
// replayed as a file.
type Walk struct {
	opts    WalkOptions
	clients []*walkClient
	// final: the closing acquire's outcome (see Progressed).
	finalAsked, finalGranted bool
	done                     bool
}

// NewWalk starts a walk; the first actions are the setup and the clients.
func NewWalk(opts WalkOptions) *Walk {
	if opts.Clients < 2 || opts.Clients > 3 {
		opts.Clients = 3
	}
	if opts.Members < 1 {
		opts.Members = 3
	}
	if opts.TTL < 1 {
		opts.TTL = 1
	}
	if opts.Faults == nil {
		opts.Faults = WalkFaults()
	}
	w := &Walk{opts: opts}
	for i := range opts.Clients {
		w.clients = append(w.clients, &walkClient{name: fmt.Sprintf("c%d", i+1), member: fmt.Sprintf("m%d", i%opts.Members+1)})
	}
	return w
}

// Preamble is the script's first action: setup and its clients.
func (w *Walk) Preamble() Action {
	a := Action{Name: "setup", Cmds: []Cmd{{Name: "setup", Members: w.opts.Members, TTL: w.opts.TTL}}}
	for _, c := range w.clients {
		a.Cmds = append(a.Cmds, Cmd{Name: "client", Client: c.name, Member: c.member})
	}
	return a
}

func (w *Walk) allows(kind string) bool { return slices.Contains(w.opts.Faults, kind) }

// busy: some client holds the lock on a lease the server has not ended,
// or a crashed one's key still does.
func (w *Walk) busy() bool {
	return slices.ContainsFunc(w.clients, func(c *walkClient) bool { return (c.held && !c.leaseGone) || c.ghost })
}

func (w *Walk) waiter() *walkClient {
	for _, c := range w.clients {
		if c.waiting {
			return c
		}
	}
	return nil
}

// idle and active: a crashed client does nothing until its old lease is
// seen gone, so that the lease waited for is that one.
func (c *walkClient) idle() bool {
	return !c.held && !c.waiting && c.paused == "" && !c.cut && !c.ghost
}
func (c *walkClient) active() bool { return c.paused == "" && !c.cut && !c.waiting && !c.ghost }

// walkKinds are the action kinds, in the order Names lists them.
//
// A lost acquire is listed right after the acquire, so that a drawn index
// that names an action not allowed now, rolling on to the next one allowed
// (Pick), reaches it no more often than its own share: rolling from the
// faults a free lock does not allow, it wraps to the plain acquire.
var walkKinds = []string{"acquire", "lose-acquire", "wait", "await", "cs", "release", "pause-write", "pause-release",
	"wait-lease-gone", "resume", "expire", "cut", "blip", "crash", "isolate", "slow"}

// lostAcquirer is the one client whose acquire's answer a walk loses: one
// action among the others, not one per client, so that drawing it does
// not crowd out what the other faults need (a holder and a waiter); and
// not the first client, whose closing acquire then finds any key it left.
const lostAcquirer = "c2"

// lateKinds are the action kinds Names lists only when they may be drawn,
// so that the other kinds' scripts are those they were before these
// existed: each with the fault kind that allows it.
var lateKinds = map[string]string{"crash": WalkCrash, "lose-acquire": WalkLostAcquire, "blip": WalkBlip,
	"isolate": WalkIsolate, "slow": WalkSlow}

// Names lists every action a walk could ever draw, by name ("acquire
// c1"), in a fixed order: a drawn index into it names the same action
// whatever came before, so deleting one step of a script leaves the others
// as they were. Crashes, lost acquires and blips are listed only when they may be
// drawn, so that the other kinds' scripts are those they were before these
// existed.
func (w *Walk) Names() []string {
	var out []string
	for _, k := range walkKinds {
		if f, late := lateKinds[k]; late && !w.allows(f) || k == "slow" && w.opts.TTL < slowMinTTL {
			continue
		}
		for _, c := range w.clients {
			if k == "lose-acquire" && c.name != lostAcquirer {
				continue
			}
			out = append(out, k+" "+c.name)
		}
	}
	return append(out, "heal")
}

// Pick is the first action Next allows at or after Names()[u], round the
// list; false if none is allowed.
func (w *Walk) Pick(u int) (Action, bool) {
	acts := w.Next()
	all := w.Names()
	for d := range all {
		name := all[(u+d)%len(all)]
		for _, a := range acts {
			if a.Name == name {
				return a, true
			}
		}
	}
	return Action{}, false
}

// Next lists the actions that may come next, in a fixed order (the
// plainest first, so a shrunk choice of 0 is the plainest step).
func (w *Walk) Next() []Action {
	var out []Action
	add := func(kind, client string, cmds ...Cmd) { out = append(out, action(kind, client, cmds...)) }
	busy, waiter := w.busy(), w.waiter()
	firm := slices.ContainsFunc(w.clients, func(c *walkClient) bool { return c.held && !c.leaseGone && !c.doomed })
	cutDoomed := slices.ContainsFunc(w.clients, func(c *walkClient) bool { return c.cut && c.doomed })
	anyPaused := slices.ContainsFunc(w.clients, func(c *walkClient) bool { return c.paused != "" })
	anyCut := slices.ContainsFunc(w.clients, func(c *walkClient) bool { return c.cut })
	for _, c := range w.clients {
		switch {
		case c.idle() && !busy && waiter == nil:
			add("acquire", c.name, Cmd{Name: "acquire"})
		case c.idle() && busy && waiter == nil:
			add("wait", c.name, Cmd{Name: "acquire", Async: true}, Cmd{Name: "wait-queued"})
		}
		if c.waiting && !busy {
			add("await", c.name, Cmd{Name: "await"})
		}
		if w.allows(WalkLostAcquire) && c.name == lostAcquirer && c.idle() && !busy && waiter == nil {
			add("lose-acquire", c.name, Cmd{Name: "acquire", Answer: "lost"})
		}
		if c.active() && c.held {
			add("cs", c.name, Cmd{Name: "cs"})
			add("release", c.name, Cmd{Name: "release"})
		}
	}
	for _, c := range w.clients {
		if w.allows(WalkPause) && c.active() && c.held && !c.leaseGone {
			add("pause-write", c.name, Cmd{Name: "pause", At: resource.BeforeWrite}, Cmd{Name: "cs", Async: true}, Cmd{Name: "wait-paused"})
			add("pause-release", c.name, Cmd{Name: "pause", At: resource.BeforeRelease}, Cmd{Name: "release", Async: true}, Cmd{Name: "wait-paused"})
		}
		if c.doomed {
			add("wait-lease-gone", c.name, Cmd{Name: "wait-lease-gone"})
		}
		if c.paused != "" && !c.doomed {
			add("resume", c.name, Cmd{Name: "resume"}, Cmd{Name: "await"})
		}
		// A waiter's lease is revoked only while a holder keeps the lock
		// for sure: with the holder's lease lapsing, the waiter's grant
		// would race the revoke.
		if w.allows(WalkExpire) && ((c.active() && c.held && !c.leaseGone) || (c.waiting && !c.waiterExpired && firm)) {
			add("expire", c.name, Cmd{Name: "expire", Mode: faults.ModeRevoke})
		}
		if w.allows(WalkCut) && c.active() && c.held && !c.leaseGone {
			add("cut", c.name, Cmd{Name: "cut"})
		}
		if w.allows(WalkBlip) && c.active() && c.held && !c.leaseGone {
			ttl := time.Duration(w.opts.TTL) * time.Second
			blip := Cmd{Name: "cut", For: 4 * ttl / 10}
			if w.opts.TTL >= heldBlipMinTTL {
				blip.Name = "hold-answers" // see WalkBlip
			}
			add("blip", c.name, blip, Cmd{Name: "cs", Work: 3 * ttl / 2})
		}
		if w.allows(WalkCrash) && c.active() && c.held && !c.leaseGone {
			add("crash", c.name, Cmd{Name: "crash"})
		}
		if w.isolable(c) {
			out = append(out, isolate(c))
		}
		if w.allows(WalkSlow) && w.opts.TTL >= slowMinTTL && c.active() && c.held && !c.leaseGone && !anyCut && !anyPaused {
			ttl := time.Duration(w.opts.TTL) * time.Second
			out = append(out, Action{Name: "slow " + c.name, Cmds: []Cmd{
				{Name: "delay", Client: c.name, By: 2 * ttl / 15},
				{Name: "cs", Client: c.name, Work: 2 * ttl},
				{Name: "heal"},
			}})
		}
	}
	if anyCut && !cutDoomed && !anyPaused {
		out = append(out, heal())
	}
	return out
}

// Close is the next action of the script's end, or false once the script
// is complete: wait out every doomed lease, resume the paused, heal the
// cut, release every holder, let the waiter finish; then one client must
// be granted the lock again (the lock makes progress once faults heal),
// does a section and releases; last, the check.
func (w *Walk) Close() (Action, bool) {
	if w.done {
		return Action{}, false
	}
	first := w.clients[0]
	if w.finalAsked && first.held {
		return action("section", first.name, Cmd{Name: "cs"}, Cmd{Name: "release"}), true
	}
	for _, c := range w.clients {
		if c.doomed {
			return action("wait-lease-gone", c.name, Cmd{Name: "wait-lease-gone"}), true
		}
	}
	for _, c := range w.clients {
		if c.paused != "" {
			return action("resume", c.name, Cmd{Name: "resume"}, Cmd{Name: "await"}), true
		}
	}
	if slices.ContainsFunc(w.clients, func(c *walkClient) bool { return c.cut }) {
		return heal(), true
	}
	for _, c := range w.clients {
		if c.held {
			return action("release", c.name, Cmd{Name: "release"}), true
		}
	}
	if c := w.waiter(); c != nil {
		return action("await", c.name, Cmd{Name: "await"}), true
	}
	if !w.finalAsked {
		w.finalAsked = true
		return action("progress", first.name, Cmd{Name: "acquire"}), true
	}
	w.done = true
	return Action{Name: "check", Cmds: []Cmd{{Name: "check"}}}, true
}

// action is the action kind of client: its commands, each of client.
func action(kind, client string, cmds ...Cmd) Action {
	a := Action{Name: kind + " " + client}
	for _, c := range cmds {
		c.Client = client
		a.Cmds = append(a.Cmds, c)
	}
	return a
}

func heal() Action { return Action{Name: "heal", Cmds: []Cmd{{Name: "heal"}}} }

// isolable: c may be drawn a cut-off member (see WalkIsolate) — it holds
// on a live lease, alone on its member, on a cluster that keeps a quorum
// without it, and every other client is idle, so that nothing but c's ask
// races the lease's end.
func (w *Walk) isolable(c *walkClient) bool {
	if !w.allows(WalkIsolate) || w.opts.Members < 3 || !c.active() || !c.held || c.leaseGone {
		return false
	}
	return !slices.ContainsFunc(w.clients, func(o *walkClient) bool {
		return o != c && (o.member == c.member || !o.idle())
	})
}

// isolate is the isolate action of c: its member cut off, its lease waited
// out, its ask from the cut-off side, the heal.
func isolate(c *walkClient) Action {
	return Action{Name: "isolate " + c.name, Cmds: []Cmd{
		{Name: "isolate", Member: c.member},
		{Name: "wait-lease-gone", Client: c.name},
		{Name: "acquire", Client: c.name},
		{Name: "heal"},
	}}
}

// Progressed reports whether the closing acquire, after every fault had
// healed, was granted.
func (w *Walk) Progressed() bool { return w.finalGranted }

// Take learns from an action's outcomes, one per command (nil: assume
// each step did what a correct lock does — for a script drawn before it
// runs).
func (w *Walk) Take(a Action, outs []run.Outcome) {
	for i, c := range a.Cmds {
		var out run.Outcome
		if i < len(outs) {
			out = outs[i]
		}
		w.step(c, out, outs == nil)
	}
}

// step learns from one command and its outcome.
func (w *Walk) step(cmd Cmd, out run.Outcome, predict bool) {
	switch cmd.Name {
	case "heal":
		for _, c := range w.clients {
			c.cut, c.isolated = false, false
		}
		return
	case "isolate":
		for _, c := range w.clients {
			c.isolated = c.isolated || c.member == cmd.Member
		}
		return
	}
	c := w.client(cmd.Client)
	if c == nil {
		return
	}
	granted := func() bool {
		if predict {
			return !c.waiterExpired
		}
		return out.Granted()
	}
	switch cmd.Name {
	case "acquire":
		switch {
		case cmd.Answer != "":
			// The answer was lost: a correct lock says so (and cleans up,
			// or takes its key up when asked again).
			c.held = !predict && out.Granted()
		case cmd.Async:
			c.waiting = true
		case c.isolated:
			// Asked from a member cut off from the quorum: a correct
			// lock cannot grant it.
			c.held = !predict && out.Granted()
			c.leaseGone = false
		default:
			c.held = granted()
			c.leaseGone = false
			if w.finalAsked {
				w.finalGranted = c.held
			}
		}
	case "await":
		switch {
		case c.waiting:
			c.held = granted()
			c.leaseGone = c.held && c.waiterExpired
			c.waiting, c.waiterExpired = false, false
		case c.paused == "release":
			c.held = false
		}
		c.paused = ""
	case "release":
		if !cmd.Async {
			c.held = false
		}
	case "pause":
		c.paused = "cs"
		if cmd.At == resource.BeforeRelease || cmd.At == resource.InRelease {
			c.paused = "release"
		}
		c.doomed = true
	case "wait-lease-gone":
		c.doomed, c.leaseGone, c.ghost = false, true, false
	case "expire":
		if c.waiting {
			c.waiterExpired = true
		} else {
			c.leaseGone = true
		}
	case "cut":
		if cmd.For == 0 { // a blip heals by itself
			c.cut, c.doomed = true, true
		}
	case "crash":
		c.held, c.ghost, c.doomed = false, true, true
	}
}

func (w *Walk) client(name string) *walkClient {
	for _, c := range w.clients {
		if c.name == name {
			return c
		}
	}
	return nil
}

// IsFault says whether the action is a fault (pause, cut, expire, crash, a
// lost acquire, a blip, an isolated member, a slow link).
func (a Action) IsFault() bool {
	kind, _, _ := strings.Cut(a.Name, " ")
	return slices.Contains([]string{"pause-write", "pause-release", "cut", "expire", "crash", "lose-acquire", "blip",
		"isolate", "slow"}, kind)
}

// DrawScript draws a script from seed alone: the preamble, actions drawn
// actions (more if none of them was a fault, so every script has one),
// and the closing steps, each step as a correct lock makes it go. The same
// seed draws the same script.
func DrawScript(seed uint64, opts WalkOptions, actions int) []string {
	rng := rand.New(rand.NewPCG(seed, 0x3a1c))
	w := NewWalk(opts)
	lines := w.Preamble().Lines()
	all := w.Names()
	drawn := 0 // faults drawn
	for i := 0; i < actions || (drawn == 0 && i < 4*actions); i++ {
		a, ok := w.Pick(rng.IntN(len(all)))
		if !ok {
			break
		}
		if a.IsFault() {
			drawn++
		}
		w.Take(a, nil)
		lines = append(lines, a.Lines()...)
	}
	for {
		a, ok := w.Close()
		if !ok {
			return lines
		}
		w.Take(a, nil)
		lines = append(lines, a.Lines()...)
	}
}

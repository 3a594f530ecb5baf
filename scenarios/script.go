package scenarios

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/datadriven"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/models"
)

// Step is one command of a scenario script, in the datadriven format: `#`
// lines narrate, a command line follows, then `----` and the expected output
// up to a blank line.
type Step struct {
	Line      int
	Narration []string
	Cmd       string
	Args      []datadriven.CmdArg
	Expected  string
}

// ParseScript reads a script. name is used in errors ("name:line: …").
func ParseScript(name, text string) ([]Step, error) {
	var steps []Step
	var narration []string
	sc := bufio.NewScanner(strings.NewReader(text))
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		switch {
		case s == "":
			continue
		case strings.HasPrefix(s, "#"):
			narration = append(narration, strings.TrimSpace(strings.TrimPrefix(s, "#")))
			continue
		}
		cmd, args, err := datadriven.ParseLine(s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		st := Step{Line: line, Narration: narration, Cmd: cmd, Args: args}
		narration = nil
		if !sc.Scan() || strings.TrimSpace(sc.Text()) != "----" {
			return nil, fmt.Errorf("%s:%d: %s: want a line \"----\" after the command", name, line, cmd)
		}
		line++
		var out []string
		for sc.Scan() {
			line++
			if strings.TrimSpace(sc.Text()) == "" {
				break
			}
			out = append(out, sc.Text())
		}
		st.Expected = strings.Join(out, "\n")
		if _, ok := handlers[cmd]; !ok {
			return nil, fmt.Errorf("%s:%d: unknown command %q (commands: %s)", name, st.Line, cmd, strings.Join(commandNames(), ", "))
		}
		if err := specs[cmd].check(args); err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %v", name, st.Line, cmd, err)
		}
		if cmd == "setup" && len(steps) > 0 {
			return nil, fmt.Errorf("%s:%d: setup: must be the script's first command", name, st.Line)
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// Do runs one script command on the run and returns its output: stable
// text, with symbolic names and relative tokens only.
func (e *Env) Do(ctx context.Context, cmd string, args []datadriven.CmdArg) string {
	h, ok := handlers[cmd]
	if !ok {
		return fmt.Sprintf("error: unknown command %q", cmd)
	}
	a := argMap(args)
	out, err := h(ctx, e, a)
	if err != nil && out == "" {
		return "error: " + err.Error()
	}
	return out
}

// DoLine runs one command line as a scenario file writes it ("acquire c2
// async"), bounded as a script step is. A line that does not parse, names
// an unknown command or gives it an argument it does not take is an error.
func (e *Env) DoLine(ctx context.Context, line string) (string, error) {
	cmd, args, err := datadriven.ParseLine(line)
	if err != nil {
		return "", fmt.Errorf("%s: %w", line, err)
	}
	sp, ok := specs[cmd]
	if !ok {
		return "", fmt.Errorf("%s: unknown command %q", line, cmd)
	}
	if err := sp.check(args); err != nil {
		return "", fmt.Errorf("%s: %w", line, err)
	}
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	return e.Do(ctx, cmd, args), nil
}

type args struct {
	pos  []string
	kv   map[string]string
	flag map[string]bool
}

func argMap(in []datadriven.CmdArg) args {
	a := args{kv: map[string]string{}, flag: map[string]bool{}}
	for _, x := range in {
		switch {
		case len(x.Vals) == 0:
			a.pos = append(a.pos, x.Key)
			a.flag[x.Key] = true
		default:
			a.kv[x.Key] = x.Vals[0]
		}
	}
	return a
}

// client is the first positional argument.
func (a args) client() string {
	if len(a.pos) == 0 {
		return ""
	}
	return a.pos[0]
}

type handler func(ctx context.Context, e *Env, a args) (string, error)

// spec is what a command accepts: a client name or none, key=value
// arguments, bare flags.
type spec struct {
	client bool
	keys   []string
	flags  []string
}

// specs: every command's arguments. A script is refused at parse time for
// anything else, so a typo never becomes a step that silently does less.
var specs = map[string]spec{
	"setup":           {keys: []string{"members", "ttl"}},
	"client":          {client: true, keys: []string{"member"}},
	"acquire":         {client: true, flags: []string{"async"}},
	"cs":              {client: true, flags: []string{"async"}},
	"release":         {client: true, keys: []string{"answer", "grant"}, flags: []string{"async"}},
	"await":           {client: true},
	"pause":           {client: true, keys: []string{"at"}},
	"wait-paused":     {client: true},
	"resume":          {client: true},
	"cut":             {client: true},
	"crash":           {client: true},
	"heal":            {},
	"expire":          {client: true, keys: []string{"mode"}},
	"wait-lease-gone": {client: true},
	"wait-queued":     {client: true},
	"check":           {},
}

// check says what is wrong with args for the command, if anything.
func (sp spec) check(in []datadriven.CmdArg) error {
	clients := 0
	for _, x := range in {
		switch {
		case len(x.Vals) == 0 && slices.Contains(sp.flags, x.Key):
		case len(x.Vals) == 0 && sp.client && clients == 0:
			clients++
		case len(x.Vals) == 0:
			return fmt.Errorf("unexpected argument %q%s", x.Key, sp.accepts())
		case !slices.Contains(sp.keys, x.Key):
			return fmt.Errorf("unknown argument %q%s", x.Key, sp.accepts())
		case len(x.Vals) != 1 || x.Vals[0] == "":
			return fmt.Errorf("%s: want one value", x.Key)
		}
	}
	if sp.client && clients == 0 {
		return fmt.Errorf("want a client name%s", sp.accepts())
	}
	return nil
}

// accepts lists what a command takes, for an error message.
func (sp spec) accepts() string {
	var parts []string
	if sp.client {
		parts = append(parts, "CLIENT")
	}
	for _, k := range sp.keys {
		parts = append(parts, k+"=…")
	}
	parts = append(parts, sp.flags...)
	if len(parts) == 0 {
		return " (it takes no arguments)"
	}
	return " (it takes " + strings.Join(parts, " ") + ")"
}

// handlers: one per command, each a thin call into Env.
var handlers = map[string]handler{
	"setup": func(ctx context.Context, e *Env, a args) (string, error) {
		if m, err := strconv.Atoi(cmp.Or(a.kv["members"], "0")); err != nil || m < 0 {
			return "", fmt.Errorf("setup: members=%s: want a count", a.kv["members"])
		} else if have := len(e.c.Members()); m > have {
			return "", fmt.Errorf("setup: the script needs %d members, the cluster has %d", m, have)
		}
		if ttl := a.kv["ttl"]; ttl != "" && ttl != strconv.Itoa(e.opts.TTL) {
			return "", fmt.Errorf("setup: the script's lease TTL is %s s, the run's %d s", ttl, e.opts.TTL)
		}
		return "ready", nil
	},
	"client": func(ctx context.Context, e *Env, a args) (string, error) {
		if err := e.AddClient(ctx, a.client(), a.kv["member"]); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s: connected to %s", a.client(), a.kv["member"]), nil
	},
	"acquire": func(ctx context.Context, e *Env, a args) (string, error) {
		return e.maybeAsync(ctx, a, e.Acquire, "acquiring")
	},
	"cs": func(ctx context.Context, e *Env, a args) (string, error) {
		return e.maybeAsync(ctx, a, e.CS, "in critical section")
	},
	"release": func(ctx context.Context, e *Env, a args) (string, error) {
		switch a.kv["answer"] {
		case "":
		case "lost":
			return e.ReleaseAnswerLost(ctx, a.client())
		default:
			return "", fmt.Errorf("release: answer=%s: want answer=lost", a.kv["answer"])
		}
		return e.maybeAsync(ctx, a, func(ctx context.Context, client string) (string, error) {
			return e.ReleaseGrant(ctx, client, a.kv["grant"])
		}, "releasing")
	},
	"await": func(ctx context.Context, e *Env, a args) (string, error) {
		return e.Await(ctx, a.client())
	},
	"pause": func(ctx context.Context, e *Env, a args) (string, error) {
		return e.Pause(ctx, a.client(), a.kv["at"])
	},
	"wait-paused": func(ctx context.Context, e *Env, a args) (string, error) {
		return e.WaitPaused(ctx, a.client())
	},
	"resume": func(ctx context.Context, e *Env, a args) (string, error) {
		return e.Resume(ctx, a.client())
	},
	"cut": func(ctx context.Context, e *Env, a args) (string, error) {
		if _, err := e.Fault(ctx, faults.Fault{Kind: faults.CutClient, Client: a.client()}); err != nil {
			return "", err
		}
		return a.client() + ": link cut", nil
	},
	"crash": func(ctx context.Context, e *Env, a args) (string, error) {
		return e.Crash(ctx, a.client())
	},
	"heal": func(ctx context.Context, e *Env, a args) (string, error) {
		if err := e.nemesis.UndoAll(ctx); err != nil {
			return "", err
		}
		return "all faults undone", nil
	},
	"expire": func(ctx context.Context, e *Env, a args) (string, error) {
		mode := a.kv["mode"]
		if mode == "" {
			mode = faults.ModeRevoke
		}
		return e.Expire(ctx, a.client(), mode)
	},
	"wait-lease-gone": func(ctx context.Context, e *Env, a args) (string, error) {
		return e.WaitLeaseGone(ctx, a.client())
	},
	"wait-queued": func(ctx context.Context, e *Env, a args) (string, error) {
		return e.WaitQueued(ctx, a.client())
	},
	"check": func(ctx context.Context, e *Env, a args) (string, error) {
		return e.CheckSummary()
	},
}

func commandNames() []string {
	var names []string
	for n := range handlers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// maybeAsync runs step now, or in the background with the `async` flag (the
// result is read with `await`).
func (e *Env) maybeAsync(ctx context.Context, a args, step func(context.Context, string) (string, error), doing string) (string, error) {
	client := a.client()
	if !a.flag["async"] {
		return step(ctx, client)
	}
	w, err := e.worker(client)
	if err != nil {
		return "", err
	}
	w.async = make(chan string, 1)
	bg := e.background(ctx)
	go func() {
		out, err := step(bg, client)
		if out == "" && err != nil {
			out = "error: " + err.Error()
		}
		w.async <- out
	}()
	return fmt.Sprintf("%s: %s", client, doing), nil
}

// Await waits for client's background step and returns its output.
func (e *Env) Await(ctx context.Context, client string) (string, error) {
	w, err := e.worker(client)
	if err != nil {
		return "", err
	}
	if w.async == nil {
		return "", fmt.Errorf("%s has no background step", client)
	}
	select {
	case out := <-w.async:
		w.async = nil
		return out, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// WaitQueued waits until client's pending acquire is visibly waiting, the
// same way for every lock: a key under the run's prefix carries one of the
// client's leases (it is queued, or holds), or — for a lock that keeps no
// key while it waits, such as one that polls — its acquire is still pending
// after the server has answered a request of the client's since the wait
// began (it asked and was told to wait; a request merely sent may not have
// reached the server yet).
func (e *Env) WaitQueued(ctx context.Context, client string) (string, error) {
	w, err := e.worker(client)
	if err != nil {
		return "", err
	}
	answered := w.cl.Answered()
	ctx, cancel := context.WithTimeout(ctx, faults.DefaultWait)
	defer cancel()
	err = poll.Until(ctx, client+" to wait for the lock", leasePoll, func(ctx context.Context) (bool, error) {
		e.learn(w)
		// Not keys-only: that drops each key's lease.
		resp, err := e.c.Admin().Get(ctx, e.opts.Prefix, clientv3.WithPrefix())
		if err != nil {
			return false, err
		}
		mine := e.leasesOf(client)
		for _, kv := range resp.Kvs {
			if mine[kv.Lease] {
				return true, nil
			}
		}
		return w.async != nil && w.cl.Answered() > answered, nil
	})
	if err != nil {
		return "", err
	}
	e.observe(history.ObservedQueued, client, "")
	return client + ": waiting", nil
}

// ReleaseAnswerLost has client release its latest grant over a link that
// fails one way: the request reaches the server and takes effect there (the
// lab waits until the grant's key is gone or replaced, and records that it
// saw so), then the connection is severed with the answer still held, so the
// client hears only that its connection broke. The lock must treat that
// release as ambiguous, and a retry of it as a release of that grant only.
func (e *Env) ReleaseAnswerLost(ctx context.Context, client string) (string, error) {
	w, err := e.worker(client)
	if err != nil {
		return "", err
	}
	g := w.grant
	if g.Key == "" || g.Token == 0 {
		return "", fmt.Errorf("release answer=lost: %s's grant names no key and revision to watch on the server", client)
	}
	w.cl.CutAnswers()
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	bg := e.background(ctx)
	go func() {
		out, err := e.Release(bg, client)
		done <- result{out, err}
	}()
	wctx, cancel := context.WithTimeout(ctx, faults.DefaultWait)
	err = poll.Until(wctx, client+"'s release to take effect on the server", leasePoll, func(ctx context.Context) (bool, error) {
		stands, err := e.grantStands(ctx, g)
		return !stands, err
	})
	cancel()
	if err == nil {
		e.observe(history.ObservedReleased, client, "")
	}
	w.cl.Sever()
	w.cl.Heal()
	r := <-done
	if err != nil {
		return "", err
	}
	return r.out + "\nserver: " + client + "'s release took effect", nil
}

// leasesOf is the set of leases client has had that the server still has.
func (e *Env) leasesOf(client string) map[int64]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[int64]bool{}
	for l, c := range e.leases {
		if c == client {
			out[l] = true
		}
	}
	return out
}

// Reports checks every resource's history.
func (e *Env) Reports() ([]models.Report, error) {
	out := make([]models.Report, len(e.runs))
	for i := range e.runs {
		r, err := models.Check(history.Header{Minimum: e.minimum}, e.Events(i), models.DefaultTimeout)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// CheckSummary is the check command's output: one line per resource and the
// belief finding.
func (e *Env) CheckSummary() (string, error) {
	reports, err := e.Reports()
	if err != nil {
		return "", err
	}
	var lines []string
	for i, r := range reports {
		line := fmt.Sprintf("%s: %s", e.runs[i].res.Name(), r.Result())
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
	if reports[0].Belief.Result == models.Fail {
		belief = "belief: two clients believed they held the lock at once"
	}
	return strings.Join(append(lines, belief), "\n"), nil
}

package live

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/models"

	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/script"
)

// DefaultTTL is the lease TTL, in seconds, of the lab's locks: long
// enough for a student to click before a lease lapses by itself.
const DefaultTTL = 1

// Config describes a lab.
type Config struct {
	// Cluster and Locks are a lab of etcd locks (EtcdStore): the locks the
	// page offers, by name. Store, if set, is the lab's store instead.
	Cluster *cluster.Cluster
	Locks   map[string]etcdlock.Factory
	Store   Store
	// Lock is the lock the page starts with.
	Lock string
	// TTL is the lease TTL in seconds (zero: DefaultTTL).
	TTL int
}

// Step is one command the student ran and what it printed.
type Step struct {
	Line string `json:"line"`
	Out  string `json:"out"`
	// Narration is the loaded lesson's words before the step, if any.
	Narration []string `json:"narration,omitempty"`
}

// Lab is one live lab: the run the student acts on, what was done, and
// the lesson loaded, if any. Its methods are safe for concurrent use:
// every browser on the lab sees and drives the same run.
type Lab struct {
	cfg Config
	ctx context.Context // the lab's: background steps outlive the request
	end context.CancelFunc

	// queue lets one command act on the run at a time — a step, a reset,
	// a lesson loaded — in the order they came: a double click runs two
	// steps one after the other, never two on one client at once, and a
	// reset waits for the step in flight before it closes the run.
	queue sync.Mutex

	mu     sync.Mutex
	env    Engine
	lock   string
	steps  []Step
	lesson *lesson
	// clients are the clients the run has (see MaxClients).
	clients map[string]bool
	// task is the exercise the student works on, if any.
	task    *Exercise
	version int           // bumped at every change the page shows
	changed chan struct{} // closed and replaced at every change
	runs    int

	// checked is the State last computed, for its version: the pages
	// and the events pushed at one version share one check of the
	// history (held while a State is computed).
	checkedMu sync.Mutex
	checked   *State
}

// lesson is a catalog scenario being stepped through.
type lesson struct {
	name  string
	steps []script.Step
	next  int
}

// New starts a lab on cfg.Store (or cfg.Cluster) with cfg.Lock.
func New(cfg Config) (*Lab, error) {
	if cfg.Store == nil {
		if cfg.Cluster == nil {
			return nil, errors.New("live: a lab needs a cluster or a store")
		}
		cfg.Store = EtcdStore(cfg.Cluster, cfg.Locks)
	}
	if !slices.Contains(cfg.Store.Locks(), cfg.Lock) {
		return nil, fmt.Errorf("live: %w", unknownLock(cfg.Store, cfg.Lock))
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	ctx, end := context.WithCancel(context.Background())
	l := &Lab{cfg: cfg, ctx: ctx, end: end, changed: make(chan struct{})}
	if err := l.Reset(cfg.Lock); err != nil {
		end()
		return nil, err
	}
	go l.watch()
	return l, nil
}

// Names lists the locks' names, sorted.
func Names(locks map[string]etcdlock.Factory) []string {
	return slices.Sorted(maps.Keys(locks))
}

// joinNames lists names for a message.
func joinNames(names []string) string { return strings.Join(names, ", ") }

// MaxClients is the most clients a lab's run may have: each is a
// connection and a link of its own, and a class needs three.
const MaxClients = 8

// Reset starts again with the lock called name: a fresh run, nothing done.
// It waits for the step in flight, if any.
func (l *Lab) Reset(name string) error {
	l.queue.Lock()
	defer l.queue.Unlock()
	return l.reset(name)
}

// reset is Reset with l.queue held.
func (l *Lab) reset(name string) error {
	l.mu.Lock()
	l.runs++
	n := l.runs
	l.mu.Unlock()
	env, err := l.cfg.Store.Open(l.ctx, name, labRunID(n), l.cfg.TTL)
	if err != nil {
		return err
	}
	l.mu.Lock()
	env.Bind(l.ctx)
	old := l.env
	l.env, l.lock, l.steps, l.lesson, l.clients = env, name, nil, nil, map[string]bool{}
	l.bump()
	l.mu.Unlock()
	if old != nil {
		// The run the student left: its faults undone, its clients closed.
		return old.Close()
	}
	return nil
}

// bump marks a change the page shows; l.mu is held.
func (l *Lab) bump() {
	l.version++
	close(l.changed)
	l.changed = make(chan struct{})
}

// Do runs one command line on the run, after the commands before it. A
// line that does not parse, or a client past MaxClients, is a one-line
// error, and nothing runs.
func (l *Lab) Do(ctx context.Context, line string) (string, error) {
	c, err := script.ParseLine(strings.TrimSpace(line))
	if err != nil {
		return "", fmt.Errorf("%s: %w", strings.TrimSpace(line), err)
	}
	if !waits(c) {
		l.queue.Lock()
		defer l.queue.Unlock()
	}
	l.mu.Lock()
	full := c.Name == "client" && !l.clients[c.Client] && len(l.clients) >= MaxClients
	l.mu.Unlock()
	if full {
		return "", fmt.Errorf("%s: the lab has its %d clients: reset to start again", c, MaxClients)
	}
	return l.do(ctx, c, nil), nil
}

// waits reports whether c only waits for what other commands bring about
// (await, the wait- commands): it does not take the queue, or it would
// hold back the very command it waits for — a resume sent at the same
// moment as the await it unblocks.
func waits(c script.Cmd) bool {
	return c.Name == "await" || strings.HasPrefix(c.Name, "wait-")
}

// do runs c on the run and records it as a step; l.queue is held, unless
// c only waits (see waits).
func (l *Lab) do(ctx context.Context, c script.Cmd, narration []string) string {
	l.mu.Lock()
	env := l.env
	if c.Name == "client" {
		l.clients[c.Client] = true
	}
	l.mu.Unlock()
	out := script.Do(ctx, env, c).String()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.env == env {
		l.steps = append(l.steps, Step{Line: c.String(), Out: out, Narration: narration})
		l.bump()
	}
	return out
}

// Lessons are the catalog scenarios a lab of locks of kind k steps
// through: those written as steps, for a lock of that kind.
func Lessons(k scenarios.StoreKind) []string {
	var names []string
	for _, s := range scenarios.Catalog() {
		if steps, err := s.Script(); err == nil && steps != nil && s.NotFor(k) == "" {
			names = append(names, s.Name)
		}
	}
	return names
}

// Load starts again with the catalog scenario called name to step through
// (Next), on the lock in use: one of Lessons.
func (l *Lab) Load(name string) error {
	s, err := scenarios.Lookup(name)
	if err != nil {
		return err
	}
	steps, err := s.Script()
	switch {
	case err != nil:
		return err
	case steps == nil:
		return fmt.Errorf("%s is driven by a workload, not steps: run it with locklab run --scenario %s", name, name)
	case s.NotFor(l.cfg.Store.Kind()) != "":
		return fmt.Errorf("%s (this lab's lessons: %s)", s.NotFor(l.cfg.Store.Kind()),
			strings.Join(Lessons(l.cfg.Store.Kind()), ", "))
	}
	l.queue.Lock()
	defer l.queue.Unlock()
	l.mu.Lock()
	lk := l.lock
	l.mu.Unlock()
	if err := l.reset(lk); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lesson = &lesson{name: name, steps: steps}
	l.bump()
	return nil
}

// Next runs the loaded lesson's next step, after the commands before it,
// and returns it; false when there is none left.
func (l *Lab) Next(ctx context.Context) (Step, bool) {
	l.queue.Lock()
	defer l.queue.Unlock()
	l.mu.Lock()
	ls := l.lesson
	if ls == nil || ls.next >= len(ls.steps) {
		l.mu.Unlock()
		return Step{}, false
	}
	st := ls.steps[ls.next]
	ls.next++
	l.mu.Unlock()
	out := l.do(ctx, st.Cmd, st.Narration)
	return Step{Line: st.Cmd.String(), Out: out, Narration: st.Narration}, true
}

// Save is what was done as a scenario file: every step with its output,
// which `locklab run --script` runs again, comparing each step's output.
func (l *Lab) Save() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "# Saved from the live lab: the %s lock, %d s leases.\n", l.lock, l.cfg.TTL)
	fmt.Fprintf(&b, "setup members=%d ttl=%d\n----\nready\n\n", l.cfg.Store.Members(), l.cfg.TTL)
	for _, st := range l.steps {
		if strings.HasPrefix(st.Line, "check") {
			continue
		}
		b.WriteString(script.Render(st.Narration, []string{st.Line}, []string{st.Out}))
	}
	// The verdicts as they stand close the file: what a run of it must
	// give again.
	if out, err := l.env.Check(); err == nil {
		b.WriteString(script.Render([]string{"The verdicts when the lab saved this file."}, []string{"check"}, []string{out.String()}))
	}
	return b.String()
}

// watch bumps the version whenever the history grows by itself (a lease
// the server ended, a background step's end), so every page follows — but
// not for the watcher's notes that the machine is busy (one a second on a
// busy machine, while nothing else happens): the page stays quiet, and
// shows them with the next step.
func (l *Lab) watch() {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	seen := -1
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
		}
		l.mu.Lock()
		events := l.env.Events(0)
		if len(events) != seen {
			if seen < 0 || seen > len(events) || !onlyStarved(events[seen:]) {
				l.bump()
			}
			seen = len(events)
		}
		l.mu.Unlock()
	}
}

// Close ends the lab, after the step in flight: the run's faults undone,
// its keys gone.
func (l *Lab) Close() error {
	l.end()
	l.queue.Lock()
	defer l.queue.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.env.Close()
}

// State is what the page shows at one moment.
type State struct {
	Version int      `json:"version"`
	Lock    string   `json:"lock"`
	Locks   []string `json:"locks"`
	// Store is the locks' store: etcd, redis (a primary with replicas) or
	// redlock (independent masters); the page offers its faults.
	Store string `json:"store"`
	Steps []Step `json:"steps"`
	// Belief says whether two clients believed they held the lock at once.
	Belief string `json:"belief"`
	// Resources are each resource's verdict so far and why.
	Resources []ResourceState `json:"resources"`
	// Lesson is the loaded scenario (""), its next step's narration and
	// line, and how many steps are left.
	Lesson     string   `json:"lesson,omitempty"`
	NextLine   string   `json:"next_line,omitempty"`
	NextWords  []string `json:"next_words,omitempty"`
	LessonLeft int      `json:"lesson_left"`
	// Exercise is the one being worked on, and whether the run reached it.
	Exercise *Exercise `json:"exercise,omitempty"`
	Reached  bool      `json:"reached"`
}

// ResourceState is one resource's verdict so far.
type ResourceState struct {
	Name   string `json:"name"`
	Result string `json:"result"`
	// Failed are the checks that failed, each with its explanation.
	Failed []string `json:"failed,omitempty"`
}

// State is the lab now, checked: every history judged as it stands.
func (l *Lab) State() State {
	l.mu.Lock()
	st := State{Version: l.version, Lock: l.lock, Locks: l.cfg.Store.Locks(), Store: storeName(l.cfg.Store.Kind()),
		Steps: slices.Clone(l.steps)}
	env := l.env
	task := l.task
	if ls := l.lesson; ls != nil {
		st.Lesson, st.LessonLeft = ls.name, len(ls.steps)-ls.next
		if ls.next < len(ls.steps) {
			st.NextLine, st.NextWords = ls.steps[ls.next].Cmd.String(), ls.steps[ls.next].Narration
		}
	}
	l.mu.Unlock()
	l.checkedMu.Lock()
	defer l.checkedMu.Unlock()
	if c := l.checked; c != nil && c.Version == st.Version {
		return *c
	}
	out, err := env.Check()
	if err != nil {
		st.Belief = "the history cannot be checked yet: " + err.Error()
		return st
	}
	defer func() { l.checked = &st }()
	st.Belief = "one holder at a time"
	for _, rc := range out.Checks {
		if rc.Report.Belief.Result == models.Fail {
			st.Belief = "two clients believed they held the lock at once"
		}
		rs := ResourceState{Name: rc.Resource, Result: string(rc.Report.Result())}
		for _, v := range rc.Report.Safety {
			if v.Result == models.Fail || v.Result == models.Unknown {
				rs.Failed = append(rs.Failed, fmt.Sprintf("%s %s: %s", v.Check, v.Result, v.Explanation))
			}
		}
		st.Resources = append(st.Resources, rs)
	}
	if task != nil {
		st.Exercise = task
		r := outcome{reports: map[string]models.Report{}, events: map[string][]history.Event{}}
		for i, rc := range out.Checks {
			r.reports[rc.Resource], r.events[rc.Resource] = rc.Report, env.Events(i)
		}
		st.Reached = task.reached(r)
	}
	return st
}

// Work sets the exercise the student works on ("" for none); the run goes
// on as it is, so one exercise can follow another on the same run.
func (l *Lab) Work(name string) error {
	var task *Exercise
	if name != "" {
		x, err := exercise(name)
		if err != nil {
			return err
		}
		task = &x
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.task = task
	l.bump()
	return nil
}

// events are resource i's history now, and the report's view of it.
func (l *Lab) events(resource string) (string, []history.Event, models.Report, error) {
	l.mu.Lock()
	env, lk := l.env, l.lock
	l.mu.Unlock()
	i := slices.Index(env.Resources(), resource)
	if i < 0 {
		return "", nil, models.Report{}, fmt.Errorf("unknown resource %q (resources: %s)", resource, strings.Join(env.Resources(), ", "))
	}
	events := env.Events(i)
	rep, err := models.Check(history.Header{}, events, models.DefaultTimeout)
	return lk, events, rep, err
}

// changes returns a channel closed at the next change, and the version now.
func (l *Lab) changes() (<-chan struct{}, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed, l.version
}

// onlyStarved reports whether events are all the machine watcher's notes
// that its CPUs were oversubscribed.
func onlyStarved(events []history.Event) bool {
	return !slices.ContainsFunc(events, func(e history.Event) bool {
		return e.Type != history.Observed || e.What != history.ObservedStarved
	})
}

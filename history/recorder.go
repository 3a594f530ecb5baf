package history

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Sink receives events in the order the recorder stamped them.
type Sink interface {
	Write(Event) error
}

// Memory is a Sink that keeps every event, for tests and small runs.
type Memory struct {
	mu     sync.Mutex
	events []Event
}

// Write appends e.
func (m *Memory) Write(e Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, e)
	return nil
}

// Events returns a copy of the events written so far.
func (m *Memory) Events() []Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Event(nil), m.events...)
}

// Tee writes every event to each sink in turn.
type Tee []Sink

// Write writes e to every sink and joins their errors.
func (t Tee) Write(e Event) error {
	var errs []error
	for _, s := range t {
		errs = append(errs, s.Write(e))
	}
	return errors.Join(errs...)
}

// Recorder stamps events with the time since it was created, on Go's
// monotonic clock, and passes them to its sink in stamp order. It is safe for
// concurrent use by every client of a run. A sink error is kept (Err) and
// later events are dropped, so a full disk cannot pass for a short history.
type Recorder struct {
	start time.Time
	sink  Sink

	mu     sync.Mutex
	nextID int
	open   map[int]Event // invocations not yet completed
	err    error
}

// NewRecorder starts the run's clock now.
func NewRecorder(sink Sink) *Recorder {
	return NewRecorderAt(sink, time.Now())
}

// NewRecorderAt is NewRecorder with the run's clock started at start, so that
// several histories of one run (one per protected resource) share a timeline.
func NewRecorderAt(sink Sink, start time.Time) *Recorder {
	return &Recorder{start: start, sink: sink, open: map[int]Event{}}
}

// Since converts an instant to the run's clock.
func (r *Recorder) Since(t time.Time) int64 { return int64(t.Sub(r.start)) }

func (r *Recorder) emit(e Event) {
	if r.err != nil {
		return
	}
	if e.Time == 0 {
		e.Time = r.Since(time.Now())
	}
	r.err = r.sink.Write(e)
}

// Invoke records that client starts op and returns the operation's id for
// Complete. in carries the operation's input: Lock, and an acquire's
// Deadline; its other fields are ignored.
func (r *Recorder) Invoke(client string, op Op, in Event) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextID++
	e := Event{Type: Invoke, ID: r.nextID, Client: client, Op: op, Lock: in.Lock, Deadline: in.Deadline}
	r.open[e.ID] = e
	r.emit(e)
	return e.ID
}

// Complete records the end of operation id. Its type comes from
// Classify(err); out carries the output (Token, Lease, Key, Value,
// Accepted, Reason, WriteAt).
func (r *Recorder) Complete(id int, err error, out Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	inv, ok := r.open[id]
	if !ok {
		return
	}
	delete(r.open, id)
	e := Event{Type: Classify(err), ID: id, Client: inv.Client, Op: inv.Op, Lock: inv.Lock,
		Token: out.Token, Lease: out.Lease, Key: out.Key, Value: out.Value, Accepted: out.Accepted, Reason: out.Reason,
		WriteAt: out.WriteAt, Tells: out.Tells}
	if err != nil {
		e.Error = err.Error()
	}
	r.emit(e)
}

// Fault records one edge of a fault's window. id pairs start and end; spec
// says what the fault is (its name is spec's), target what it resolved to
// ("m2").
func (r *Recorder) Fault(id int, start bool, spec FaultSpec, target string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := Event{Type: FaultEnd, ID: id, Fault: spec.String(), Spec: &spec, Target: target}
	if start {
		e.Type = FaultStart
	}
	if err != nil {
		e.Error = err.Error()
	}
	r.emit(e)
}

// LeaseEnd is what the lab knows of a lease the server has ended.
type LeaseEnd struct {
	Client string
	Lease  int64
	// LastAlive is the last moment the lease was known to be alive.
	LastAlive time.Time
	// LastRenewal is when the client last sent a keep-alive for it, at or
	// before LastAlive (zero: none seen).
	LastRenewal time.Time
	// TTL is the TTL the server granted the lease (zero: not known).
	TTL time.Duration
	// Renewals are the keep-alives the client sent for it that the lab
	// saw (the latest few), after the moment it was granted, if known:
	// oldest first.
	Renewals []time.Time
	// KeptAlive are the answers the client received to its keep-alives
	// for it while it was alive (the latest few), oldest first.
	KeptAlive []time.Time
	// Revoked is when the server answered the client's own revoke of it
	// (zero: it did not, that the lab saw).
	Revoked time.Time
}

// LeaseLost records, now, that a lease ended on the server: now is the
// first moment it is known gone.
func (r *Recorder) LeaseLost(end LeaseEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(r.leaseEvent(Event{Type: LeaseLost}, end))
}

// ObserveSaidEnded records, now, that end.Client's lock answered that its
// session had ended (ObservedSaidEnded); end is what the lab knows of its
// lease, LastRenewal the last keep-alive sent before now.
func (r *Recorder) ObserveSaidEnded(end LeaseEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.leaseEvent(Event{Type: Observed, What: ObservedSaidEnded}, end)
	if !end.LastRenewal.IsZero() {
		e.RenewedAt = min(max(r.Since(end.LastRenewal), 0), e.Time)
	}
	r.emit(e)
}

// leaseEvent is e, now, with what end says of its lease on the run's
// clock. The caller holds r.mu.
func (r *Recorder) leaseEvent(e Event, end LeaseEnd) Event {
	e.Client, e.Lease, e.AliveUntil, e.LeaseTTL = end.Client, end.Lease, max(r.Since(end.LastAlive), 0), int64(end.TTL)
	if !end.LastRenewal.IsZero() {
		e.RenewedAt = min(max(r.Since(end.LastRenewal), 0), e.AliveUntil)
	}
	now := r.Since(time.Now())
	e.Time = now
	for _, t := range end.Renewals {
		if at := r.Since(t); at >= 0 && at <= now {
			e.Renewals = append(e.Renewals, at)
		}
	}
	for _, t := range end.KeptAlive {
		if at := r.Since(t); at >= 0 && at <= now {
			e.KeptAlive = append(e.KeptAlive, at)
		}
	}
	if at := r.Since(end.Revoked); !end.Revoked.IsZero() && at >= 0 && at <= now {
		e.RevokedAt = at
	}
	return e
}

// Observe records, now, that the lab saw what (an Observed* constant)
// about client or member.
func (r *Recorder) Observe(what, client, member string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(Event{Type: Observed, What: what, Client: client, Member: member})
}

// ObserveGrantGone records, now, that client's grant with token was gone
// from the server while client still held it (see ObservedGrantGone).
func (r *Recorder) ObserveGrantGone(client string, token int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(Event{Type: Observed, What: ObservedGrantGone, Client: client, Token: token})
}

// ObserveReleaseKept records, now, that client's release of its grant
// with token answered that it released, and the server still shows the
// grant held (see ObservedReleaseKept).
func (r *Recorder) ObserveReleaseKept(client string, token int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(Event{Type: Observed, What: ObservedReleaseKept, Client: client, Token: token})
}

// ObserveLeaseless records, now, that client's grant with token rests on
// no lease on the server (see ObservedLeaseless).
func (r *Recorder) ObserveLeaseless(client string, token int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(Event{Type: Observed, What: ObservedLeaseless, Client: client, Token: token})
}

// BadToken is a grant whose token is not the create revision of its key
// (see ObservedBadToken).
type BadToken struct {
	Client string
	Token  int64
	Key    string
	// KeyRevision is Key's create revision at revision Token; zero: Key
	// did not exist then.
	KeyRevision int64
	// Ahead: Token is a revision the server had not reached.
	Ahead bool
}

// BadTokenOf reads an observed bad-token event back.
func BadTokenOf(e Event) BadToken {
	return BadToken{Client: e.Client, Token: e.Token, Key: e.Key, KeyRevision: e.KeyRevision, Ahead: e.TokenAhead}
}

// String says how the grant's token and key disagree, in lock.Grant's terms.
func (b BadToken) String() string {
	switch {
	case b.Ahead:
		return fmt.Sprintf("%s's Grant.Token %d is a revision the server had not reached when it was granted (Grant.Key %q)",
			b.Client, b.Token, b.Key)
	case b.KeyRevision == 0:
		return fmt.Sprintf("%s's Grant.Key %q did not exist at revision %d, its Grant.Token", b.Client, b.Key, b.Token)
	}
	return fmt.Sprintf("%s's Grant.Token %d is not the create revision %d of its Grant.Key %q", b.Client, b.Token,
		b.KeyRevision, b.Key)
}

// ObserveBadToken records, now, that a grant broke lock.Grant's contract.
func (r *Recorder) ObserveBadToken(b BadToken) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(Event{Type: Observed, What: ObservedBadToken, Client: b.Client, Token: b.Token, Key: b.Key,
		KeyRevision: b.KeyRevision, TokenAhead: b.Ahead})
}

// ObserveLost records, now, what became of the Grant.Lost of client's
// grant token: what is ObservedToldLost (it closed) or ObservedUnfollowed
// (the lab stopped following it).
func (r *Recorder) ObserveLost(what, client string, token int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(Event{Type: Observed, What: what, Client: client, Token: token})
}

// ObserveStall records, now, that the lab's process stood still since from
// (see ObservedStalled).
func (r *Recorder) ObserveStall(from time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(Event{Type: Observed, What: ObservedStalled, StalledFrom: max(r.Since(from), 0)})
}

// ObserveStarved records, now, that the machine's CPUs were
// oversubscribed since from (see ObservedStarved).
func (r *Recorder) ObserveStarved(from time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(Event{Type: Observed, What: ObservedStarved, StalledFrom: max(r.Since(from), 0)})
}

// ObserveLeaderless records, now, that member was without its leader since
// from (see ObservedLeaderless).
func (r *Recorder) ObserveLeaderless(member string, from time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(Event{Type: Observed, What: ObservedLeaderless, Member: member, StalledFrom: max(r.Since(from), 0)})
}

// Final records the resource's value at the end of the run.
func (r *Recorder) Final(value int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(Event{Type: Final, Value: &value})
}

// Err is the first error the sink returned, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

package script

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/pausegate"
	"github.com/locklab/locklab/lock/resource"
)

// Cmd is one command of a script, its arguments scanned and checked: what
// a line such as "pause c1 at=before-write" says, as values.
type Cmd struct {
	// Name is the command ("acquire", "pause"…); Client its client, for a
	// command that takes one.
	Name   string
	Client string
	// Member is client's and isolate's member=; At is pause's at= (a pause point);
	// Mode is expire's mode= (revoke or lapse, "" for revoke); Answer is
	// acquire's or release's answer= ("lost"), Next acquire's next=
	// ("lost": the request after its write), Grant release's grant= (a
	// token label, t1).
	Member, At, Mode, Answer, Next, Grant string
	// Async: the step runs in the background (its outcome is awaited).
	Async bool
	// Members and TTL are setup's members= and ttl= (0: not given).
	Members, TTL int
	// For is cut's for= (a blip: the link is cut that long, then healed;
	// 0: until heal); Work is cs's work= (the section lasts that long);
	// By is delay's by= (every message on the link arrives that late, each
	// way, until heal); Offset is jump-clock's offset= (how far the
	// member's wall clock moves, negative: back).
	For, Work, By, Offset time.Duration
	// Rate is drift-clock's rate= (how fast the member's wall clock runs
	// against the machine's: 2 is twice as fast).
	Rate float64
}

// The values a key may take; each returns what is wrong with v.
type check func(v string) error

func oneOf(vals ...string) check {
	return func(v string) error {
		if slices.Contains(vals, v) {
			return nil
		}
		return fmt.Errorf("want one of %s", strings.Join(vals, ", "))
	}
}

func between(lo, hi int, what string) check {
	return func(v string) error {
		if n, err := strconv.Atoi(v); err != nil || n < lo || n > hi {
			return fmt.Errorf("want %s, %d to %d", what, lo, hi)
		}
		return nil
	}
}

// MaxMembers and MaxTTL bound setup's members= and ttl=: a cluster of more
// members than etcd advises, a lease whose every wait runs for minutes, is
// not a lesson but a typo.
const (
	MaxMembers = 9
	MaxTTL     = 30
)

// numbered checks a name made of prefix and a number from 1 (m1, t2).
func numbered(prefix, what string) check {
	return func(v string) error {
		if n, err := strconv.Atoi(strings.TrimPrefix(v, prefix)); err != nil || n < 1 || !strings.HasPrefix(v, prefix) {
			return fmt.Errorf("want %s (%s1, %s2…)", what, prefix, prefix)
		}
		return nil
	}
}

// spec is what a command accepts: a client name or none, key=value
// arguments (each with the values it may take), bare flags.
type spec struct {
	client bool
	// orMember: member= may stand instead of the client (jump-clock and
	// drift-clock move a client's clock or a member's), never beside it.
	orMember bool
	keys     []string
	flags    []string
}

// checks are the values every key may take.
var checks = map[string]check{
	"members": between(1, MaxMembers, "a count of members"),
	"ttl":     between(1, MaxTTL, "a whole number of seconds"),
	"member":  numbered("m", "a member name"),
	"at":      oneOf(resource.AfterAcquire, resource.BeforeWrite, resource.BeforeRelease, resource.InAcquire, resource.InRelease, pausegate.AnyPoint),
	"mode":    oneOf(faults.ModeRevoke, faults.ModeLapse),
	"answer":  oneOf("lost"),
	"next":    oneOf("lost"),
	"grant":   numbered("t", "a grant's token label"),
	"for":     positiveDuration,
	"work":    positiveDuration,
	"by":      positiveDuration,
	"offset":  signedDuration,
	"rate":    clockRate,
}

// MinRate and MaxRate bound drift-clock's rate=: a clock a tenth as fast,
// or ten times as fast, as the machine's.
const (
	MinRate = 0.1
	MaxRate = 10
)

// clockRate checks a clock's rate, how fast it runs against the machine's:
// 2 (twice as fast), 0.5 (half), never 1.
func clockRate(v string) error {
	if r, err := strconv.ParseFloat(v, 64); err != nil || r < MinRate || r > MaxRate || r == 1 {
		return fmt.Errorf("want how fast the clock runs against the machine's, %v to %v and not 1 (2: twice as fast, 0.5: half)", MinRate, MaxRate)
	}
	return nil
}

// signedDuration checks a duration that may be negative, not zero: +3s,
// -500ms.
func signedDuration(v string) error {
	if d, err := time.ParseDuration(v); err != nil || d == 0 {
		return fmt.Errorf("want a duration other than zero, forward or back (+3s, -500ms)")
	}
	return nil
}

// positiveDuration checks a duration such as 400ms or 3s.
func positiveDuration(v string) error {
	if d, err := time.ParseDuration(v); err != nil || d <= 0 {
		return fmt.Errorf("want a positive duration (400ms, 3s)")
	}
	return nil
}

// specs: every command's arguments. A script is refused at parse time for
// anything else, so a typo never becomes a step that silently does less.
var specs = map[string]spec{
	"setup":           {keys: []string{"members", "ttl"}},
	"client":          {client: true, keys: []string{"member"}},
	"acquire":         {client: true, keys: []string{"answer", "next"}, flags: []string{"async"}},
	"cs":              {client: true, keys: []string{"work"}, flags: []string{"async"}},
	"release":         {client: true, keys: []string{"answer", "grant"}, flags: []string{"async"}},
	"await":           {client: true},
	"pause":           {client: true, keys: []string{"at"}},
	"wait-paused":     {client: true},
	"resume":          {client: true},
	"cut":             {client: true, keys: []string{"for", "member"}},
	"delay":           {client: true, keys: []string{"by"}},
	"hold-answers":    {client: true, keys: []string{"for"}},
	"isolate":         {keys: []string{"member"}},
	"kill":            {keys: []string{"member"}},
	"crash":           {client: true},
	"heal":            {},
	"expire":          {client: true, keys: []string{"mode"}},
	"wait-lease-gone": {client: true},
	"wait-queued":     {client: true},
	"wait-told":       {client: true},
	"wait-free":       {},
	"wait-served":     {},
	"failover":        {},
	"jump-clock":      {client: true, orMember: true, keys: []string{"member", "offset"}},
	"drift-clock":     {client: true, orMember: true, keys: []string{"member", "rate"}},
	"restart":         {keys: []string{"member"}},
	"check":           {},
}

// required are the keys a command cannot do without.
var required = map[string][]string{"client": {"member"}, "pause": {"at"}, "delay": {"by"}, "isolate": {"member"},
	"kill": {"member"}, "hold-answers": {"for"}, "jump-clock": {"offset"}, "drift-clock": {"rate"}, "restart": {"member"}}

// Commands lists the script commands, sorted.
func Commands() []string {
	var names []string
	for n := range specs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ParseLine reads one command line ("acquire c2 async"), checking the
// command, its arguments and their values.
func ParseLine(line string) (Cmd, error) {
	name, args, err := datadriven.ParseLine(line)
	if err != nil {
		return Cmd{}, err
	}
	return scan(name, args)
}

// scan checks a parsed command line and takes its values.
func scan(name string, args []datadriven.CmdArg) (Cmd, error) {
	sp, ok := specs[name]
	if !ok {
		return Cmd{}, fmt.Errorf("unknown command %q (commands: %s)", name, strings.Join(Commands(), ", "))
	}
	c := Cmd{Name: name}
	kv := map[string]string{}
	for _, x := range args {
		switch {
		case len(x.Vals) == 0 && slices.Contains(sp.flags, x.Key):
			c.Async = true
		case len(x.Vals) == 0 && sp.client && c.Client == "":
			if err := history.CheckName("client", x.Key); err != nil {
				return Cmd{}, fmt.Errorf("%s: %w", name, err)
			}
			c.Client = x.Key
		case len(x.Vals) == 0:
			return Cmd{}, fmt.Errorf("%s: unexpected argument %q%s", name, x.Key, sp.accepts())
		case !slices.Contains(sp.keys, x.Key):
			return Cmd{}, fmt.Errorf("%s: unknown argument %q%s", name, x.Key, sp.accepts())
		case len(x.Vals) != 1 || x.Vals[0] == "":
			return Cmd{}, fmt.Errorf("%s: %s: want one value", name, x.Key)
		default:
			leader := name == "kill" && x.Key == "member" && x.Vals[0] == Leader // whichever member leads then
			if err := checks[x.Key](x.Vals[0]); err != nil && !leader {
				return Cmd{}, fmt.Errorf("%s: %s=%s: %w", name, x.Key, x.Vals[0], err)
			}
			kv[x.Key] = x.Vals[0]
		}
	}
	switch {
	case sp.orMember && c.Client != "" && kv["member"] != "":
		return Cmd{}, fmt.Errorf("%s: want a client name or member=…, not both%s", name, sp.accepts())
	case sp.orMember && c.Client == "" && kv["member"] == "":
		return Cmd{}, fmt.Errorf("%s: want a client name or member=…%s", name, sp.accepts())
	case sp.client && !sp.orMember && c.Client == "":
		return Cmd{}, fmt.Errorf("%s: want a client name%s", name, sp.accepts())
	}
	for _, k := range required[name] {
		if kv[k] == "" {
			return Cmd{}, fmt.Errorf("%s: want %s=…%s", name, k, sp.accepts())
		}
	}
	switch {
	case kv["answer"] != "" && name == "acquire" && c.Async:
		return Cmd{}, fmt.Errorf("%s: answer=lost waits for the server to show the acquire's key, in the foreground: it takes no async", name)
	case kv["next"] != "" && (c.Async || kv["answer"] != ""):
		return Cmd{}, fmt.Errorf("%s: next=lost waits for the request after the acquire's write, in the foreground: it takes no async or answer=", name)
	case kv["answer"] != "" && (kv["grant"] != "" || c.Async):
		return Cmd{}, fmt.Errorf("%s: answer=lost releases the latest grant, in the foreground: it takes no grant= or async", name)
	}
	c.Member, c.At, c.Mode, c.Answer, c.Next, c.Grant = kv["member"], kv["at"], kv["mode"], kv["answer"], kv["next"], kv["grant"]
	c.For, _ = time.ParseDuration(cmp.Or(kv["for"], "0"))
	c.Work, _ = time.ParseDuration(cmp.Or(kv["work"], "0"))
	c.By, _ = time.ParseDuration(cmp.Or(kv["by"], "0"))
	c.Offset, _ = time.ParseDuration(cmp.Or(kv["offset"], "0"))
	c.Rate, _ = strconv.ParseFloat(cmp.Or(kv["rate"], "0"), 64)
	c.Members, _ = strconv.Atoi(kv["members"])
	c.TTL, _ = strconv.Atoi(kv["ttl"])
	return c, nil
}

// accepts lists what a command takes, for an error message.
func (sp spec) accepts() string {
	var parts []string
	switch {
	case sp.orMember:
		parts = append(parts, "CLIENT or")
	case sp.client:
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

// String is the command as a script writes it.
func (c Cmd) String() string {
	parts := []string{c.Name}
	if c.Client != "" {
		parts = append(parts, c.Client)
	}
	for _, kv := range [][2]string{
		{"members", itoa(c.Members)}, {"ttl", itoa(c.TTL)}, {"member", c.Member}, {"at", c.At},
		{"mode", c.Mode}, {"answer", c.Answer}, {"next", c.Next}, {"grant", c.Grant}, {"for", durationOrEmpty(c.For)},
		{"work", durationOrEmpty(c.Work)}, {"by", durationOrEmpty(c.By)}, {"offset", signedOrEmpty(c.Offset)},
		{"rate", rateOrEmpty(c.Rate)},
	} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	if c.Async {
		parts = append(parts, "async")
	}
	return strings.Join(parts, " ")
}

func rateOrEmpty(r float64) string {
	if r == 0 {
		return ""
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func signedOrEmpty(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return history.Signed(d)
}

func durationOrEmpty(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func itoa(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

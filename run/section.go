package run

import (
	"context"
	"errors"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/pausegate"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
)

// InSection is a client in its critical section, as CriticalSection needs it.
type InSection struct {
	Client string
	Grant  lock.Grant
	// Conn is the client's own connection to its store, for a resource
	// the store keeps (nil on a store with none): if the client crashes in
	// the section, what is left of it dies with that connection.
	Conn resource.Conn
	// Work is how long the client works between its reads and its writes.
	Work time.Duration
	// OpTimeout bounds each read and each write.
	OpTimeout time.Duration
	// PausePoint passes the before-write pause point: an error (the
	// client crashed, pausegate.ErrCrashed, or the run ended) means it
	// writes nothing.
	PausePoint func(context.Context) error
}

// CriticalSection runs c's critical section on every resource of hs at once: read
// each counter, work, pass the before-write pause point, write each
// counter+1 with the grant's token. Each history records it as one
// operation. The holder does not look at its lease meanwhile — a real one
// does not either. An operation blocked by a pause may outlive the
// timeout; that is the point.
func CriticalSection(ctx context.Context, hs Histories, c InSection) (Outcome, error) {
	cctx, cancel := context.WithTimeout(ctx, c.OpTimeout)
	defer cancel()
	ids := make([]int, len(hs))
	reads := make([]*int64, len(hs))
	errs := make([]error, len(hs))
	for i, h := range hs {
		ids[i] = h.rec.Invoke(c.Client, history.CS, history.Event{Lock: "lock"})
		v, err := h.res.Read(cctx, c.Conn, c.Grant)
		if err == nil {
			reads[i] = &v
		}
		errs[i] = err
	}
	Work(ctx, c.Work)
	pauseErr := c.PausePoint(ctx)
	out := Outcome{Kind: Section, Client: c.Client}
	for i, h := range hs {
		ev := history.Event{Token: c.Grant.Token, Value: reads[i]}
		err := errs[i]
		if err == nil && pauseErr != nil {
			err = pauseErr
			if errors.Is(pauseErr, pausegate.ErrCrashed) {
				err = history.Definite(pauseErr) // it died before writing
			}
		}
		var wr resource.Written
		if err == nil {
			wctx, wcancel := context.WithTimeout(ctx, c.OpTimeout)
			ev.WriteAt = max(h.rec.Since(time.Now()), 1)
			wr, err = h.res.Write(wctx, c.Conn, c.Grant, *reads[i]+1)
			wcancel()
		}
		if err == nil {
			ev.Accepted, ev.Reason = &wr.Accepted, wr.Reason
		}
		h.rec.Complete(ids[i], Classify(err), ev)
		f, detail := failureOf(err)
		out.Writes = append(out.Writes, Write{Resource: h.res.Name(), Read: reads[i], Failure: f, Detail: detail, Written: wr})
	}
	return out, errors.Join(errs...)
}

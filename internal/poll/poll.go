package poll

import (
	"context"
	"fmt"
	"time"
)

// Until asks cond every interval until it reports true or ctx ends. The
// error says what was waited for and, if cond ever failed, its last error.
// An error from cond does not end the wait: the next ask may succeed.
func Until(ctx context.Context, what string, interval time.Duration, cond func(context.Context) (bool, error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("waiting for %s: %w (last: %v)", what, ctx.Err(), last)
			}
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
}

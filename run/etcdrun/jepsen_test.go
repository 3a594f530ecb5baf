package etcdrun

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/models"
)

var (
	jepsen      = flag.Duration("jepsen", 0, "run the Jepsen comparison for this long (e.g. 60s); off by default")
	jepsenPoint = flag.String("jepsen-point", cluster.AnyPoint, "where pauses freeze a client: any, or a pause point such as before-write")
	jepsenLock  = flag.String("jepsen-lock", "etcd-mutex", "the lock under test: a built-in lock, or exec:COMMAND")
)

// TestJepsenComparison runs the configuration Jepsen measured on etcd 3.4.3
// (2 s TTL, 5 clients, a process paused every 5 s; about 18% of acknowledged
// updates lost) with etcd's own Mutex on an unfenced counter, and logs the
// fraction of acknowledged increments lost. It is a soak, off by default:
//
//	go test ./run -run JepsenComparison -jepsen 60s -v
//	go test ./run -run JepsenComparison -jepsen 60s -jepsen-point before-write -v
//	go test ./run -run JepsenComparison -jepsen 60s -jepsen-lock etcdctl -v
func TestJepsenComparison(t *testing.T) {
	if *jepsen == 0 {
		t.Skip("pass -jepsen DURATION to run")
	}
	c, err := cluster.Start(t.Context(), cluster.Config{})
	require.NoError(t, err)
	defer c.Close()
	factory, err := etcdlock.Lookup(*jepsenLock)
	require.NoError(t, err)
	env, err := New(Config{Cluster: c, Factory: factory, TTL: 2,
		RunID: "jepsen", Resource: []string{"unfenced"}})
	require.NoError(t, err)
	defer env.Close()
	ctx, cancel := context.WithTimeout(t.Context(), *jepsen)
	defer cancel()
	clients := []string{"c1", "c2", "c3", "c4", "c5"}
	for i, name := range clients {
		require.NoError(t, env.AddClient(t.Context(), name, c.Members()[i%3]))
	}
	var wg sync.WaitGroup
	for _, name := range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				env.Cycle(ctx, name)
			}
		})
	}
	r := rand.New(rand.NewPCG(1, 2))
	pauses := 0
	for ctx.Err() == nil {
		if !sleepFor(ctx, 5*time.Second) {
			break
		}
		name := clients[r.IntN(len(clients))]
		pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
		in, err := env.Fault(pctx, faults.Fault{Kind: faults.PauseClient, Client: name, Point: *jepsenPoint})
		pcancel()
		if err != nil {
			continue
		}
		pauses++
		sleepFor(ctx, 3*time.Second) // longer than the 2 s TTL and the lessor's 0.5 s tick
		in.Undo(context.WithoutCancel(ctx))
	}
	env.nemesis.UndoAll(context.Background())
	wg.Wait()
	final, err := env.final(context.Background(), env.runs.Resource(0))
	require.NoError(t, err)
	env.runs.Final(0, final)
	events := env.Events(0)
	report, err := env.Reports()
	require.NoError(t, err)
	lost := report[0].LostFraction
	require.NotNil(t, lost)
	acked, info := 0, 0
	for _, op := range history.Pair(events) {
		if op.Op == history.CS && op.Type == history.Ok && (op.Accepted == nil || *op.Accepted) {
			acked++
		}
		if op.Op == history.CS && op.Type == history.Info {
			info++
		}
	}
	t.Logf("%v, %d pauses at %s: %d acknowledged increments, %d unknown, final counter %d: %.1f%% lost; safety %s, belief %s",
		*jepsen, pauses, *jepsenPoint, acked, info, final, 100**lost, report[0].Result(), report[0].Belief.Result)
	for _, v := range report[0].Safety {
		if v.Result == models.Fail {
			t.Logf("%s: %s %v", v.Check, v.Explanation, v.Evidence)
		}
	}
	fmt.Printf("jepsen-comparison lost=%.3f\n", *lost)
}

func sleepFor(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

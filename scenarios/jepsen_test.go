package scenarios

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
	"github.com/locklab/locklab/lock"
)

var jepsen = flag.Duration("jepsen", 0, "run the Jepsen comparison for this long (e.g. 60s); off by default")

// TestJepsenComparison runs the configuration Jepsen measured on etcd 3.4.3
// (2 s TTL, 5 clients, a process paused every 5 s; about 18% of acknowledged
// updates lost) with etcd's own Mutex on an unfenced counter, and logs the
// fraction of acknowledged increments lost. It is a soak, off by default:
//
//	go test ./scenarios -run JepsenComparison -jepsen 60s -v
func TestJepsenComparison(t *testing.T) {
	if *jepsen == 0 {
		t.Skip("pass -jepsen DURATION to run")
	}
	c, err := cluster.Start(t.Context(), cluster.Config{})
	require.NoError(t, err)
	defer c.Close()
	env, err := NewEnv(EnvConfig{Cluster: c, Lock: "etcd-mutex", Factory: lock.NewMutex, TTL: 2,
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
				env.cycle(ctx, name)
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
		in, err := env.Fault(pctx, faults.Fault{Kind: faults.PauseClient, Client: name, Point: cluster.AnyPoint})
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
	events := env.Events(0)
	lost := lostFraction(events)
	require.NotNil(t, lost)
	report, err := env.Reports()
	require.NoError(t, err)
	t.Logf("%v, %d pauses: %.1f%% of acknowledged increments lost; counter %s, belief %s",
		*jepsen, pauses, 100**lost, report[0].Result(), report[0].Belief.Result)
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

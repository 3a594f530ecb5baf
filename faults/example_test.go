package faults_test

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/faults"
)

// A store applies a fault through Windows: the window opens before the
// fault is done and closes when it is undone, each edge recorded with what
// the fault resolved to.
func ExampleWindows_Apply() {
	ctx := context.Background()
	w := faults.NewWindows(faults.RecorderFunc(func(e faults.Event) {
		fmt.Printf("%d %s %s target=%q\n", e.ID, e.Phase, e.Fault.Kind, e.Target)
	}))
	in, err := w.Apply(ctx, faults.Fault{Kind: faults.KillLeader}, func(ctx context.Context, in *faults.Injection) error {
		in.SetTarget("m2") // the member that led when the fault came
		in.SetUndo(func(context.Context) error { fmt.Println("m2 started again"); return nil })
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("active:", len(w.Active()))
	_ = in.Undo(ctx)
	fmt.Println("active:", len(w.Active()))
	// Output:
	// 1 start kill-leader target=""
	// active: 1
	// m2 started again
	// 1 end kill-leader target="m2"
	// active: 0
}

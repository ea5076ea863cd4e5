package workflow_test

import (
	"context"
	"fmt"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// tally is an entity workflow: each run handles a batch, then hands its
// running total to a successor with a fresh log.
var tally = workflow.Define("example.tally", func(ctx workflow.Context, total int) (int, error) {
	next, err := shout.Call(ctx, "batch") // the batch's work
	if err != nil {
		return 0, err
	}
	if total += len(next); total < 15 {
		return 0, workflow.ContinueAsNew(ctx, total)
	}
	return total, nil
})

// A run continues as new until its work is done; Result on the first run's
// handle returns the last run's result.
func ExampleContinueAsNew() {
	w := memory.New()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)

	run, err := workflow.Start(ctx, workflow.NewClient(w), tally, 0, workflow.WithRunID("tally-1"))
	if err != nil {
		panic(err)
	}
	fmt.Println(run.Result(ctx))
	first, _ := w.GetRun(ctx, run.ID)
	fmt.Println(first.Status, string(first.Output))
	// Output:
	// 15 <nil>
	// continued "tally-1~g2"
}

package workflow_test

import (
	"context"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// reindex declares an hour: more than any invocation of a worker whose
// invocations live 15 minutes, as a Lambda function's do.
var reindex = workflow.DefineStep("example.reindex", func(ctx context.Context, index string) (string, error) {
	return "reindexed " + index, nil
}, workflow.WithTimeout(time.Hour))

var nightly = workflow.Define("example.nightly", func(ctx workflow.Context, index string) (string, error) {
	return reindex.Call(ctx, index)
})

// A worker with a time limit (on Lambda, the flow function) sends the
// runs whose next step fits none of its invocations to its
// LongStepQueue; a Worker without one, on any machine, serves that queue
// (Queue) on the same World and runs the step. On AWS the queue is the
// stack's LongStepQueue: the flow function gets it from
// WORKFLOW_LONG_STEP_QUEUE_URL, and the Worker outside Lambda opens it
// with aws.FromEnv and (*aws.World).LongStepQueue (examples/longsteps).
func ExampleWorkerOptions_longStepQueue() {
	w := memory.New()
	long := memory.New() // a queue apart from w's: only its queue is used
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{MaxInvocation: 15 * time.Minute, LongStepQueue: long}).Run(ctx)
	go workflow.NewWorker(w, workflow.WorkerOptions{Queue: long}).Run(ctx)

	run, err := workflow.Start(ctx, workflow.NewClient(w), nightly, "orders")
	if err != nil {
		panic(err)
	}
	fmt.Println(run.Result(ctx))
	// Output:
	// reindexed orders <nil>
}

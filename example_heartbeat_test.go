package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// importRows imports rows in batches, heartbeating how many are done. Its
// first attempt fails after two batches; the retry reads the heartbeat and
// carries on from there instead of importing them again.
var importRows = workflow.DefineStep("example.import", func(ctx context.Context, rows int) (string, error) {
	done := 0
	if _, err := workflow.HeartbeatDetails(ctx, &done); err != nil {
		return "", workflow.Fatal(err)
	}
	from := done
	info, _ := workflow.GetStepInfo(ctx)
	for ; done < rows; done += 100 {
		if info.Attempt == 1 && done == 200 {
			return "", errors.New("connection reset")
		}
		if err := workflow.Heartbeat(ctx, done+100); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("attempt %d imported rows %d to %d", info.Attempt, from, done), nil
}, workflow.WithTimeout(10*time.Minute), workflow.WithHeartbeatTimeout(time.Minute),
	workflow.WithBackoff(func(int) time.Duration { return 10 * time.Millisecond }))

var importJob = workflow.Define("example.importJob", func(ctx workflow.Context, rows int) (string, error) {
	return importRows.Call(ctx, rows)
})

// A step declares how long it may take (WithTimeout: where an invocation
// has a deadline, it starts only where it fits) and heartbeats its
// progress, which a retry resumes from.
func ExampleHeartbeat() {
	w := memory.New()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)

	run, err := workflow.Start(ctx, workflow.NewClient(w), importJob, 500)
	if err != nil {
		panic(err)
	}
	fmt.Println(run.Result(ctx))
	// Output:
	// attempt 2 imported rows 200 to 500 <nil>
}

package workflow_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/memory"
)

var stoppedWorkerSteps atomic.Int64

var countedStep = workflow.DefineStep("test.counted", func(_ context.Context, s string) (string, error) {
	stoppedWorkerSteps.Add(1)
	return s, nil
})

var countedOnce = workflow.Define("test.countedOnce", func(ctx workflow.Context, s string) (string, error) {
	return countedStep.Call(ctx, s)
})

// A worker whose context is done starts no more work: a message it takes
// as it stops (the memory World hands a visible message over on a done
// context) goes back to the queue at once, and the stopped worker runs
// none of its run's steps. A stopped worker that drove a run on would run
// it with code and step implementations its deployment has replaced.
func TestStoppedWorkerStartsNothing(t *testing.T) {
	ctx := t.Context()
	stoppedWorkerSteps.Store(0)
	w := memory.New()
	run, err := workflow.Start(ctx, workflow.NewClient(w), countedOnce, "once")
	if err != nil {
		t.Fatal(err)
	}
	stopped, stop := context.WithCancel(ctx)
	stop()
	worker := workflow.NewWorker(w, workflow.WorkerOptions{})
	// Serve chooses at random between its stop and its next receive, so
	// try often enough that a worker that takes the message is all but
	// certain to be caught.
	for range 30 {
		if err := worker.Run(stopped); err != nil {
			t.Fatal(err)
		}
	}
	if n := stoppedWorkerSteps.Load(); n != 0 {
		t.Fatalf("a stopped worker ran %d steps", n)
	}
	// Released, not hidden for its visibility timeout: a live worker
	// drives the run at once.
	live, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	go func() { _ = worker.Run(live) }()
	if got, err := run.Result(live); got != "once" || err != nil {
		t.Fatalf("Result = %q, %v, want the run driven by a live worker", got, err)
	}
}

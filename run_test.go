package workflow_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/workflowtest"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// A run's lifecycle beyond replay: its event limit and its cancellation.

var endless = workflow.Define("test.endless", func(ctx workflow.Context, _ struct{}) (int, error) {
	for i := 0; ; i++ {
		if _, err := double.Call(ctx, i); err != nil {
			return 0, err
		}
	}
})

func TestEventLimitFailsTheRun(t *testing.T) {
	env := workflowtest.New(t, workflowtest.MaxEvents(50))
	run := workflowtest.Start(env, endless, struct{}{})
	_, err := run.Result()
	if !errors.Is(err, workflow.ErrMaxEventsExceeded) {
		t.Fatalf("err = %v, want ErrMaxEventsExceeded", err)
	}
	if n := len(run.Events()); n > 51 {
		t.Fatalf("log grew to %d events past a limit of 50", n)
	}
}

var stepSawCancel = make(chan error, 1)
var stepStarted = make(chan struct{}, 1)

var blocking = workflow.DefineStep("test.blocking", func(ctx context.Context, _ struct{}) (int, error) {
	stepStarted <- struct{}{}
	<-ctx.Done()
	stepSawCancel <- ctx.Err()
	return 0, ctx.Err()
})

var cancellable = workflow.Define("test.cancellable", func(ctx workflow.Context, _ struct{}) (int, error) {
	return blocking.Call(ctx, struct{}{})
})

func TestCancelReachesARunningStep(t *testing.T) {
	w := memory.New()
	c := workflow.NewClient(w)
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	run, err := workflow.Start(ctx, c, cancellable, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	<-stepStarted
	if err := run.Cancel(ctx, "customer changed their mind"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-stepSawCancel:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("step context ended with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the running step never saw the cancellation")
	}
	_, err = run.Result(ctx)
	var cancelled *workflow.RunCancelledError
	if !errors.As(err, &cancelled) || cancelled.Reason != "customer changed their mind" || !errors.Is(err, workflow.ErrRunCancelled) {
		t.Fatalf("err = %v", err)
	}
	if err := run.Cancel(ctx, "again"); !errors.Is(err, workflow.ErrRunFinished) {
		t.Fatalf("cancelling twice: %v", err)
	}
}

package flowtest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// Overtaking is the rule a world.RunReader keeps: the engine reads the run
// before it takes the run's lease and checks that read against the slot
// the lease reports, so what another invocation writes between the two (a
// step's result, before it released the lease) is read after the lease,
// and the step is not run again.
type Overtaking struct {
	// World starts the run and runs it to its end after the scenario.
	World world.World
	// Reader wraps World so that after runs once, right after its first
	// ReadRun returns (the wrapper must keep World's optional interfaces:
	// embed the World's own type).
	Reader func(after func()) world.World
	// Other is another process on World's store; it runs the run's step
	// and suspends it on a hook between the reader's read and its lease.
	Other world.World
	// Before and After, if set, run just before and just after the
	// overtaken invocation, for a World's own checks (its calls, say).
	Before, After func()
}

var overtakenSteps atomic.Int64

var overtakenStep = workflow.DefineStep("flowtest.overtaken-step", func(ctx context.Context, n int) (int, error) {
	overtakenSteps.Add(1)
	return n + 1, nil
})

var overtakenFlow = workflow.Define("flowtest.overtaken", func(ctx workflow.Context, token string) (int, error) {
	n, err := overtakenStep.Call(ctx, 0)
	if err != nil {
		return 0, err
	}
	_, err = workflow.CreateHook[string](ctx, workflow.WithToken(token)).Receive(ctx)
	return n, err
})

// RunOvertaking starts a run, has o.Other run its step while an invocation
// on o.Reader sits between its read and its lease, checks that the step
// ran once, and resumes the run to its end.
func RunOvertaking(t *testing.T, o Overtaking) {
	ctx, stop := context.WithTimeout(t.Context(), time.Minute)
	defer stop()
	token := unique("flowtest-overtaken")
	run, err := workflow.Start(ctx, workflow.NewClient(o.World), overtakenFlow, token)
	if err != nil {
		t.Fatal(err)
	}
	overtakenSteps.Store(0)
	var otherErr error
	reader := o.Reader(func() {
		otherErr = workflow.NewWorker(o.Other, workflow.WorkerOptions{}).Process(ctx, run.ID)
	})
	if o.Before != nil {
		o.Before()
	}
	if err := workflow.NewWorker(reader, workflow.WorkerOptions{}).Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if otherErr != nil {
		t.Fatal(otherErr)
	}
	if n := overtakenSteps.Load(); n != 1 {
		t.Fatalf("the step ran %d times, want once", n)
	}
	if o.After != nil {
		o.After()
	}
	if err := workflow.ResumeHook(ctx, workflow.NewClient(o.World), token, "go"); err != nil {
		t.Fatal(err)
	}
	go workflow.NewWorker(o.World, workflow.WorkerOptions{}).Run(ctx)
	if got, err := run.Result(ctx); err != nil || got != 1 {
		t.Fatalf("got %d, %v; want 1", got, err)
	}
}

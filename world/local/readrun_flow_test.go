package local_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/local"
)

// readSpy is the embedded World running after (once) right after a
// ReadRun, before the invocation that read asks for the lease.
type readSpy struct {
	*local.World
	once  sync.Once
	after func()
}

func (w *readSpy) ReadRun(ctx context.Context, id string, after int64) (world.Run, []world.Event, []world.InboxMessage, bool, error) {
	run, events, inbox, complete, err := w.World.ReadRun(ctx, id, after)
	w.once.Do(w.after)
	return run, events, inbox, complete, err
}

var overtakenSteps atomic.Int64

var overtakenStep = workflow.DefineStep("local-test.overtaken-step", func(ctx context.Context, n int) (int, error) {
	overtakenSteps.Add(1)
	return n + 1, nil
})

var overtakenFlow = workflow.Define("local-test.overtaken", func(ctx workflow.Context, token string) (int, error) {
	n, err := overtakenStep.Call(ctx, 0)
	if err != nil {
		return 0, err
	}
	_, err = workflow.CreateHook[string](ctx, workflow.WithToken(token)).Receive(ctx)
	return n, err
})

// A run started in the World that serves the queue is read from memory,
// as it was at its start; another process that runs its step (and waits
// on its hook) between that read and the lease is not missed: the lease
// reports the slots it wrote, and the step is not run again.
func TestAnInvocationOvertakenAfterItsReadRunsNoStepTwice(t *testing.T) {
	for name, opts := range map[string][]local.Option{"default": nil, "full sync": {local.WithFullSync()}} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			w := open(t, dir, opts...)
			ctx, stop := context.WithTimeout(t.Context(), time.Minute)
			defer stop()
			serve, served := context.WithTimeout(ctx, 10*time.Millisecond)
			if _, err := w.Receive(serve, time.Minute); err == nil {
				t.Fatal("received a message from an empty queue")
			}
			served() // the World serves its directory's queue now, as a worker's does
			run, err := workflow.Start(ctx, workflow.NewClient(w), overtakenFlow, "overtaken-"+name)
			if err != nil {
				t.Fatal(err)
			}
			other := open(t, dir, opts...) // another process on the same directory
			overtakenSteps.Store(0)
			var otherErr error
			reader := &readSpy{World: w, after: func() {
				otherErr = workflow.NewWorker(other, workflow.WorkerOptions{}).Process(ctx, run.ID)
			}}
			if err := workflow.NewWorker(reader, workflow.WorkerOptions{}).Process(ctx, run.ID); err != nil {
				t.Fatal(err)
			}
			if otherErr != nil {
				t.Fatal(otherErr)
			}
			if n := overtakenSteps.Load(); n != 1 {
				t.Fatalf("the step ran %d times, want once", n)
			}
			if err := workflow.ResumeHook(ctx, workflow.NewClient(w), "overtaken-"+name, "go"); err != nil {
				t.Fatal(err)
			}
			go workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
			if got, err := run.Result(ctx); err != nil || got != 1 {
				t.Fatalf("got %d, %v; want 1", got, err)
			}
		})
	}
}

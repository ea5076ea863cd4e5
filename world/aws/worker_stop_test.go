package aws

import (
	"context"
	"crypto/rand"
	"sync"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
)

// stopStarted tells TestStoppedWorkerHandsOverItsRun that the step it
// interrupts is running; stopCalled holds the inputs awsStoppable has seen.
var (
	stopStarted = make(chan struct{}, 1)
	stopCalled  sync.Map
)

// awsStoppable's first call with an input runs until its worker stops;
// later calls return the input at once. The first call, not the first
// attempt: the second worker may read the log before the first worker's
// write of attempt 1, cut short by its stop, lands, and run attempt 1
// again.
var awsStoppable = workflow.DefineStep("aws-test.stoppable", func(ctx context.Context, id string) (string, error) {
	if _, called := stopCalled.LoadOrStore(id, true); called {
		return id, nil
	}
	stopStarted <- struct{}{}
	<-ctx.Done()
	return "", ctx.Err()
})

var awsStoppableFlow = workflow.Define("aws-test.stoppable-flow", func(ctx workflow.Context, id string) (string, error) {
	return awsStoppable.Call(ctx, id)
})

// handover bounds how long a run may wait for a second worker after the
// first stops: far below the default visibility timeout of 5 minutes,
// which is how long a message taken and not processed stays hidden.
const handover = 30 * time.Second

// runWorker runs a worker on w until the returned stop is called, which
// waits for it to return.
func runWorker(w *World) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = workflow.NewWorker(w, workflow.WorkerOptions{}).Run(ctx)
	}()
	return func() { cancel(); <-done }
}

// A worker stopped while it waits in a long poll takes no message: a run
// started right after is picked up at once by another worker.
func TestStoppedWorkerTakesNoMessage(t *testing.T) {
	w := newTestWorld(t)
	stop := runWorker(w)
	time.Sleep(500 * time.Millisecond) // the worker is in its long poll
	stop()

	ctx, cancel := context.WithTimeout(t.Context(), handover)
	defer cancel()
	run, err := workflow.Start(ctx, workflow.NewClient(w), awsChain, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer runWorker(w)()
	if got, err := run.Result(ctx); err != nil || got != 1 {
		t.Fatalf("Result = %d, %v; want 1 within %v of a worker's stop", got, err, handover)
	}
}

// A worker stopped in the middle of a run releases its message, so another
// worker finishes the run without waiting out the visibility timeout.
func TestStoppedWorkerHandsOverItsRun(t *testing.T) {
	w := newTestWorld(t)
	stop := runWorker(w)
	ctx, cancel := context.WithTimeout(t.Context(), handover)
	defer cancel()
	id := rand.Text()
	run, err := workflow.Start(ctx, workflow.NewClient(w), awsStoppableFlow, id)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopStarted:
	case <-ctx.Done():
		t.Fatal("the step never started")
	}
	stop()

	defer runWorker(w)()
	if got, err := run.Result(ctx); err != nil || got != id {
		t.Fatalf("Result = %q, %v; want %q within %v of the first worker's stop", got, err, id, handover)
	}
}

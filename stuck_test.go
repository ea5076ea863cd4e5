package workflow_test

import (
	"context"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world/local"
)

var stuckInc = workflow.DefineStep("test.stuck.inc", func(_ context.Context, n int) (int, error) { return n + 1, nil })

var stuckOnce = workflow.Define("test.stuck.once", func(ctx workflow.Context, n int) (int, error) {
	return stuckInc.Call(ctx, n)
})

// Worker.Run checks for stuck runs by itself: on the embedded World, a run
// whose message was taken off the queue unprocessed moves again, re-queued
// by the serving worker's own check, with no CheckStuck call.
func TestRunChecksForStuckRuns(t *testing.T) {
	w, err := local.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	run, err := workflow.Start(ctx, workflow.NewClient(w), stuckOnce, 41)
	if err != nil {
		t.Fatal(err)
	}
	lost, err := w.Receive(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Ack(ctx, lost); err != nil { // the start's message is gone
		t.Fatal(err)
	}
	// A threshold the test can wait out; the worker checks every third of it.
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = workflow.NewWorker(w, workflow.WorkerOptions{StuckAfter: 300 * time.Millisecond}).Run(ctx)
	}()
	got, err := run.Result(ctx)
	cancel()
	<-served
	if err != nil || got != 42 {
		t.Fatalf("the run whose message was lost: %d, %v; want 42", got, err)
	}
}

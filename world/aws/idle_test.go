package aws

import (
	"testing"

	"github.com/lambdaworkflow/workflow"
)

// A delivery for a run waiting on a hook, with nothing new in its log since
// this worker suspended it, costs one read of the run: no log read, no
// lease, no replay.
func TestNothingNewCostsOneRead(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	worker := workflow.NewWorker(w, workflow.WorkerOptions{})
	run, err := workflow.Start(ctx, workflow.NewClient(w), awsWaiter, "aws-idle:"+t.Name())
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	w.ResetCalls()
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	calls := w.Calls()
	var total int64
	for _, n := range calls {
		total += n
	}
	if total != 1 {
		t.Errorf("a delivery with nothing new made %v, want one read of the run", calls)
	}
}

// A delivery for a run that ended, once this worker saw its end through,
// costs one read of the run too: its streams are not closed again, its
// hooks and slot not released again.
func TestEndedRunCostsOneRead(t *testing.T) {
	w := newTestWorld(t)
	ctx := t.Context()
	c := workflow.NewClient(w)
	worker := workflow.NewWorker(w, workflow.WorkerOptions{})
	token := "aws-ended:" + t.Name()
	run, err := workflow.Start(ctx, c, awsWaiter, token)
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if err := workflow.ResumeHook(ctx, c, token, "now"); err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := run.Result(ctx); err != nil || got != "now" {
		t.Fatalf("Result = %q, %v; want \"now\"", got, err)
	}
	w.ResetCalls()
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if calls := w.Calls(); len(calls) != 1 || calls["DynamoDB.Query"] != 1 {
		t.Errorf("a delivery for the ended run made %v, want one read of the run", calls)
	}
}

package aws

import (
	"context"
	"testing"

	"github.com/lambdaworkflow/workflow"
)

var awsWarmAdd = workflow.DefineStep("aws-test.warm.add", func(ctx context.Context, n int) (int, error) { return n + 1, nil })

// awsWarmHistory runs n steps, then notes each number sent to its hook
// through a step of its own.
var awsWarmHistory = workflow.Define("aws-test.warm.history", func(ctx workflow.Context, n int) (int, error) {
	for i := range n {
		if _, err := awsWarmAdd.Call(ctx, i); err != nil {
			return 0, err
		}
	}
	h := workflow.CreateHook[int](ctx, workflow.WithToken("aws-warm:"+ctx.RunID()))
	for {
		v, err := h.Receive(ctx)
		if err != nil {
			return 0, err
		}
		if _, err := awsWarmAdd.Call(ctx, v); err != nil {
			return 0, err
		}
	}
})

// readUnitsPerResume builds a run's history of steps, then resumes it
// twice and returns the DynamoDB read units the worker's second
// invocation consumed (the resume call's own reads are not counted), and
// the history's length.
func readUnitsPerResume(t *testing.T, w *World, steps int, opts workflow.WorkerOptions) (float64, int64) {
	t.Helper()
	ctx := t.Context()
	worker := workflow.NewWorker(w, opts)
	c := workflow.NewClient(w)
	run, err := workflow.Start(ctx, c, awsWarmHistory, steps)
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Process(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	var units float64
	for i := range 2 {
		if err := workflow.ResumeHook(ctx, c, "aws-warm:"+run.ID, i); err != nil {
			t.Fatal(err)
		}
		w.ResetCalls()
		if err := worker.Process(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		units = w.Units().Read
	}
	info, err := w.GetRun(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	return units, info.LastSlot
}

// On a warm worker a resume reads what is new, not the history: the read
// units of a resume after 2,000 events are those after 10, where a worker
// with nothing warm reads the whole log.
func TestWarmResumeReadUnits(t *testing.T) {
	w := newTestWorld(t)
	short, shortLen := readUnitsPerResume(t, w, 2, workflow.WorkerOptions{})
	long, longLen := readUnitsPerResume(t, w, 666, workflow.WorkerOptions{})
	cold, _ := readUnitsPerResume(t, w, 666, workflow.WorkerOptions{WarmRuns: -1})
	t.Logf("read units per resume: %.1f after %d events, %.1f after %d warm, %.1f cold", short, shortLen, long, longLen, cold)
	if long > short+1 {
		t.Errorf("a warm resume after %d events read %.1f units, after %d events %.1f: want no more", longLen, long, shortLen, short)
	}
	if cold < 10*long {
		t.Errorf("a resume without the warm cache read %.1f units, a warm one %.1f: the test does not see the history's cost", cold, long)
	}
}

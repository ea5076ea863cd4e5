package workflow_test

import (
	"context"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
	"github.com/lambdaworkflow/workflow/world/memory"
)

// Start refuses a workflow that was not made with Define: no worker could
// run it, so storing it would leave a run stuck forever.
func TestStartRefusesAnUndefinedWorkflow(t *testing.T) {
	w := memory.New()
	c := workflow.NewClient(w)
	for name, wf := range map[string]*workflow.Workflow[int, int]{"zero": {}, "nil": nil} {
		if run, err := workflow.Start(context.Background(), c, wf, 1); err == nil {
			t.Errorf("Start(%s Workflow) = run %s, want an error", name, run.ID)
		}
	}
	if page, err := w.ListRuns(context.Background(), world.RunFilter{}); err != nil || len(page.Runs) != 0 {
		t.Errorf("ListRuns = %+v, %v; want no run stored", page.Runs, err)
	}
}

package flowtest

import (
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// lateChild is the child lateChildParent starts and leaves running.
var lateChild = workflow.Define("flowtest.lateChild", func(_ workflow.Context, s string) (string, error) {
	return "child of " + s, nil
})

// lateChildParent starts a child as the last thing it does, without
// waiting for it: the child must start, and the parent's log record it,
// though the run ends in the same pass.
var lateChildParent = workflow.Define("flowtest.lateChildParent", func(ctx workflow.Context, childID string) (string, error) {
	if _, err := stuckStep.Call(ctx, 1); err != nil {
		return "", err
	}
	lateChild.StartChild(ctx, childID, workflow.WithRunID(childID))
	return "started", nil
})

// childStartedJustBeforeReturn: a child started in the workflow's last
// pass, right before it returns, runs like one started earlier, and the
// parent's log records its creation before the run's end.
func childStartedJustBeforeReturn(t *testing.T, e *env) {
	childID := unique("late-child")
	run := start(t, e, lateChildParent, childID)
	if got := result(t, e, run); got != "started" {
		t.Fatalf("parent returned %q, want started", got)
	}
	if got := result(t, e, workflow.RunOf[string](e.client, childID)); got != "child of "+childID {
		t.Fatalf("the child returned %q, want %q", got, "child of "+childID)
	}
	events, err := e.world.Events(e.ctx, run.ID, 0)
	if err != nil {
		t.Fatalf("read the log: %v", err)
	}
	if n := countEvents(events, world.ChildCreated); n != 1 || events[len(events)-1].Type != world.RunCompleted {
		t.Fatalf("the parent's log holds %d child_created events and ends with %s, want 1 and run_completed", n, events[len(events)-1].Type)
	}
}

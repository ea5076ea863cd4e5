package workflowtest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

// daily wakes once a day and carries its count into a fresh run each time.
var daily = workflow.Define("wt.daily", func(ctx workflow.Context, days int) (int, error) {
	workflow.Sleep(ctx, 24*time.Hour)
	if days == 3 {
		return days + 1, nil
	}
	return 0, workflow.ContinueAsNew(ctx, days+1)
})

func TestContinueAsNewOnTheFakeClock(t *testing.T) {
	env := workflowtest.New(t)
	start := env.Now()
	run := workflowtest.Start(env, daily, 0)
	got, err := run.Result()
	if err != nil || got != 4 {
		t.Fatalf("Result on the first run's handle: %d, %v; want 4 from the chain's fourth run", got, err)
	}
	if passed := env.Now().Sub(start); passed < 4*24*time.Hour {
		t.Fatalf("the clock moved %v, want the 4 days the chain slept", passed)
	}
	first, err := env.World.GetRun(context.Background(), run.ID)
	if err != nil || first.Status != "continued" {
		t.Fatalf("the first run is %q (%v), want continued", first.Status, err)
	}
	if tl := run.Timeline(); len(env.Events(run.ID)) > 6 {
		t.Fatalf("the first run's log holds more than its own day:\n%s", tl)
	}
}

func TestCancelOnTheFirstHandleCancelsTheLatestRun(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, daily, 0)
	env.Advance(36 * time.Hour) // the first run continued; the second sleeps
	if err := run.Cancel(context.Background(), "enough"); err != nil {
		t.Fatalf("Cancel on the first run's handle: %v", err)
	}
	if _, err := run.Result(); !errors.Is(err, workflow.ErrRunCancelled) {
		t.Fatalf("Result after Cancel: %v, want the chain's run cancelled", err)
	}
}

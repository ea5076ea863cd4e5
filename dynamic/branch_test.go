package dynamic_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/dynamic"
)

var meetings atomic.Int64

// meet returns only once three attempts are in it at the same time, so
// branches that ran one after another would never get past it.
var meet = workflow.DefineStep("dyntest.meet", func(ctx context.Context, name string) (string, error) {
	meetings.Add(1)
	for deadline := time.Now().Add(10 * time.Second); meetings.Load() < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return "", workflow.Fatal(fmt.Errorf("%s met %d branches, want 3 at once", name, meetings.Load()))
		}
	}
	return name, nil
})

// Functions spawned as branches run beside each other, each through its
// own steps and sleeps, and join returns their results in spawn order; a
// branch's failure reaches the join with the branch's line. Every sleep
// suspends the run, so the branches are replayed after each.
func TestSpawnedFunctionsRunAsBranches(t *testing.T) {
	ctx, c := serve(t, workflow.WorkerOptions{DynamicWorkflows: true, InlineWait: -1})
	code := `
def branch(name):
    first = steps.meet(name)
    sleep("1ms")
    if name == "boom":
        fail("branch " + name + " failed")
    return steps.up(first)

def workflow(names):
    return join([spawn(branch, n) for n in names])
`
	steps := dynamic.Steps{"meet": meet, "up": upper}
	run, err := dynamic.Start[[]string](ctx, c, code, steps, []string{"a", "b", "c"}, dynamic.WithEnabled(true))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run.Result(ctx); strings.Join(out, ",") != "A,B,C" || err != nil {
		t.Errorf("the branches returned %v, %v, want A,B,C", out, err)
	}

	meetings.Store(0)
	run, err = dynamic.Start[[]string](ctx, c, code, steps, []string{"a", "boom", "c"}, dynamic.WithEnabled(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Result(ctx); err == nil || !strings.Contains(err.Error(), "branch boom failed") || !strings.Contains(err.Error(), "workflow.star:6:13: in branch") {
		t.Errorf("a failing branch ended the run with %v, want its failure at workflow.star:6:13", err)
	}
}

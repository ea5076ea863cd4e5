package flowtest

import (
	"strconv"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/world"
)

// taggedAtTheEnd sets an attribute as the last thing it does: the write
// must reach the run (its listing and its log) in the same append as the
// run's end.
var taggedAtTheEnd = workflow.Define("flowtest.taggedAtTheEnd", func(ctx workflow.Context, tag string) (string, error) {
	if err := workflow.SetAttributes(ctx, map[string]string{"first": tag}); err != nil {
		return "", err
	}
	n, err := stuckStep.Call(ctx, 1)
	if err != nil {
		return "", err
	}
	return "done", workflow.SetAttributes(ctx, map[string]string{"last": tag, "n": strconv.Itoa(n)})
})

// attributesSetJustBeforeReturn: attributes set in the workflow's last
// pass, right before it returns, are kept like those set earlier.
func attributesSetJustBeforeReturn(t *testing.T, e *env) {
	tag := unique("tag")
	run := start(t, e, taggedAtTheEnd, tag)
	if got := result(t, e, run); got != "done" {
		t.Fatalf("run returned %q, want done", got)
	}
	want := map[string]string{"first": tag, "last": tag, "n": "2"}
	page, err := e.client.ListRuns(e.ctx, workflow.RunFilter{Workflow: taggedAtTheEnd.Name(), Attributes: map[string]string{"last": tag}})
	if err != nil {
		t.Fatalf("ListRuns: %v", err)
	}
	if len(page.Runs) != 1 || page.Runs[0].ID != run.ID {
		t.Fatalf("ListRuns by the attribute set before return found %v, want run %s", page.Runs, run.ID)
	}
	if got := page.Runs[0].Attributes; !subset(want, got) {
		t.Fatalf("run's attributes %v, want %v among them", got, want)
	}
	events, err := e.world.Events(e.ctx, run.ID, 0)
	if err != nil {
		t.Fatalf("read the log: %v", err)
	}
	var set int
	for _, ev := range events {
		if ev.Type == world.AttributesSet {
			set++
		}
	}
	if set != 2 || events[len(events)-1].Type != world.RunCompleted {
		t.Fatalf("log holds %d attributes_set events and ends with %s, want 2 and run_completed", set, events[len(events)-1].Type)
	}
}

func subset(want, got map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

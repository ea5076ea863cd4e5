package workflow_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

// listener takes messages for ever.
var listener = workflow.Define("test.listener", func(ctx workflow.Context, token string) (int, error) {
	n := 0
	for _, err := range workflow.CreateHook[int](ctx, workflow.WithToken(token)).All(ctx) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
})

// Resumes from outside the run keep to its event limit: once the log is
// full a resume fails with ErrMaxEventsExceeded and writes nothing, and
// the run then fails with the same cause instead of replaying a log
// without end.
func TestResumesStopAtTheEventLimit(t *testing.T) {
	const limit = 20
	env := workflowtest.New(t, workflowtest.MaxEvents(limit))
	run := workflowtest.Start(env, listener, "inbox")
	env.RunUntilIdle()
	accepted := 0
	var err error
	for range 2 * limit {
		if err = workflow.ResumeHook(context.Background(), env.Client, "inbox", 1); err != nil {
			break
		}
		accepted++
	}
	if !errors.Is(err, workflow.ErrMaxEventsExceeded) {
		t.Fatalf("after %d resumes: err = %v, want ErrMaxEventsExceeded", accepted, err)
	}
	if n := len(run.Events()); n != limit {
		t.Fatalf("the log holds %d events after the resumes, want exactly the limit %d", n, limit)
	}
	if _, err := run.Result(); !errors.Is(err, workflow.ErrMaxEventsExceeded) {
		t.Fatalf("run = %v, want ErrMaxEventsExceeded", err)
	}
}

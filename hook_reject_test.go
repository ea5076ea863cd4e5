package workflow_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lambdaworkflow/workflow"
	"github.com/lambdaworkflow/workflow/workflowtest"
)

// patient skips messages it cannot decode and answers the first good one.
var patient = workflow.Define("reply.patient", func(ctx workflow.Context, token string) (int, error) {
	h := workflow.CreateRespondingHook[Query, Quote](ctx, workflow.WithToken(token))
	skipped := 0
	for m, err := range h.All(ctx) {
		if err != nil {
			skipped++
			continue
		}
		_, err := quote.Call(ctx, m)
		return skipped, err
	}
	return skipped, nil
})

// A message the workflow cannot decode into the hook's type is refused to
// its caller at once, with ErrHookMessageRejected, not left to wait for a
// reply until the caller's timeout; the run goes on and answers the next.
func TestUndecodableMessageIsRejectedToItsCaller(t *testing.T) {
	env := workflowtest.New(t)
	run := workflowtest.Start(env, patient, "patient:1")
	env.RunUntilIdle()
	// Far more than a rejection takes, far less than the test's patience.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var bad, good error
	var got Quote
	env.While(func() {
		_, bad = workflow.ResumeRespondingHook[string, Quote](ctx, env.Client, "patient:1", "not a query")
		got, good = workflow.ResumeRespondingHook[Query, Quote](ctx, env.Client, "patient:1", Query{SKU: "abc", Qty: 1})
	})
	if !errors.Is(bad, workflow.ErrHookMessageRejected) {
		t.Fatalf("resume with an undecodable message: err = %v, want ErrHookMessageRejected", bad)
	}
	if good != nil || got.Price != 10 {
		t.Fatalf("the next, good message got %+v, %v", got, good)
	}
	if skipped, err := run.Result(); err != nil || skipped != 1 {
		t.Fatalf("run = %d skipped, %v; want 1", skipped, err)
	}
}
